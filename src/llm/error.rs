//! Why a model request failed, phrased for the person reading it: the error types, the text of
//! an HTTP error status, and a transport failure in plain words (the key always redacted).

use std::time::Duration;

use super::retry::redact;
use super::types::Completion;

/// Why a request failed, phrased for the person reading it.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No API key was configured.
    #[error(
        "no API key: set DEEPSEEK_API_KEY in {} (the recommended place), in the environment, or in ./.env",
        crate::secrets::recommended_key_file()
    )]
    MissingKey,
    /// A configured provider's key variable is not set.
    #[error(
        "no API key for provider `{provider}`: set {var} in {} (the recommended place), in the environment, or in ./.env",
        crate::secrets::recommended_key_file()
    )]
    MissingProviderKey {
        /// The provider.
        provider: String,
        /// The variable its key is read from.
        var: String,
    },
    /// A provider that is not configured was named.
    #[error(
        "unknown provider `{name}`; the providers are: {known} (add one as [providers.NAME] in config.toml, or in the miniclaw.toml of a folder you trusted)"
    )]
    UnknownProvider {
        /// The name given.
        name: String,
        /// The providers there are.
        known: String,
    },
    /// The server answered with an error status.
    #[error("{}", http_error_text(*status, message))]
    Http {
        /// The HTTP status.
        status: u16,
        /// The server's own message.
        message: String,
    },
    /// The connection failed or broke.
    #[error("network error: {message}")]
    Transport {
        /// What happened, in plain words (the key redacted).
        message: String,
        /// The HTTP library's error, or the direct stream's, when there was one (for logs; its
        /// chain names the cause).
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
    /// No data arrived for too long (keep-alives do not count).
    #[error("the model server sent no data for {0:?}; the stream was abandoned")]
    IdleTimeout(Duration),
    /// The server kept the request queued (keep-alives, no data) past the bound.
    #[error(
        "the model server kept the request queued for {} min without starting it (it is busy)",
        .0.as_secs().div_ceil(60)
    )]
    QueuedTooLong(Duration),
    /// The stream ended without `data: [DONE]`.
    #[error("the stream closed before it was complete")]
    StreamCut,
    /// One event (or one line) of the stream grew past the cap without ending: a body without
    /// line breaks, say. The request fails at once rather than buffering until the idle timeout.
    #[error(
        "the model server sent an event over {cap} bytes without ending it; the stream was abandoned"
    )]
    EventTooLarge {
        /// The cap, in bytes.
        cap: usize,
    },
    /// The server reported an error inside the stream.
    #[error("{0}")]
    InStream(String),
    /// A chunk was not valid JSON of the expected shape.
    #[error("the model server sent a malformed chunk: {0}")]
    Malformed(String),
    /// The request was cancelled (the person interrupted the turn).
    #[error("the request was cancelled")]
    Cancelled,
    /// The client could not be built (bad base URL and the like).
    #[error("client set-up failed: {message}")]
    Setup {
        /// What went wrong.
        message: String,
        /// The underlying error, when there was one.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

impl LlmError {
    /// A transport failure described in plain words, keeping `source` in the chain.
    pub(super) fn transport(source: reqwest::Error, key: &str) -> Self {
        Self::Transport {
            message: describe(&source, key),
            source: Some(Box::new(source)),
        }
    }

    /// A body's failure, read through reqwest or directly.
    pub(super) fn wire(source: super::reply::WireError, key: &str) -> Self {
        match source {
            super::reply::WireError::Http(e) => Self::transport(e, key),
            super::reply::WireError::Direct(e) => Self::direct(&e, key),
        }
    }

    /// A direct stream's failure, the key redacted.
    pub(super) fn direct(error: &super::reply::DirectError, key: &str) -> Self {
        Self::Transport {
            message: redact(&error.to_string(), Some(key)),
            source: Some(Box::new(error.redacted(key))),
        }
    }

    /// A direct stream's request that could not be made, the key redacted.
    pub(super) fn direct_setup(error: &super::reply::DirectError, key: &str) -> Self {
        Self::Setup {
            message: redact(&error.to_string(), Some(key)),
            source: None,
        }
    }

    /// The connections' thread dropped a request without an answer.
    pub(super) fn wire_lost() -> Self {
        Self::Transport {
            message: "the request was lost before an answer came".into(),
            source: None,
        }
    }

    /// A set-up failure caused by `source`.
    pub(super) fn setup(
        message: String,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> Self {
        Self::Setup {
            message,
            source: Some(Box::new(source)),
        }
    }
}

/// A chat that did not complete: why, and what of the answer had arrived (reasoning, text and
/// whole tool calls), so the caller keeps no copy of its own.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct ChatError {
    /// Why it stopped ([`LlmError::Cancelled`] when interrupted).
    pub error: LlmError,
    /// What arrived before it stopped (empty when nothing did).
    pub partial: Completion,
}

impl From<LlmError> for ChatError {
    fn from(error: LlmError) -> Self {
        Self {
            error,
            partial: Completion::default(),
        }
    }
}

/// Names the cause of an HTTP error and what to do about it.
fn http_error_text(status: u16, message: &str) -> String {
    let rejected;
    let cause = match status {
        400 => "the request was rejected as invalid (400)",
        401 => {
            rejected = format!(
                "the API key was rejected (401): check DEEPSEEK_API_KEY (best kept in {})",
                crate::secrets::recommended_key_file()
            );
            rejected.as_str()
        }
        402 => "insufficient balance (402): top up your DeepSeek account",
        422 => "invalid request parameters (422)",
        429 => "rate limited (429): too many requests",
        500 => "the model server had an internal error (500)",
        503 => "the model server is overloaded (503)",
        _ => "the model server answered with an error",
    };
    if message.is_empty() {
        format!("{cause} [HTTP {status}]")
    } else {
        format!("{cause} [HTTP {status}]: {message}")
    }
}

/// A transport error in plain words plus its root cause, the key redacted.
pub(super) fn describe(error: &reqwest::Error, key: &str) -> String {
    let origin = error
        .url()
        .map(|u| u.origin().ascii_serialization())
        .unwrap_or_else(|| "the model server".to_string());
    let lead = if error.is_connect() {
        format!("could not connect to {origin}")
    } else if error.is_timeout() {
        format!("timed out talking to {origin}")
    } else if error.is_body() || error.is_decode() {
        format!("the connection to {origin} broke while reading the response")
    } else {
        format!("the request to {origin} failed")
    };
    // reqwest's own text hides the cause; the deepest source says what actually happened.
    let mut root = std::error::Error::source(error);
    while let Some(next) = root.and_then(|r| r.source()) {
        root = Some(next);
    }
    let text = match root {
        Some(cause) => format!("{lead}: {cause}"),
        None => format!("{lead}: {error}"),
    };
    redact(&text, Some(key))
}
