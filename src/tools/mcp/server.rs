//! One configured server and the task that keeps it: start, list its tools, serve until it
//! dies or is restarted, refresh its tools on `notifications/tools/list_changed`.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::mpsc::{self, UnboundedReceiver, UnboundedSender};
use tokio_util::sync::CancellationToken;

use super::connect::{Live, connect};
use super::error::{McpError, stderr_note};
use super::names::tool_name;
use super::tool::{Link, McpTool};
use crate::events::{AgentEvent, McpServerStatus, McpState};
use crate::llm::ToolSchema;
use crate::settings::McpServerConfig;

/// What every server reports to: the hub's change counter and its event slot.
pub struct Reporter {
    /// Bumped whenever a server's state or tools change.
    pub changed: tokio::sync::watch::Sender<u64>,
    /// Sends a message (an error, a notice) to whoever listens.
    pub say: Box<dyn Fn(AgentEvent) + Send + Sync>,
}

/// Where a server runs.
pub struct Place {
    /// The working folder of stdio servers without `cwd`.
    pub cwd: PathBuf,
    /// The workspace (kept off their PATH).
    pub workspace: PathBuf,
}

struct Status {
    state: McpState,
    tools: Vec<Arc<McpTool>>,
    last_error: Option<String>,
}

/// One server.
pub struct Server {
    /// Its entry.
    pub config: McpServerConfig,
    link: Arc<Link>,
    status: Mutex<Status>,
    restarts: UnboundedSender<()>,
    waiting: Mutex<Option<UnboundedReceiver<()>>>,
}

/// Why a connection's service ended.
enum End {
    Died(McpError),
    Restart,
    Shutdown,
}

impl Server {
    /// A server not started yet (`Disabled` when its entry says so).
    pub fn new(config: McpServerConfig) -> Self {
        let (restarts, waiting) = mpsc::unbounded_channel();
        let state = if config.enabled {
            McpState::Starting
        } else {
            McpState::Disabled
        };
        Self {
            link: Arc::new(Link::new(&config.name)),
            config,
            status: Mutex::new(Status {
                state,
                tools: Vec::new(),
                last_error: None,
            }),
            restarts,
            waiting: Mutex::new(Some(waiting)),
        }
    }

    fn status(&self) -> std::sync::MutexGuard<'_, Status> {
        self.status.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Its tools now (none unless it is ready).
    pub fn tools(&self) -> Vec<Arc<McpTool>> {
        self.status().tools.clone()
    }

    /// Its state now.
    pub fn state(&self) -> McpState {
        self.status().state
    }

    /// What `/mcp` shows of it.
    pub fn snapshot(&self) -> McpServerStatus {
        let status = self.status();
        McpServerStatus {
            name: self.config.name.clone(),
            state: status.state,
            tools: status
                .tools
                .iter()
                .map(|t| (t.schema.name.clone(), first_line(&t.schema.description)))
                .collect(),
            last_error: status.last_error.clone(),
            source: self.config.origin.file.display().to_string(),
        }
    }

    /// Asks its task to stop it and start it again (a disabled server stays off).
    pub fn restart(&self) {
        let _ = self.restarts.send(());
    }

    fn set(
        &self,
        report: &Reporter,
        state: McpState,
        tools: Vec<Arc<McpTool>>,
        error: Option<String>,
    ) {
        {
            let mut status = self.status();
            status.state = state;
            status.tools = tools;
            if error.is_some() || state == McpState::Ready {
                status.last_error = error;
            }
        }
        report.changed.send_modify(|n| *n += 1);
    }

    fn fail(&self, report: &Reporter, error: &McpError, starting: bool) {
        let text = error.to_string();
        self.link.disconnect(&format!("failed: {text}"));
        self.set(report, McpState::Failed, Vec::new(), Some(text.clone()));
        let what = if starting {
            "could not start"
        } else {
            "stopped"
        };
        tracing::warn!(server = %self.config.name, error = %text, "MCP server {what}");
        (report.say)(AgentEvent::Error {
            message: format!(
                "MCP server `{}` {what}: {text}. Its tools are offered again once it runs (/mcp restart {}).",
                self.config.name, self.config.name
            ),
        });
    }
}

