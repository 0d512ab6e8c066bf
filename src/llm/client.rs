//! HTTP client for streamed chat completions: request body, retries with backoff, stream reading.

use std::time::Duration;

use futures::future::Either;
use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::accumulate::Accumulator;
use super::catalog::Providers;
use super::chunk::{ChunkError, decode_chunk_into};
use super::direct;
use super::endpoint::Endpoints;
use super::error::{ChatError, LlmError, describe};
use super::key::ApiKey;
use super::presets::Preset;
use super::provider::ToolProtocol;
use super::reply::{Body, Reply, SendError};
use super::retry::{
    RetryCause, RetryPolicy, delay_before, error_message, is_retryable_status, parse_retry_after,
    redact,
};
use super::sse::{Frame, SseParser};
use super::text_protocol::{TextCalls, render};
use super::types::{ChatMessage, Completion, StreamEvent, ToolSchema};
use super::wire;
use crate::secrets::Secret;

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
        /// Why, in a word the status line shows.
        cause: RetryCause,
        /// What arrived of the answer is dropped: the request is sent again from the start
        /// (a stream cut once something was shown, retried once).
        restarts: bool,
    },
    /// The server holds the request in its queue (keep-alives before any data), told at each
    /// keep-alive, then once more when the answer starts.
    Queued {
        /// How long it has waited since the response began.
        waited: Duration,
        /// The first data came: the wait is over.
        started: bool,
    },
}

/// How long a response may wait in the server's queue, kept alive by comments, before its first
/// data (DeepSeek keeps busy requests open up to 10 minutes before inference starts).
pub const QUEUE_WAIT_LIMIT: Duration = Duration::from_secs(600);

/// A client for DeepSeek (or another OpenAI-compatible server at its base URL) and the
/// configured providers; cheap to clone (the HTTP pool is shared).
#[derive(Clone)]
pub struct LlmClient {
    pub(super) base_url: String,
    /// DeepSeek's key, read before every request; clones share it.
    api_key: ApiKey,
    /// The configured providers' base URLs, each with its own key.
    endpoints: std::sync::Arc<Endpoints>,
    retry: RetryPolicy,
    idle_timeout: Duration,
    /// The longest wait in the server's queue before the first data.
    queue_limit: Duration,
    pub(super) http: reqwest::Client,
    /// Whether host names are resolved as the system does (a streamed chat may then go
    /// directly, see `direct`); a test's own resolver sends everything through reqwest.
    system_names: bool,
    /// The pro preset's reasoning effort.
    effort: super::presets::ReasoningEffort,
}

impl std::fmt::Debug for LlmClient {
    // Written by hand so the key can never reach a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmClient")
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key)
            .field("endpoints", &self.endpoints)
            .field("retry", &self.retry)
            .field("idle_timeout", &self.idle_timeout)
            .finish_non_exhaustive()
    }
}

/// How one attempt failed, whether another may follow, and what had arrived.
struct Failure {
    error: LlmError,
    retryable: bool,
    /// A cut after something was shown: retried once, from the start, if nothing else failed.
    restart: bool,
    retry_after: Option<Duration>,
    partial: Completion,
}

