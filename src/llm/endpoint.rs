//! Where each configured provider's requests go and the key that goes with them: a base URL and
//! its key are held together, so a key can only ever be sent to its own provider's server.

use std::collections::BTreeMap;

use super::catalog::Providers;
use super::error::LlmError;
use crate::secrets::Secret;

/// One provider's server and key.
#[derive(Clone)]
struct Endpoint {
    base_url: String,
    /// The variable the key comes from (none: requests carry no key).
    key_var: Option<String>,
    key: Option<Secret>,
}

/// The configured providers' endpoints by name, and the catalog they came from.
#[derive(Clone, Default)]
pub struct Endpoints {
    catalog: Providers,
    by_name: BTreeMap<String, Endpoint>,
}

impl std::fmt::Debug for Endpoints {
    // Written by hand so a key can never reach a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let list: Vec<(&String, &String, bool)> = self
            .by_name
            .iter()
            .map(|(name, e)| (name, &e.base_url, e.key.is_some()))
            .collect();
        f.debug_struct("Endpoints").field("by_name", &list).finish()
    }
}

impl Endpoints {
    /// The endpoints of `catalog`, each key read once with `key_of` (given the variable's name).
    pub fn new(catalog: Providers, key_of: &dyn Fn(&str) -> Option<String>) -> Self {
        let by_name = catalog
            .configured()
            .iter()
            .map(|p| {
                let key = p.key_var.as_deref().and_then(key_of);
                let endpoint = Endpoint {
                    base_url: p.base_url.trim_end_matches('/').to_string(),
                    key_var: p.key_var.clone(),
                    key: key.filter(|k| !k.trim().is_empty()).map(Secret::new),
                };
                (p.name.clone(), endpoint)
            })
            .collect();
        Self { catalog, by_name }
    }

    /// The providers these endpoints serve.
    pub fn catalog(&self) -> &Providers {
        &self.catalog
    }

    /// The base URL of `provider`'s requests and the key they carry (none when the provider
    /// names no key variable); an error when it is not configured or its key is not set.
    pub fn route(&self, provider: &str) -> Result<(&str, Option<&Secret>), LlmError> {
        let Some(endpoint) = self.by_name.get(provider) else {
            return Err(LlmError::UnknownProvider {
                name: provider.to_string(),
                known: self.catalog.names().join(", "),
            });
        };
        match (&endpoint.key_var, &endpoint.key) {
            (None, _) => Ok((&endpoint.base_url, None)),
            (Some(_), Some(key)) => Ok((&endpoint.base_url, Some(key))),
            (Some(var), None) => Err(LlmError::MissingProviderKey {
                provider: provider.to_string(),
                var: var.clone(),
            }),
        }
    }
}
