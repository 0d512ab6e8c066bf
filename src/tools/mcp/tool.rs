//! One tool of an MCP server, as the registry runs it: the call goes to the server's current
//! connection, and a server that dies mid-call ends the call at once with an error.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ServiceError;
use rmcp::model::CallToolRequestParams;
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

    fn call<'a>(&'a self, args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.run(args).await?) })
    }
}

impl McpTool {
    async fn run(&self, args: Map<String, Value>) -> Result<Map<String, Value>, McpError> {
        let live = self.link.current()?;
        let params = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(args);
        let answer = tokio::select! {
            answer = live.peer.call_tool(params) => answer,
            // The server died: this call ends now, whatever rmcp still waits for.
            _ = live.closed.cancelled() => return Err(live.ended().await),
        };
        match answer {
            Ok(result) => {
                let value = serde_json::to_value(&result).map_err(|e| McpError::Refused {
                    server: self.link.server.clone(),
                    message: format!("its answer could not be read ({e})"),
                })?;
                interpret(&value)
            }
            Err(ServiceError::McpError(e)) => Err(McpError::Refused {
                server: self.link.server.clone(),
                message: e.message.to_string(),
            }),
            Err(ServiceError::TransportClosed) => Err(live.ended().await),
            Err(other) => Err(McpError::Refused {
                server: self.link.server.clone(),
                message: other.to_string(),
            }),
        }
    }
}