impl Failure {
    fn fatal(error: LlmError) -> Self {
        Self {
            error,
            retryable: false,
            restart: false,
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

    /// A stream cut once something was shown: tried once more from the start.
    fn restart(error: LlmError) -> Self {
        Self {
            error,
            restart: true,
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
            api_key: ApiKey::fixed(api_key),
            endpoints: Default::default(),
            retry: RetryPolicy::default(),
            idle_timeout: Duration::from_secs(120),
            queue_limit: QUEUE_WAIT_LIMIT,
            http,
            system_names: true,
            effort: Default::default(),
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

    /// Replaces the longest wait in the server's queue (keep-alives before the first data).
    pub fn with_queue_limit(mut self, limit: Duration) -> Self {
        self.queue_limit = limit;
        self
    }

    /// Sends `effort` as the pro preset's reasoning effort.
    pub fn with_reasoning_effort(mut self, effort: super::presets::ReasoningEffort) -> Self {
        self.effort = effort;
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
        self.system_names = false;
        Ok(self)
    }

    /// Reads the key from `key` before every request (shared: whoever holds a clone of it may
    /// replace the key while the client runs).
    pub fn with_key(mut self, key: ApiKey) -> Self {
        self.api_key = key;
        self
    }

    /// Sends the presets of `providers` to their own base URLs, each with the key `key_of`
    /// finds for its variable (read once, now).
    pub fn with_providers(
        mut self,
        providers: Providers,
        key_of: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        self.endpoints = std::sync::Arc::new(Endpoints::new(providers, key_of));
        self
    }

    /// The configured providers.
    pub fn providers(&self) -> &Providers {
        self.endpoints.catalog()
    }

    /// DeepSeek's key holder: replace the key through it.
    pub fn key(&self) -> &ApiKey {
        &self.api_key
    }

    /// Whether DeepSeek's key is configured.
    pub fn has_key(&self) -> bool {
        self.api_key.is_set()
    }

    /// Why a request with `preset` cannot be sent now (no key, an unknown provider), if so.
    pub fn key_problem(&self, preset: &Preset) -> Option<LlmError> {
        self.route(preset).err()
    }

    /// The base URL of `preset`'s requests and the key that goes with it: DeepSeek's for its
    /// presets, the provider's own (or none) for a provider's model. Never another's.
    fn route(&self, preset: &Preset) -> Result<(String, Option<Secret>), LlmError> {
        if preset.is_deepseek() {
            let (key, url) = self.api_key.get_routed();
            let key = key.ok_or(LlmError::MissingKey)?;
            let url = url.map_or_else(
                || self.base_url.clone(),
                |u| u.trim_end_matches('/').to_string(),
            );
            return Ok((url, Some(key)));
        }
        let (base_url, key) = self.endpoints.route(preset.provider())?;
        Ok((base_url.to_string(), key.cloned()))
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
        let (base_url, key) = self.route(preset)?;
        // No key (a local server): none is sent, and nothing needs redacting.
        let key = key.as_ref().map_or("", Secret::expose);
        // Serialised once; a retry sends the same bytes again.
        let body = bytes::Bytes::from(
            serde_json::to_vec(&request_body(preset, self.effort, messages, tools)?)
                .map_err(|e| LlmError::setup(e.to_string(), e))?,
        );
        let url = format!("{base_url}/chat/completions");
        let text = preset.tool_protocol() == ToolProtocol::Text;
        let max_attempts = self.retry.max_attempts.max(1);
        let mut attempt = 1;
        // A stream cut after something was shown is sent again once, from the start.
        let mut restarted = false;
        loop {
            let request = Request {
                url: &url,
                key,
                body: &body,
                text,
            };
            let failure = match self.attempt(&request, cancel, on_event).await {
                Ok(completion) => return Ok(completion),
                Err(failure) => failure,
            };
            let restarts = failure.restart && !restarted;
            if !(failure.retryable || restarts) || attempt >= max_attempts {
                return Err(ChatError {
                    error: failure.error,
                    partial: failure.partial,
                });
            }
            restarted |= restarts;
            attempt += 1;
            let delay = delay_before(&self.retry, attempt, failure.retry_after);
            on_event(ClientEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason: failure.error.to_string(),
                cause: RetryCause::of(&failure.error),
                restarts,
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
        request: &Request<'_>,
        cancel: &CancellationToken,
        on_event: &mut (dyn FnMut(ClientEvent) + Send),
    ) -> Result<Completion, Failure> {
        let idle = self.idle_timeout;
        let key = request.key;
        // A plain connection reads the stream directly; a proxy or a resolver of the client's
        // own takes reqwest.
        let send = match direct::Route::of(request.url, self.system_names) {
            Some(route) => Either::Left(direct::send(route, key, request.body)),
            None => {
                let mut post = self.http.post(request.url);
                if !key.is_empty() {
                    post = post.bearer_auth(key);
                }
                let post = post
                    .header(reqwest::header::ACCEPT, "text/event-stream")
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .body(request.body.clone());
                Either::Right(wire::send(post))
            }
        };
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
            Some(Ok(Err(SendError::Http(e)))) if e.is_builder() => {
                return Err(Failure::fatal(LlmError::setup(describe(&e, key), e)));
            }
            Some(Ok(Err(SendError::Http(e)))) => {
                return Err(Failure::retry(LlmError::transport(e, key)));
            }
            Some(Ok(Err(SendError::Direct(e)))) if e.is_setup() => {
                return Err(Failure::fatal(LlmError::direct_setup(&e, key)));
            }
            Some(Ok(Err(SendError::Direct(e)))) => {
                return Err(Failure::retry(LlmError::direct(&e, key)));
            }
            Some(Ok(Err(SendError::Lost))) => return Err(Failure::retry(LlmError::wire_lost())),
            Some(Ok(Ok(reply))) => reply,
        };
        if !response.status.is_success() {
            return Err(http_failure(response, key, idle).await);
        }
        let mut acc = Accumulator::new();
        // A text-protocol model's calls are read out of its text as the stream comes.
        let mut sink = Sink {
            acc: &mut acc,
            text: request.text.then(TextCalls::new),
            on_event,
            reported: false,
        };
        let limits = Limits {
            idle,
            queue: self.queue_limit,
        };
        let read = read_stream(response.body, key, limits, cancel, &mut sink).await;
        match read {
            Ok(()) => Ok(acc.finish()),
            Err(failure) => Err(failure.with_partial(acc.finish())),
        }
    }
}

/// What one attempt sends, and how its answer is read.
struct Request<'a> {
    url: &'a str,
    /// The key (empty: none is sent).
    key: &'a str,
    body: &'a bytes::Bytes,
    /// Whether the model calls tools as text tags.
    text: bool,
}

/// Where a stream's events go: through the text protocol's parser when the model writes its
/// calls as tags, then into the accumulator and out to the caller.
struct Sink<'a, 'b> {
    acc: &'a mut Accumulator,
    text: Option<TextCalls>,
    on_event: &'a mut (dyn FnMut(ClientEvent) + Send + 'b),
    /// Whether anything was passed on yet (a retry then could duplicate it).
    reported: bool,
}

impl Sink<'_, '_> {
    fn take(&mut self, event: StreamEvent) {
        match &mut self.text {
            Some(text) => {
                let events = text.push(event);
                self.deliver(events);
            }
            None => self.deliver_one(event),
        }
    }

    /// Takes every event of `events`, leaving the list empty for the next batch.
    fn take_all(&mut self, events: &mut Vec<StreamEvent>) {
        for event in events.drain(..) {
            self.take(event);
        }
    }

    /// The stream is over: what the text parser held back.
    fn finish(&mut self) {
        if let Some(text) = &mut self.text {
            let events = text.finish();
            self.deliver(events);
        }
    }

    fn deliver(&mut self, events: Vec<StreamEvent>) {
        for event in events {
            self.deliver_one(event);
        }
    }

    fn deliver_one(&mut self, event: StreamEvent) {
        self.acc.push(&event);
        self.reported = true;
        (self.on_event)(ClientEvent::Stream(event));
    }
}

/// The request body: the preset's fields, messages, streaming with usage, and tools if any —
/// for a text-protocol model, in the system prompt instead, and the history written as tags.
fn request_body(
    preset: &Preset,
    effort: super::presets::ReasoningEffort,
    messages: &[ChatMessage],
    tools: &[ToolSchema],
) -> Result<Value, LlmError> {
    let mut body = Map::new();
    preset.apply(&mut body, effort);
    let rendered;
    let (messages, tools) = match preset.tool_protocol() {
        ToolProtocol::Native => (messages, tools),
        ToolProtocol::Text => {
            rendered = render(messages, tools);
            (&rendered[..], &[][..])
        }
    };
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
async fn http_failure(response: Reply, key: &str, idle: Duration) -> Failure {
    let status = response.status.as_u16();
    let retry_after = response
        .headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after);
    // An error body that never finishes, or a huge proxy page, must not hold the request up.
    let text = tokio::time::timeout(idle, read_capped(response.body, 64 * 1024))
        .await
        .unwrap_or_default();
    let message = redact(&error_message(&text), Some(key));
    Failure {
        error: LlmError::Http { status, message },
        retryable: is_retryable_status(status),
        restart: false,
        retry_after,
        partial: Completion::default(),
    }
}

/// Reads at most `cap` bytes of a body as text.
async fn read_capped(mut response: Body, cap: usize) -> String {
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

/// How long a stream may stay silent.
#[derive(Clone, Copy)]
struct Limits {
    /// Without data (or, before the first data, without a keep-alive).
    idle: Duration,
    /// In the server's queue: keep-alives before the first data, from the response's start.
    queue: Duration,
}

/// Reads the event stream to `[DONE]`, reporting each event as it arrives.
async fn read_stream(
    mut body: Body,
    key: &str,
    limits: Limits,
    cancel: &CancellationToken,
    sink: &mut Sink<'_, '_>,
) -> Result<(), Failure> {
    let idle = limits.idle;
    let mut parser = SseParser::new();
    let began = Instant::now();
    let queue_end = began + limits.queue;
    // Data moves the deadline; a keep-alive does only while the request waits in the queue
    // (before the first data, up to the queue's bound): after that, a stream that sends nothing
    // but keep-alives is as dead as a silent one.
    let mut deadline = began + idle;
    let mut data_seen = false;
    let mut queued = false;
    // The events of one batch, the list kept for the whole stream.
    let mut events = Vec::new();
    // One timer and one cancellation waiter for the whole stream, not one of each per event:
    // the timer is left where it was set and, when it fires, moved on to where data has since
    // moved the deadline.
    let timer = tokio::time::sleep_until(deadline);
    tokio::pin!(timer);
    let cancelled = cancel.cancelled();
    tokio::pin!(cancelled);
    loop {
        // A batch: what arrived together (the connections' thread reads a fast stream at a
        // pace, see `wire`).
        let chunk = tokio::select! {
            biased;
            _ = &mut cancelled => return Err(Failure::fatal(LlmError::Cancelled)),
            c = body.chunk() => Ok(c),
            _ = &mut timer => {
                if Instant::now() < deadline {
                    timer.as_mut().reset(deadline);
                    continue;
                }
                Err(())
            }
        };
        let bytes = match chunk {
            // Queued the whole bound: the person is told to send it again later.
            Err(_) if queued && deadline >= queue_end => {
                return Err(Failure::fatal(LlmError::QueuedTooLong(limits.queue)));
            }
            // A server that accepted the request but never sent data is worth another
            // attempt; one that went silent mid-answer is tried once more from the start (what
            // was shown is dropped).
            Err(_) if !sink.reported => return Err(Failure::retry(LlmError::IdleTimeout(idle))),
            Err(_) => return Err(Failure::restart(LlmError::IdleTimeout(idle))),
            Ok(Ok(Some(bytes))) => bytes,
            // `data: [DONE]` without its closing blank line still ends the stream properly.
            Ok(Ok(None)) if parser.finish() == Some(Frame::Done) => {
                sink.finish();
                return Ok(());
            }
            // Nothing shown yet means a fresh attempt cannot duplicate anything.
            Ok(Ok(None)) if !sink.reported => return Err(Failure::retry(LlmError::StreamCut)),
            Ok(Ok(None)) => return Err(Failure::restart(LlmError::StreamCut)),
            Ok(Err(e)) if !sink.reported => {
                return Err(Failure::retry(LlmError::wire(e, key)));
            }
            Ok(Err(_)) => return Err(Failure::restart(LlmError::StreamCut)),
        };
        // Frames are taken one at a time, each one's text given back to the parser for the
        // next. The batch's events are passed on together at its end, texts of a kind joined
        // (see `decode_chunk_into`); everything in a batch arrived at the same moment.
        let now = Instant::now();
        let mut rest: &[u8] = &bytes;
        let mut done = false;
        while let Some(frame) = parser.next_frame(&mut rest) {
            let text = match frame {
                Frame::Comment if !data_seen => {
                    queued = true;
                    deadline = (now + idle).min(queue_end);
                    (sink.on_event)(ClientEvent::Queued {
                        waited: now - began,
                        started: false,
                    });
                    continue;
                }
                Frame::Comment => continue,
                Frame::Done => {
                    done = true;
                    break;
                }
                Frame::Data(text) => text,
            };
            deadline = now + idle;
            if !data_seen && queued {
                (sink.on_event)(ClientEvent::Queued {
                    waited: now - began,
                    started: true,
                });
            }
            data_seen = true;
            if let Err(e) = decode_chunk_into(&text, &mut events) {
                // What came before the bad chunk is shown, as it would have been a batch earlier.
                sink.take_all(&mut events);
                let text = redact(&e.to_string(), Some(key));
                return Err(Failure::fatal(match e {
                    ChunkError::ServerError(_) => LlmError::InStream(text),
                    _ => LlmError::Malformed(text),
                }));
            }
            parser.recycle(text);
        }
        sink.take_all(&mut events);
        if done {
            sink.finish();
            return Ok(());
        }
        if parser.overflowed() {
            // The same server would send the same again: not worth a retry.
            return Err(Failure::fatal(LlmError::EventTooLarge {
                cap: super::sse::MAX_EVENT_BYTES,
            }));
        }
    }
}
