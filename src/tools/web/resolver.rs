//! The DNS resolver of fetch_web_page's HTTP client: it resolves a name and hands the client only
//! addresses the [`AddressPolicy`] allows, refusing the whole name when any address is not. The
//! client connects to exactly the addresses checked here, so a name that resolves to a public
//! address when checked and to a private one when connected to (DNS rebinding) cannot slip
//! through. Addresses written in the URL never reach a resolver: the fetch checks those itself.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};

use super::net_guard::AddressPolicy;

/// Why a name gave no address to connect to: the resolver's error type. The fetch finds it in a
/// failed request's error chain and reports it in its own words.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    /// The lookup failed.
    #[error("could not resolve `{name}`: {source}")]
    Lookup {
        /// The name.
        name: String,
        /// The system's error.
        source: std::io::Error,
    },
    /// The lookup found nothing.
    #[error("`{0}` has no address")]
    NoAddress(String),
    /// The name resolves to an address the policy refuses.
    #[error("`{name}` resolves to {ip}, {why}")]
    Refused {
        /// The name.
        name: String,
        /// The refused address.
        ip: IpAddr,
        /// Why it is refused.
        why: &'static str,
    },
}

/// Resolves names with the system resolver, then filters the addresses through a policy.
#[derive(Clone, Debug)]
pub struct GuardedResolver {
    policy: Arc<AddressPolicy>,
}

impl GuardedResolver {
    /// A resolver that allows what `policy` allows.
    pub fn new(policy: AddressPolicy) -> Self {
        Self {
            policy: Arc::new(policy),
        }
    }
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let name = name.as_str().to_string();
        Box::pin(async move {
            // Port 0: the client puts in the URL's port.
            let addrs = checked_addresses(&policy, &name).await?;
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The addresses of `name`, all of them allowed by `policy`.
async fn checked_addresses(
    policy: &AddressPolicy,
    name: &str,
) -> Result<Vec<SocketAddr>, ResolveError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, 0))
        .await
        .map_err(|source| ResolveError::Lookup {
            name: name.to_string(),
            source,
        })?
        .collect();
    if addrs.is_empty() {
        return Err(ResolveError::NoAddress(name.to_string()));
    }
    // One refused address refuses the name: the client might pick any of them.
    if let Some((ip, why)) = addrs
        .iter()
        .find_map(|a| policy.refusal(a.ip()).map(|why| (a.ip(), why)))
    {
        return Err(ResolveError::Refused {
            name: name.to_string(),
            ip,
            why,
        });
    }
    Ok(addrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn localhost_is_refused_unless_allowed_or_excepted() {
        let refused = checked_addresses(&AddressPolicy::default(), "localhost").await;
        match refused {
            Err(ResolveError::Refused { why, .. }) => assert_eq!(why, "a loopback address"),
            other => panic!("expected a refusal, got {other:?}"),
        }
        let allowed = AddressPolicy {
            allow_private: true,
            exceptions: Vec::new(),
        };
        let addrs = checked_addresses(&allowed, "localhost").await;
        assert!(addrs.is_ok_and(|a| a.iter().all(|a| a.ip().is_loopback())));
    }
}
