//! HTTP client for streamed chat completions: request body, retries with backoff, stream reading.

use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::accumulate::Accumulator;
use super::chunk::{ChunkError, decode_chunk};
use super::presets::Preset;
use super::retry::{
    RetryPolicy, delay_before, error_message, is_retryable_status, parse_retry_after, redact,
};
use super::sse::{Frame, SseParser};
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

/// Why a request failed, phrased for the person reading it.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// No API key was configured.
    #[error(
        "no API key: set DEEPSEEK_API_KEY in {} (the recommended place), in the environment, or in ./.env",
        crate::secrets::recommended_key_file()
    )]
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
    #[error("network error: {message}")]
    Transport {
        /// What happened, in plain words (the key redacted).
        message: String,
        /// The HTTP library's error, when there was one (for logs; its chain names the cause).
        #[source]
        source: Option<reqwest::Error>,
    },
    /// No data arrived for too long (keep-alives do not count).
    #[error("the model server sent no data for {0:?}; the stream was abandoned")]
    IdleTimeout(Duration),
    /// The stream ended without `data: [DONE]`.
    #[error("the stream closed before it was complete")]
    StreamCut,
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
    fn transport(source: reqwest::Error, key: &str) -> Self {
        Self::Transport {
            message: describe(&source, key),
            source: Some(source),
        }
    }

    /// A set-up failure caused by `source`.
    fn setup(message: String, source: impl std::error::Error + Send + Sync + 'static) -> Self {
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

/// A client for one OpenAI-compatible server; cheap to clone (the HTTP pool is shared).
#[derive(Clone)]
pub struct LlmClient {
    base_url: String,
    api_key: Option<String>,
    retry: RetryPolicy,
    idle_timeout: Duration,
    http: reqwest::Client,
}

impl std::fmt::Debug for LlmClient {
    // Written by hand so the key can never reach a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// How one attempt failed, whether another may follow, and what had arrived.
struct Failure {
    error: LlmError,
    retryable: bool,
    retry_after: Option<Duration>,
    partial: Completion,
}

impl Failure {
    fn fatal(error: LlmError) -> Self {
        Self {
            error,
            retryable: false,
            retry_after: None,
            partial: Completion::default(),
        }
    }

    fn retry(error: LlmError) -> Self {
        Self {
            error,
            retryable: true,
            ..Self::fatal(LlmError::Cancelled)
        }
    }

    /// This failure, carrying what arrived before it.
    fn with_partial(mut self, partial: Completion) -> Self {
        self.partial = partial;
        self
    }
}

impl LlmClient {
    /// A client for `base_url` (e.g. `https://api.deepseek.com`); the key is kept private.
    pub fn new(base_url: &str, api_key: Option<String>) -> Result<Self, LlmError> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .build()
            .map_err(|e| LlmError::setup(e.to_string(), e))?;
        Ok(Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            api_key: api_key.filter(|k| !k.trim().is_empty()),
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

    /// Replaces the idle timeout of a stream (also the longest wait for the response to start).
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle;
        self
    }

    /// Resolves host names with `resolver` instead of the system's (tests use one that fails).
    pub fn with_dns_resolver<R: reqwest::dns::Resolve + 'static>(
        mut self,
        resolver: std::sync::Arc<R>,
    ) -> Result<Self, LlmError> {
        self.http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(15))
            .dns_resolver(resolver)
            .build()
            .map_err(|e| LlmError::setup(e.to_string(), e))?;
        Ok(self)
    }

    /// Whether a key is configured.
    pub fn has_key(&self) -> bool {
        self.api_key.is_some()
    }

    /// Streams one chat completion, reporting each piece through `on_event`, and returns the
    /// whole. `cancel` stops it at once; then, as after any failure, the error carries what had
    /// arrived.
    pub async fn chat(
        &self,
        preset: &Preset,
        messages: &[ChatMessage],
        tools: &[ToolSchema],
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<Completion, ChatError> {
        let Some(key) = self.api_key.as_deref() else {
            return Err(LlmError::MissingKey.into());
        };
        // Serialised once; a retry sends the same bytes again.
        let body = bytes::Bytes::from(
            serde_json::to_vec(&request_body(preset, messages, tools)?)
                .map_err(|e| LlmError::setup(e.to_string(), e))?,
        );
        let url = format!("{}/chat/completions", self.base_url);
        let max_attempts = self.retry.max_attempts.max(1);
        let mut attempt = 1;
        loop {
            let failure = match self.attempt(&url, key, &body, cancel, on_event).await {
                Ok(completion) => return Ok(completion),
                Err(failure) => failure,
            };
            if !failure.retryable || attempt >= max_attempts {
                return Err(ChatError {
                    error: failure.error,
                    partial: failure.partial,
                });
            }
            attempt += 1;
            let delay = delay_before(&self.retry, attempt, failure.retry_after);
            on_event(ClientEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason: failure.error.to_string(),
            });
            tokio::select! {
                _ = tokio::time::sleep(delay) => {}
                _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
            }
        }
    }

    /// One request: send, check the status, read the stream to `[DONE]`.
    async fn attempt(
        &self,
        url: &str,
        key: &str,
        body: &bytes::Bytes,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<Completion, Failure> {
        let idle = self.idle_timeout;
        let send = self
            .http
            .post(url)
            .bearer_auth(key)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone())
            .send();
        let send = async {
            tokio::select! {
                r = tokio::time::timeout(idle, send) => Some(r),
                _ = cancel.cancelled() => None,
            }
        };
        let response = match send.await {
            None => return Err(Failure::fatal(LlmError::Cancelled)),
            Some(Err(_)) => {
                let message = format!("the model server did not answer within {idle:?}");
                let error = LlmError::Transport {
                    message,
                    source: None,
                };
                return Err(Failure::retry(error));
            }
            Some(Ok(Err(e))) if e.is_builder() => {
                return Err(Failure::fatal(LlmError::setup(describe(&e, key), e)));
            }
            Some(Ok(Err(e))) => return Err(Failure::retry(LlmError::transport(e, key))),
            Some(Ok(Ok(response))) => response,
        };
        if !response.status().is_success() {
            return Err(http_failure(response, key, idle).await);
        }
        let mut acc = Accumulator::new();
        let read = read_stream(response, key, idle, cancel, &mut acc, on_event).await;
        match read {
            Ok(()) => Ok(acc.finish()),
            Err(failure) => Err(failure.with_partial(acc.finish())),
        }
    }
}

