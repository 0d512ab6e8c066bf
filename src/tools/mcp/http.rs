//! Streamable HTTP for `url` servers: rmcp's transport driven by MiniClaw's own reqwest 0.12.
//!
//! rmcp ships a client for reqwest 0.13 only; implementing its `StreamableHttpClient` trait here
//! keeps one reqwest (and one TLS stack) in the build. The rules are the protocol's: a POST
//! carries one JSON-RPC message and is answered with 202 (nothing to read), one JSON message, or
//! an SSE stream of messages; the session id travels in `Mcp-Session-Id`.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderName, HeaderValue, WWW_AUTHENTICATE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, SseError, StreamableHttpClient, StreamableHttpError,
    StreamableHttpPostResponse,
};
use sse_stream::{Sse, SseStream};

const SESSION_ID: &str = "Mcp-Session-Id";
const LAST_EVENT_ID: &str = "Last-Event-Id";
const EVENT_STREAM: &str = "text/event-stream";
const JSON: &str = "application/json";
/// The largest JSON answer read (a tool result is capped far below this anyway).
const MAX_JSON_BODY: usize = 16 * 1024 * 1024;
/// How much of an error page is kept for the message.
const MAX_ERROR_BODY: usize = 2048;

/// An HTTP client for one MCP server.
#[derive(Clone)]
pub struct HttpClient {
    inner: reqwest::Client,
}

/// Type alias for what every method returns on failure.
type HttpError = StreamableHttpError<reqwest::Error>;

impl HttpClient {
    /// A client with no idle connection pool (a half-read SSE body must not stall the next
    /// request on a reused connection).
    pub fn new() -> Result<Self, reqwest::Error> {
        let inner = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .build()?;
        Ok(Self { inner })
    }
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session_id: Option<&str>,
    token: Option<String>,
    custom: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    for (name, value) in custom {
        request = request.header(name, value);
    }
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(id) = session_id {
        request = request.header(SESSION_ID, id);
    }
    request
}

fn media_type(response: &reqwest::Response) -> Option<String> {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
}

/// The server's refusal, as rmcp wants to hear it.
async fn refusal(response: reqwest::Response) -> HttpError {
    let status = response.status();
    if status == StatusCode::UNAUTHORIZED
        && let Some(header) = response.headers().get(WWW_AUTHENTICATE)
    {
        let header = String::from_utf8_lossy(header.as_bytes()).into_owned();
        return StreamableHttpError::AuthRequired(AuthRequiredError::new(header));
    }
    if status == StatusCode::TOO_MANY_REQUESTS || status.is_server_error() {
        return HttpStatusError::new(status.as_u16(), None).into();
    }
    let body = read_capped(response, MAX_ERROR_BODY)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body);
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(format!("HTTP {status}: {text}")))
}

/// At most `cap` bytes of the body.
async fn read_capped(response: reqwest::Response, cap: usize) -> Result<Vec<u8>, HttpError> {
    let mut body = Vec::new();
    let mut stream = response.bytes_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(StreamableHttpError::Client)?;
        let room = cap.saturating_sub(body.len());
        body.extend_from_slice(&chunk[..chunk.len().min(room)]);
        if body.len() >= cap {
            break;
        }
    }
    Ok(body)
}

fn sse(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

impl StreamableHttpClient for HttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let request = self
            .inner
            .post(uri.as_ref())
            .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"))
            .json(&message);
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        if !status.is_success() {
            return Err(refusal(response).await);
        }
        let new_session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let awaits_nothing = !matches!(message, ClientJsonRpcMessage::Request(_));
        match media_type(&response).as_deref() {
            Some(EVENT_STREAM) => Ok(StreamableHttpPostResponse::Sse(sse(response), new_session)),
            Some(JSON) => {
                let body = read_capped(response, MAX_JSON_BODY).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, new_session)),
                    Err(_) if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
                    Err(e) => Err(StreamableHttpError::Deserialize(e)),
                }
            }
            // A notification or a reply needs nothing back: some servers answer 200 with an
            // empty body instead of 202.
            _ if awaits_nothing => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        let request = self.inner.delete(uri.as_ref());
        let request = with_headers(request, Some(&session_id), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        // A server that keeps no sessions may refuse the method: nothing to end then.
        if response.status() == StatusCode::METHOD_NOT_ALLOWED || response.status().is_success() {
            return Ok(());
        }
        Err(refusal(response).await)
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, HttpError> {
        let mut request = self
            .inner
            .get(uri.as_ref())
            .header(ACCEPT, format!("{EVENT_STREAM}, {JSON}"));
        if let Some(id) = last_event_id {
            request = request.header(LAST_EVENT_ID, id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(StreamableHttpError::Client)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if !response.status().is_success() {
            return Err(refusal(response).await);
        }
        match media_type(&response).as_deref() {
            Some(EVENT_STREAM | JSON) => Ok(sse(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(
                other.map(str::to_string),
            )),
        }
    }
}