/// Keeps the server running until `shutdown`: starts it, serves it, and after a failure waits
/// for a restart.
pub async fn supervise(
    server: Arc<Server>,
    report: Arc<Reporter>,
    place: Arc<Place>,
    shutdown: CancellationToken,
) {
    let waiting = server
        .waiting
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take();
    let Some(mut restarts) = waiting else { return };
    if !server.config.enabled {
        return;
    }
    let mut again = false;
    loop {
        while restarts.try_recv().is_ok() {}
        server.link.disconnect("starting");
        server.set(&report, McpState::Starting, Vec::new(), None);
        let (changed_tx, mut changed_rx) = mpsc::unbounded_channel();
        let attempt = start(&server, &place, changed_tx);
        let started = tokio::select! {
            started = attempt => started,
            _ = shutdown.cancelled() => return,
        };
        match started {
            Ok((live, tools)) => {
                let count = tools.len();
                server.link.connect(live.clone());
                server.set(&report, McpState::Ready, tools, None);
                tracing::info!(server = %server.config.name, tools = count, "MCP server ready");
                if again {
                    (report.say)(AgentEvent::Notice(format!(
                        "MCP server `{}` is running again: {count} tool(s).",
                        server.config.name
                    )));
                }
                let end = serve(
                    &server,
                    &report,
                    &live,
                    &mut changed_rx,
                    &mut restarts,
                    &shutdown,
                )
                .await;
                server.link.disconnect("stopped");
                live.stop().await;
                match end {
                    End::Died(e) => server.fail(&report, &e, false),
                    End::Restart => {
                        again = true;
                        continue;
                    }
                    End::Shutdown => return,
                }
            }
            Err(e) => server.fail(&report, &e, true),
        }
        tokio::select! {
            asked = restarts.recv() => if asked.is_none() { return },
            _ = shutdown.cancelled() => return,
        }
        again = true;
    }
}

/// Connects and lists the tools, all within the startup timeout.
async fn start(
    server: &Server,
    place: &Place,
    list_changed: UnboundedSender<()>,
) -> Result<(Arc<Live>, Vec<Arc<McpTool>>), McpError> {
    let config = &server.config;
    let live = Arc::new(connect(config, &place.cwd, &place.workspace, list_changed).await?);
    match tokio::time::timeout(config.startup_timeout, list_tools(server, &live)).await {
        Ok(Ok(tools)) => Ok((live, tools)),
        Ok(Err(e)) => {
            live.stop().await;
            Err(e)
        }
        Err(_) => {
            let stderr = stderr_note(&live.stderr());
            live.stop().await;
            Err(McpError::StartTimeout {
                secs: config.startup_timeout.as_secs_f64(),
                stderr,
            })
        }
    }
}

async fn serve(
    server: &Server,
    report: &Reporter,
    live: &Live,
    list_changed: &mut UnboundedReceiver<()>,
    restarts: &mut UnboundedReceiver<()>,
    shutdown: &CancellationToken,
) -> End {
    loop {
        tokio::select! {
            _ = live.closed.cancelled() => return End::Died(live.ended().await),
            Some(()) = list_changed.recv() => {
                while list_changed.try_recv().is_ok() {}
                let listed = tokio::time::timeout(server.config.startup_timeout, list_tools(server, live)).await;
                match listed {
                    Ok(Ok(tools)) => {
                        tracing::info!(server = %server.config.name, tools = tools.len(), "MCP tools refreshed");
                        server.set(report, McpState::Ready, tools, None);
                    }
                    Ok(Err(e)) => tracing::warn!(server = %server.config.name, error = %e, "MCP tool refresh failed"),
                    Err(_) => tracing::warn!(server = %server.config.name, "MCP tool refresh timed out"),
                }
            }
            asked = restarts.recv() => return if asked.is_some() { End::Restart } else { End::Shutdown },
            _ = shutdown.cancelled() => return End::Shutdown,
        }
    }
}

/// The server's tools as MiniClaw offers them (`enabled_tools` / `disabled_tools` applied).
async fn list_tools(server: &Server, live: &Live) -> Result<Vec<Arc<McpTool>>, McpError> {
    let listed = live
        .peer
        .list_all_tools()
        .await
        .map_err(|e| McpError::ListTools(e.to_string()))?;
    let mut taken = BTreeSet::new();
    let prefix = super::names::server_part(&server.config.name);
    let tools = listed
        .into_iter()
        .filter(|t| server.config.offers(&t.name))
        .map(|t| {
            let description = t
                .description
                .as_deref()
                .map(str::to_string)
                .or_else(|| t.title.clone())
                .unwrap_or_default();
            let hints = t.annotations.as_ref();
            let read_only = hints.and_then(|a| a.read_only_hint) == Some(true);
            let closed_world = hints.and_then(|a| a.open_world_hint) == Some(false);
            Arc::new(McpTool {
                schema: ToolSchema {
                    name: tool_name(&prefix, &t.name, &mut taken),
                    description,
                    parameters: object_schema(Value::Object((*t.input_schema).clone())),
                },
                remote_name: t.name.to_string(),
                read_only,
                closed_world,
                timeout: server.config.tool_timeout,
                link: server.link.clone(),
            })
        })
        .collect();
    Ok(tools)
}

/// The model API wants an object schema with `properties`; a server's may leave them out.
fn object_schema(mut schema: Value) -> Value {
    if let Value::Object(map) = &mut schema {
        map.entry("type").or_insert_with(|| json!("object"));
        map.entry("properties").or_insert_with(|| json!({}));
    }
    schema
}

fn first_line(text: &str) -> String {
    let line = text.lines().next().unwrap_or("").trim();
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line.to_string(),
    }
}
