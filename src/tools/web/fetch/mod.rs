//! `fetch_web_page`: one public web page as title, readable text and links.
//!
//! One pooled HTTP client serves every call. Its DNS resolver ([`GuardedResolver`]) hands it only
//! addresses the [`AddressPolicy`] allows, and it connects to exactly those, so DNS rebinding
//! cannot slip through; an address written in the URL is checked here before the request.
//! Redirects are followed by hand, each hop checked the same way.

mod error;
mod page;

use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::html_parse::ParseLimits;
use super::net_guard::AddressPolicy;
use super::resolver::GuardedResolver;
use super::settings::WebSettings;
use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args, to_usize};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture};
pub use error::FetchError;
use page::{Answer, kind_of};

/// Characters of text returned when the model does not say.
pub const DEFAULT_MAX_CHARS: u64 = 8_000;
/// At most this many bytes of a body are read.
pub const DEFAULT_MAX_BYTES: usize = 2 * 1024 * 1024;
/// At most this many redirects are followed.
pub const MAX_REDIRECTS: usize = 5;
/// At most this many links are listed.
pub const MAX_LINKS: usize = 20;
/// The most characters of text one call may ask for.
const MAX_CHARS: u64 = 200_000;

/// The arguments of `fetch_web_page`.
#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// The http(s) URL.
    url: String,
    /// At most this many characters of text (default 8000).
    max_chars: Option<u64>,
}

/// The `fetch_web_page` tool.
#[derive(Clone, Debug)]
pub struct FetchTool {
    settings: WebSettings,
    policy: AddressPolicy,
    max_bytes: usize,
    parse_limits: ParseLimits,
    /// Built at the first call and shared by every later one (and by clones of the tool).
    client: Arc<OnceLock<reqwest::Client>>,
}

impl FetchTool {
    /// A fetch tool with these settings and the default size cap.
    pub fn new(settings: WebSettings) -> Self {
        let policy = AddressPolicy {
            allow_private: settings.allow_private_fetch,
            exceptions: settings.private_exceptions.clone(),
        };
        Self {
            settings,
            policy,
            max_bytes: DEFAULT_MAX_BYTES,
            parse_limits: ParseLimits::default(),
            client: Arc::default(),
        }
    }

    /// The same tool with other HTML parse limits (nodes, depth, attribute bytes, time).
    pub fn with_parse_limits(mut self, limits: ParseLimits) -> Self {
        self.parse_limits = limits;
        self
    }
}

impl Tool for FetchTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "fetch_web_page".into(),
            description: "Fetch a public web page (http or https) and return its title, readable \
                text (scripts, navigation, headers and footers removed) and first links with \
                absolute URLs. Plain text and JSON come back as text. Local and private network \
                addresses are refused."
                .into(),
            parameters: parameters_of::<FetchArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    // Read-only, but it reaches the network: the `ask` mode asks first.
    fn needs_approval(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let FetchArgs {
                url: raw,
                max_chars,
            } = parse_args(args)?;
            let raw = raw.trim();
            let max_chars = to_usize(max_chars.unwrap_or(DEFAULT_MAX_CHARS).clamp(1, MAX_CHARS));
            let url = Url::parse(raw).map_err(|source| FetchError::BadUrl {
                raw: raw.to_string(),
                source,
            })?;
            let (response, url) = self.follow(url).await?;
            self.read(response, url, max_chars, &ctx.cancel).await
        })
    }
}

impl FetchTool {
    /// Requests `url`, following redirects hop by hop, each checked; returns the final answer
    /// and its URL.
    async fn follow(&self, mut url: Url) -> Result<(reqwest::Response, Url), FetchError> {
        let client = self.client()?;
        for hop in 0..=MAX_REDIRECTS {
            let redirected = hop > 0;
            self.check_target(&url, redirected)?;
            let response = client
                .get(url.clone())
                .send()
                .await
                .map_err(|source| FetchError::of_request(&url, redirected, source))?;
            if !response.status().is_redirection() {
                return Ok((response, url));
            }
            let Some(location) = response
                .headers()
                .get(reqwest::header::LOCATION)
                .and_then(|v| v.to_str().ok())
            else {
                return Err(FetchError::NoLocation {
                    url: url.to_string(),
                    status: response.status(),
                });
            };
            url = url
                .join(location)
                .map_err(|source| FetchError::BadRedirect {
                    url: url.to_string(),
                    location: location.to_string(),
                    source,
                })?;
        }
        Err(FetchError::TooManyRedirects(url.to_string()))
    }

    /// The scheme, and an address written in the URL (names are checked by the resolver).
    fn check_target(&self, url: &Url, redirected: bool) -> Result<(), FetchError> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(FetchError::Scheme(other.to_string())),
        }
        let ip = match url.host() {
            None => return Err(FetchError::NoHost(url.to_string())),
            Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
            Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
            Some(url::Host::Domain(_)) => return Ok(()),
        };
        match self.policy.refusal(ip) {
            Some(why) => Err(FetchError::refused(url, ip, why, redirected)),
            None => Ok(()),
        }
    }

    /// The pooled client, built at the first call (a failed build is tried again next call).
    fn client(&self) -> Result<&reqwest::Client, FetchError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let built = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect to the name itself, bypassing the address checks.
            .no_proxy()
            .dns_resolver(Arc::new(GuardedResolver::new(self.policy.clone())))
            .timeout(self.settings.timeout)
            .connect_timeout(self.settings.timeout)
            .user_agent(concat!(
                "MiniClaw/",
                env!("CARGO_PKG_VERSION"),
                " (fetch_web_page)"
            ))
            .build()
            .map_err(FetchError::Client)?;
        // Two first calls at once may both build one; the first stored is kept.
        Ok(self.client.get_or_init(|| built))
    }

    /// Reads at most the size cap of the body and turns it into text.
    async fn read(
        &self,
        mut response: reqwest::Response,
        url: Url,
        max_chars: usize,
        cancel: &CancellationToken,
    ) -> Result<Map<String, Value>, ToolError> {
        let status = response.status();
        if !status.is_success() {
            return Err(FetchError::Status {
                url: url.to_string(),
                status,
            }
            .into());
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let body = page::read_body(&mut response, &url, self.max_bytes).await?;
        let Some(kind) = kind_of(&content_type, &body.bytes) else {
            return Err(FetchError::Unreadable {
                url: url.to_string(),
                content_type,
            }
            .into());
        };
        let decoded = page::decode(
            body.bytes,
            content_type.clone(),
            kind,
            url.clone(),
            self.parse_limits,
            cancel,
        )
        .await?;
        let answer = Answer {
            url,
            status,
            content_type,
            kind,
            size_capped: body.capped,
            max_bytes: self.max_bytes,
        };
        Ok(page::report(answer, decoded, max_chars))
    }
}
