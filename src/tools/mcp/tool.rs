//! One tool of an MCP server, as the registry runs it: the call goes to the server's current
//! connection, and a server that dies mid-call ends the call at once with an error. The
//! server's progress notifications for the call are its live output.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::{FutureExt, StreamExt};
use rmcp::ServiceError;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    ProgressNotificationParam, RequestId,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::{Map, Value};

use super::connect::Live;
use super::error::McpError;
use super::result::interpret;
use crate::llm::ToolSchema;
use crate::tools::registry::{Tool, ToolContext, ToolFuture, ToolSource};

/// What a server's tools share: its current connection, or why there is none.
pub struct Link {
    /// The server's name.
    pub server: String,
    live: Mutex<Option<Arc<Live>>>,
    why_not: Mutex<String>,
}

impl Link {
    /// A link with no connection yet.
    pub fn new(server: &str) -> Self {
        Self {
            server: server.to_string(),
            live: Mutex::new(None),
            why_not: Mutex::new("starting".into()),
        }
    }

    /// Calls go to `live` from now on.
    pub fn connect(&self, live: Arc<Live>) {
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = Some(live);
    }

    /// No calls go through any more; `why` is told to callers.
    pub fn disconnect(&self, why: &str) {
        *self.live.lock().unwrap_or_else(|p| p.into_inner()) = None;
        *self.why_not.lock().unwrap_or_else(|p| p.into_inner()) = why.to_string();
    }

    fn current(&self) -> Result<Arc<Live>, McpError> {
        let live = self.live.lock().unwrap_or_else(|p| p.into_inner()).clone();
        live.ok_or_else(|| McpError::NotRunning {
            server: self.server.clone(),
            state: self
                .why_not
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
        })
    }
}

/// A tool offered by an MCP server.
pub struct McpTool {
    /// Name (`mcp__SERVER__TOOL`), description and the server's input schema.
    pub schema: ToolSchema,
    /// Its name on the server.
    pub remote_name: String,
    /// Whether the server marks it `readOnlyHint`.
    pub read_only: bool,
    /// Whether the server marks it `openWorldHint: false` (it reaches nothing outside; the
    /// protocol's default is that it may).
    pub closed_world: bool,
    /// The entry's `tool_timeout_sec`.
    pub timeout: Duration,
    /// The server's connection.
    pub link: Arc<Link>,
}

impl Tool for McpTool {
    fn schema(&self) -> ToolSchema {
        self.schema.clone()
    }

    fn read_only(&self) -> bool {
        self.read_only
    }

    // A read-only tool that may reach the web (the protocol's default) still asks.
    fn needs_approval(&self) -> bool {
        !(self.read_only && self.closed_world)
    }

    fn source(&self) -> ToolSource {
        ToolSource::Mcp(self.link.server.clone())
    }

    fn call_timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.run(args, ctx).await?) })
    }
}

/// One progress notification as a line of the call's live output: `[2/5] message`. The
/// message is the server's text: cleaned of escapes and control characters, one line, capped.
fn progress_line(p: &ProgressNotificationParam) -> String {
    let count = |n: f64| {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            format!("{n:.0}")
        } else {
            format!("{n:.2}")
        }
    };
    let mut line = match p.total {
        Some(total) => format!("[{}/{}]", count(p.progress), count(total)),
        None => format!("[{}]", count(p.progress)),
    };
    if let Some(message) = &p.message {
        let one = crate::terminal_text::clean(message).replace(['\n', '\r', '\t'], " ");
        line.push(' ');
        line.extend(one.chars().take(200));
    }
    line.push('\n');
    line
}

impl McpTool {
    async fn run(
        &self,
        args: Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<Map<String, Value>, McpError> {
        let live = self.link.current()?;
        let params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(args);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // Sent as `call_tool` sends it, keeping the handle: its progress token names this
        // call's progress notifications, each a line of its live output.
        let handle = match live
            .peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
        {
            Ok(handle) => handle,
            Err(ServiceError::TransportClosed) => return Err(live.ended().await),
            Err(other) => return Err(self.refused(other.to_string())),
        };
        let mut progress = live.progress.subscribe(handle.progress_token.clone()).await;
        let mut abandon = Abandon(Some((live.peer.clone(), handle.id.clone())));
        let call = handle.await_response();
        tokio::pin!(call);
        let answer = loop {
            tokio::select! {
                // Progress first: a report that came before the answer is shown before it.
                biased;
                Some(report) = progress.next() => ctx.output(progress_line(&report)),
                answer = &mut call => break answer,
                // The server died: this call ends now, whatever rmcp still waits for.
                _ = live.closed.cancelled() => return Err(live.ended().await),
            }
        };
        abandon.0 = None;
        // Reports the server sent just before its answer are handed over before it.
        while let Some(Some(report)) = progress.next().now_or_never() {
            ctx.output(progress_line(&report));
        }
        match answer {
            // Any kind of result is read as JSON: a reply without `content` decodes as another
            // variant and still reads as a result.
            Ok(result) => {
                let value = serde_json::to_value(&result).map_err(|e| McpError::Refused {
                    server: self.link.server.clone(),
                    message: format!("its answer could not be read ({e})"),
                })?;
                interpret(&value)
            }
            Err(ServiceError::McpError(e)) => Err(self.refused(e.message.to_string())),
            Err(ServiceError::TransportClosed) => Err(live.ended().await),
            Err(other) => Err(self.refused(other.to_string())),
        }
    }

    /// The server refused the call, saying `message`.
    fn refused(&self, message: String) -> McpError {
        McpError::Refused {
            server: self.link.server.clone(),
            message,
        }
    }
}

/// A call whose answer is no longer awaited (the person interrupted the turn, or the call
/// timed out): the server is told it is cancelled, as `call_tool` would.
struct Abandon(Option<(Peer<RoleClient>, RequestId)>);

impl Drop for Abandon {
    fn drop(&mut self) {
        let Some((peer, id)) = self.0.take() else {
            return;
        };
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let reason = Some("the call was abandoned (interrupted or timed out)".to_string());
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(Some(id), reason))
                    .await;
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{NumberOrString, ProgressToken};

    #[test]
    fn a_progress_line_is_one_clean_line() {
        let token = ProgressToken(NumberOrString::Number(1));
        let mut p = ProgressNotificationParam::new(token, 2.0);
        assert_eq!(progress_line(&p), "[2]\n");
        p.total = Some(5.0);
        p.message = Some("copying\x1b]0;owned\x07 a\nb \u{9b}2J".repeat(40));
        let line = progress_line(&p);
        assert!(line.starts_with("[2/5] copying"), "{line:?}");
        assert!(!line.contains('\x1b') && !line.contains('\u{9b}') && !line.contains('\x07'));
        assert_eq!(line.matches('\n').count(), 1, "{line:?}");
        assert!(line.chars().count() <= 210, "{line:?}");
        p.progress = 0.5;
        p.total = None;
        p.message = None;
        assert_eq!(progress_line(&p), "[0.50]\n");
    }
}
