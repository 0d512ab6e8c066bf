//! MCP tool servers: every configured Model Context Protocol server's tools join the registry as
//! `mcp__SERVER__TOOL`, through the `rmcp` SDK (stdio child processes, streamable HTTP).
//!
//! Servers start in the background ([`McpHub::start`]); each has a task that starts it, offers
//! its tools once it has listed them, refreshes them on `notifications/tools/list_changed`, and
//! after a failure waits for `/mcp restart NAME`. What happens is reported as events
//! (`AgentEvent::McpServers` with every server's state, an error with the stderr tail when one
//! fails) to whoever is attached. The entries come from `settings`; which of them may start
//! (the project's only when trusted) is decided before.

mod connect;
mod error;
mod http;
pub(crate) mod names;
pub(crate) mod result;
mod server;
mod stdio;
mod tool;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

pub use error::McpError;
pub use stdio::{ALLOWED_ENV, end_all};
pub use tool::McpTool;

use self::server::{Place, Reporter, Server, supervise};
use crate::events::{AgentEvent, EventSink, McpServerStatus, McpState};
use crate::settings::McpServerConfig;
use crate::tools::registry::{Tool, ToolProvider};

/// Messages kept for a listener that is not attached yet (more are dropped).
const MAX_BUFFERED: usize = 64;

/// Where the hub's events go: a sink once one is attached, a short buffer before.
#[derive(Default)]
struct EventSlot {
    inner: Mutex<(Option<EventSink>, Vec<AgentEvent>)>,
}

impl EventSlot {
    fn send(&self, event: AgentEvent) {
        let mut inner = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        match &inner.0 {
            Some(sink) => sink.send(event),
            None if inner.1.len() < MAX_BUFFERED => inner.1.push(event),
            None => {}
        }
    }
}

/// Every configured MCP server.
pub struct McpHub {
    servers: Arc<Vec<Arc<Server>>>,
    slot: Arc<EventSlot>,
    changed: watch::Receiver<u64>,
    shutdown: CancellationToken,
}

impl McpHub {
    /// Starts every enabled server in the background and returns at once (call inside the
    /// tokio runtime). Stdio servers without `cwd` run in `cwd`; `workspace` is kept off their
    /// PATH.
    pub fn start(configs: Vec<McpServerConfig>, cwd: PathBuf, workspace: PathBuf) -> Arc<Self> {
        let (changed_tx, changed) = watch::channel(0u64);
        let slot = Arc::new(EventSlot::default());
        let to_slot = slot.clone();
        let report = Arc::new(Reporter {
            changed: changed_tx,
            say: Box::new(move |event| to_slot.send(event)),
        });
        let place = Arc::new(Place { cwd, workspace });
        let servers: Arc<Vec<Arc<Server>>> = Arc::new(
            configs
                .into_iter()
                .map(|c| Arc::new(Server::new(c)))
                .collect(),
        );
        let shutdown = CancellationToken::new();
        for server in servers.iter() {
            tokio::spawn(supervise(
                server.clone(),
                report.clone(),
                place.clone(),
                shutdown.clone(),
            ));
        }
        tokio::spawn(forward(
            servers.clone(),
            slot.clone(),
            changed.clone(),
            shutdown.clone(),
        ));
        Arc::new(Self {
            servers,
            slot,
            changed,
            shutdown,
        })
    }

    /// Every server as it is now.
    pub fn statuses(&self) -> Vec<McpServerStatus> {
        self.servers.iter().map(|s| s.snapshot()).collect()
    }

    /// Returns once no server is starting any more (each start is bounded by its timeout).
    pub async fn wait_started(&self) {
        let mut changed = self.changed.clone();
        while self.servers.iter().any(|s| s.state() == McpState::Starting) {
            if changed.changed().await.is_err() {
                return;
            }
        }
    }

    /// Stops the server `name` (its whole process group) and starts it again.
    pub fn restart(&self, name: &str) -> Result<(), String> {
        match self.servers.iter().find(|s| s.config.name == name) {
            Some(server) if !server.config.enabled => Err(format!(
                "the MCP server `{name}` is disabled (`enabled = false` in {})",
                server.config.origin.file.display()
            )),
            Some(server) => {
                server.restart();
                Ok(())
            }
            None => Err(format!(
                "there is no MCP server `{name}`; the servers are: {}",
                self.names().join(", ")
            )),
        }
    }

    fn names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.config.name.clone()).collect()
    }

    /// Sends events to `sink` from now on: first every server's state and what was said
    /// before anyone listened.
    pub fn attach(&self, sink: EventSink) {
        let mut inner = self.slot.inner.lock().unwrap_or_else(|p| p.into_inner());
        sink.send(AgentEvent::McpServers(self.statuses()));
        for event in inner.1.drain(..) {
            sink.send(event);
        }
        inner.0 = Some(sink);
    }

    /// Sends no more events (the listener is going away).
    pub fn detach(&self) {
        self.slot.inner.lock().unwrap_or_else(|p| p.into_inner()).0 = None;
    }

    /// Stops every server: their tasks end their process groups.
    pub fn shutdown(&self) {
        self.detach();
        self.shutdown.cancel();
    }
}

impl std::fmt::Debug for McpHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpHub")
            .field("servers", &self.names())
            .finish()
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl ToolProvider for McpHub {
    fn tools(&self) -> Vec<Arc<dyn Tool>> {
        self.servers
            .iter()
            .flat_map(|s| s.tools())
            .map(|t| t as Arc<dyn Tool>)
            .collect()
    }
}

/// Sends every server's state to the listener whenever one changes.
async fn forward(
    servers: Arc<Vec<Arc<Server>>>,
    slot: Arc<EventSlot>,
    mut changed: watch::Receiver<u64>,
    shutdown: CancellationToken,
) {
    loop {
        tokio::select! {
            moved = changed.changed() => if moved.is_err() { return },
            _ = shutdown.cancelled() => return,
        }
        let statuses = servers.iter().map(|s| s.snapshot()).collect();
        slot.send(AgentEvent::McpServers(statuses));
    }
}
