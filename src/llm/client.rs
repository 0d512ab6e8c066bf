//! HTTP client for streamed chat completions: request body, retries with backoff, stream reading.
//! (Interface fixed; the body is being written in the `llm` work.)

use std::time::Duration;

use super::presets::Preset;
use super::types::{ChatMessage, Completion, StreamEvent, ToolSchema};

/// What the client reports while a request runs.
#[derive(Clone, Debug, PartialEq)]
pub enum ClientEvent {
    /// Something the stream said.
    Stream(StreamEvent),
    /// A retryable failure; the next attempt starts after `delay`.
    Retrying {
        /// The attempt about to start (2 = first retry).
        attempt: u32,
        /// The most attempts there will be.
        max_attempts: u32,
        /// How long until it starts.
        delay: Duration,
        /// What went wrong, for the status line.
        reason: String,
    },
}

/// How failed requests are retried.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Total attempts, the first included.
    pub max_attempts: u32,
    /// The first backoff delay; it doubles each time (with jitter).
    pub base_delay: Duration,
    /// The longest delay, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// Why a request failed, phrased for the person reading it.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No API key was configured.
    #[error("no API key: set DEEPSEEK_API_KEY in the environment or in a .env file")]
    MissingKey,
    /// The server answered with an error status.
    #[error("{}", http_error_text(*status, message))]
    Http {
        /// The HTTP status.
        status: u16,
        /// The server's own message.
        message: String,
    },
    /// The connection failed or broke.
    #[error("network error: {0}")]
    Transport(String),
    /// No data arrived for too long (keep-alives do not count).
    #[error("the model server sent no data for {0:?}; the stream was abandoned")]
    IdleTimeout(Duration),
    /// The stream ended without `data: [DONE]`.
    #[error("the stream closed before it was complete")]
    StreamCut,
    /// A chunk was not valid JSON of the expected shape.
    #[error("the model server sent a malformed chunk: {0}")]
    Malformed(String),
    /// The client could not be built (bad base URL and the like).
    #[error("client set-up failed: {0}")]
    Setup(String),
}

/// Names the cause of an HTTP error and what to do about it.
fn http_error_text(status: u16, message: &str) -> String {
    let cause = match status {
        400 => "the request was rejected as invalid (400)",
        401 => "the API key was rejected (401): check DEEPSEEK_API_KEY in the environment or .env",
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

/// A client for one OpenAI-compatible server.
#[derive(Clone, Debug)]
pub struct LlmClient {
    base_url: String,
    api_key: Option<String>,
    retry: RetryPolicy,
    idle_timeout: Duration,
    http: reqwest::Client,
}

impl LlmClient {
    /// A client for `base_url` (e.g. `https://api.deepseek.com`); the key is kept private.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| LlmError::Setup(e.to_string()))?;
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key,
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            http,
        })
    }

    /// Replaces the retry policy.
    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Replaces the idle timeout of a stream.
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// Whether a key is configured.
    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Streams one chat completion, reporting each piece through `on_event`, and returns the whole.
    pub async fn chat(
        &self,
        preset: &Preset,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<Completion, LlmError> {
        let _ = (
            preset,
            messages,
            tools,
            on_event,
            &self.http,
            &self.base_url,
        );
        let _ = (&self.retry, self.idle_timeout);
        if self.api_key.is_none() {
            return Err(LlmError::MissingKey);
        }
        Err(LlmError::Setup("not yet implemented".into()))
    }
}
