//! Why a fetch failed: the fetch layer's error type. Transport errors keep their source chain;
//! their text names the URL once and then every cause, as the model always saw it. URLs are kept
//! as their text: it is all the messages need, and it keeps the error small.

use std::net::IpAddr;

use url::Url;

use super::MAX_REDIRECTS;
use crate::tools::error::ToolError;
use crate::tools::web::resolver::ResolveError;

/// A fetch that could not produce a page.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// The argument is not a URL (the model's mistake: an invalid argument).
    #[error("`{raw}` is not a URL ({source})")]
    BadUrl {
        /// The text given.
        raw: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// A scheme other than http and https.
    #[error("refused: `{0}:` URLs are not fetched; only http and https")]
    Scheme(String),
    /// A URL without a host.
    #[error("`{0}` has no host")]
    NoHost(String),
    /// The URL's host is, or resolves to, an address the policy refuses.
    #[error(
        "refused: {via}`{url}` resolves to {ip}, {why}; fetch_web_page only reaches public \
         addresses (MINICLAW_ALLOW_PRIVATE_FETCH=1 allows private ones)"
    )]
    Refused {
        /// `"the redirect to "` when a redirect led there, else empty.
        via: &'static str,
        /// The URL.
        url: String,
        /// The refused address.
        ip: IpAddr,
        /// Why it is refused.
        why: &'static str,
    },
    /// The host's name could not be resolved: the resolver's words, the request's error behind.
    #[error("{reason}")]
    Unresolved {
        /// What the resolver said.
        reason: String,
        /// The request's error, whose chain holds the resolver's.
        source: reqwest::Error,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The request got no answer.
    #[error("fetching {url} failed: {}", plain(.source))]
    Request {
        /// The URL.
        url: String,
        /// The transport error.
        source: reqwest::Error,
    },
    /// A redirect without a Location.
    #[error("{url} answered HTTP {status} without a Location to go to")]
    NoLocation {
        /// The URL.
        url: String,
        /// The redirect status.
        status: reqwest::StatusCode,
    },
    /// A redirect to something that is not a URL.
    #[error("{url} redirects to a bad URL `{location}` ({source})")]
    BadRedirect {
        /// The URL.
        url: String,
        /// The Location given.
        location: String,
        /// Why it does not parse.
        source: url::ParseError,
    },
    /// More redirects than allowed.
    #[error("too many redirects (more than {MAX_REDIRECTS}); stopped at {0}")]
    TooManyRedirects(String),
    /// An error status.
    #[error("{url} answered HTTP {status}")]
    Status {
        /// The URL.
        url: String,
        /// The status.
        status: reqwest::StatusCode,
    },
    /// The body could not be read to its end (or its cap).
    #[error("reading {url} failed: {}", plain(.source))]
    Read {
        /// The URL.
        url: String,
        /// The transport error.
        source: reqwest::Error,
    },
    /// A content type that is not HTML, text or JSON.
    #[error(
        "{url} is `{content_type}`, which fetch_web_page cannot read (HTML, text and JSON only)"
    )]
    Unreadable {
        /// The URL.
        url: String,
        /// The content type given.
        content_type: String,
    },
}

impl FetchError {
    /// The error of a request that failed: the resolver's refusal or lookup failure when that is
    /// what stopped it (found in the error's source chain), else the transport error.
    pub(super) fn of_request(url: &Url, redirected: bool, source: reqwest::Error) -> Self {
        let resolver = resolve_error_in(&source).map(|e| match e {
            ResolveError::Refused { ip, why, .. } => Ok((*ip, *why)),
            other => Err(other.to_string()),
        });
        match resolver {
            Some(Ok((ip, why))) => Self::refused(url, ip, why, redirected),
            Some(Err(reason)) => Self::Unresolved { reason, source },
            None => Self::Request {
                url: url.to_string(),
                source,
            },
        }
    }

    /// The refusal of `url`, whose host is or resolves to `ip`.
    pub(super) fn refused(url: &Url, ip: IpAddr, why: &'static str, redirected: bool) -> Self {
        Self::Refused {
            via: if redirected { "the redirect to " } else { "" },
            url: url.to_string(),
            ip,
            why,
        }
    }
}

impl From<FetchError> for ToolError {
    fn from(e: FetchError) -> Self {
        match e {
            FetchError::BadUrl { .. } => ToolError::InvalidArguments(e.to_string()),
            other => ToolError::failed(other.to_string()),
        }
    }
}

/// The resolver's error somewhere in `e`'s source chain.
fn resolve_error_in(e: &reqwest::Error) -> Option<&ResolveError> {
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        if let Some(found) = s.downcast_ref::<ResolveError>() {
            return Some(found);
        }
        source = s.source();
    }
    None
}

/// A transport error without the URL (already shown) and with its cause.
fn plain(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "it timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}