/// The request body: the preset's fields, messages, streaming with usage, and tools if any.
fn request_body(
    preset: &Preset,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
) -> Result<Value, LlmError> {
    let mut body = Map::new();
    preset.apply(&mut body);
    let messages = serde_json::to_value(messages).map_err(|e| LlmError::setup(e.to_string(), e))?;
    body.insert("messages".into(), messages);
    body.insert("stream".into(), Value::Bool(true));
    body.insert("stream_options".into(), json!({"include_usage": true}));
    if !tools.is_empty() {
        let tools: Vec<Value> = tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    Ok(Value::Object(body))
}

/// Turns an error status into a failure carrying the server's own message.
async fn http_failure(response: reqwest::Response, key: &str, idle: Duration) -> Failure {
    let status = response.status().as_u16();
    let retry_after = response
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    // An error body that never finishes, or a huge proxy page, must not hold the request up.
    let text = tokio::time::timeout(idle, read_capped(response, 64 * 1024))
        .await
        .unwrap_or_default();
    let message = redact(&error_message(&text), Some(key));
    Failure {
        error: LlmError::Http { status, message },
        retryable: is_retryable_status(status),
        retry_after,
        partial: Completion::default(),
    }
}

/// Reads at most `cap` bytes of a body as text.
async fn read_capped(mut response: reqwest::Response, cap: usize) -> String {
    let mut body = Vec::new();
    while body.len() < cap {
        match response.chunk().await {
            Ok(Some(bytes)) => body.extend_from_slice(&bytes),
            _ => break,
        }
    }
    body.truncate(cap);
    String::from_utf8_lossy(&body).into_owned()
}

/// Reads the event stream to `[DONE]`, reporting each event as it arrives.
async fn read_stream(
    mut response: reqwest::Response,
    key: &str,
    idle: Duration,
    cancel: &CancellationToken,
    acc: &mut Accumulator,
    on_event: &mut (dyn FnMut(ClientEvent) + Send),
) -> Result<(), Failure> {
    let mut parser = SseParser::new();
    let mut reported = false;
    // Only data moves the deadline: keep-alive comments must not keep a dead stream alive.
    let mut deadline = Instant::now() + idle;
    loop {
        let chunk = tokio::select! {
            c = tokio::time::timeout_at(deadline, response.chunk()) => c,
            _ = cancel.cancelled() => return Err(Failure::fatal(LlmError::Cancelled)),
        };
        let bytes = match chunk {
            // A server that accepted the request but never sent data (DeepSeek queues busy
            // requests behind keep-alives) is worth another attempt; one that went silent
            // mid-answer is not (a retry would repeat what was shown).
            Err(_) if !reported => return Err(Failure::retry(LlmError::IdleTimeout(idle))),
            Err(_) => return Err(Failure::fatal(LlmError::IdleTimeout(idle))),
            Ok(Ok(Some(bytes))) => bytes,
            // `data: [DONE]` without its closing blank line still ends the stream properly.
            Ok(Ok(None)) if parser.finish() == Some(Frame::Done) => return Ok(()),
            // Nothing shown yet means a fresh attempt cannot duplicate anything.
            Ok(Ok(None)) if !reported => return Err(Failure::retry(LlmError::StreamCut)),
            Ok(Ok(None)) => return Err(Failure::fatal(LlmError::StreamCut)),
            Ok(Err(e)) if !reported => {
                return Err(Failure::retry(LlmError::transport(e, key)));
            }
            Ok(Err(_)) => return Err(Failure::fatal(LlmError::StreamCut)),
        };
        for frame in parser.push(&bytes) {
            deadline = Instant::now() + idle;
            let text = match frame {
                Frame::Done => return Ok(()),
                Frame::Data(text) => text,
            };
            let events = decode_chunk(&text).map_err(|e| {
                let text = redact(&e.to_string(), Some(key));
                Failure::fatal(match e {
                    ChunkError::ServerError(_) => LlmError::InStream(text),
                    _ => LlmError::Malformed(text),
                })
            })?;
            for event in events {
                acc.push(&event);
                reported = true;
                on_event(ClientEvent::Stream(event));
            }
        }
    }
}

/// A transport error in plain words plus its root cause, the key redacted.
fn describe(error: &reqwest::Error, key: &str) -> String {
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
