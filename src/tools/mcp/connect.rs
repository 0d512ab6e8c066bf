//! Connecting to one server: its transport (a child process on stdio, or streamable HTTP), the
//! MCP handshake through rmcp, and the signal that the connection is gone.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ClientHandler;
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::{ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam};
use rmcp::service::serve_client_with_ct;
use rmcp::service::{NotificationContext, Peer, RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

use super::error::{McpError, stderr_note};
use super::http::HttpClient;
use super::stdio::{self, Launch, ServerProcess};
use crate::settings::{McpServerConfig, McpTransport};

/// How long a connection's end waits for its process's exit status, for the message.
const EXIT_WAIT: Duration = Duration::from_millis(500);

/// MiniClaw's side of the protocol: it offers no capability of its own (no roots, sampling or
/// elicitation) and listens for `notifications/tools/list_changed` and for the progress of the
/// calls it made.
struct Handler {
    list_changed: UnboundedSender<()>,
    progress: ProgressDispatcher,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.list_changed.send(());
    }

    // Only a call that asked for it (its token) is told; others' are dropped.
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("miniclaw", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// A live connection to a server.
pub struct Live {
    /// Where requests go.
    pub peer: Peer<RoleClient>,
    /// Fires when the connection or the server's process ends.
    pub closed: CancellationToken,
    /// The process of a stdio server.
    process: Option<Arc<ServerProcess>>,
    /// Ends the rmcp service (and with it the transport).
    service: CancellationToken,
    /// Where the server's progress notifications go, by the token of the call they are for.
    pub progress: ProgressDispatcher,
}

impl Live {
    /// The last lines the server wrote on stderr (empty for HTTP servers).
    pub fn stderr(&self) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr.text())
            .unwrap_or_default()
    }

    /// Why it ended, once `closed` fired, with its stderr's last lines.
    pub async fn ended(&self) -> McpError {
        let how = match &self.process {
            Some(process) => {
                let _ = tokio::time::timeout(EXIT_WAIT, process.exited.cancelled()).await;
                process
                    .exit_text()
                    .unwrap_or_else(|| "its output closed".into())
            }
            None => "the connection closed".into(),
        };
        McpError::Stopped {
            how,
            stderr: stderr_note(&self.stderr()),
        }
    }

    /// Ends the connection and the server's process group.
    pub async fn stop(&self) {
        self.service.cancel();
        if let Some(process) = &self.process {
            process.stop().await;
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        self.service.cancel();
    }
}

/// Starts the server and runs the handshake, within the entry's startup timeout.
/// `list_changed` hears the server's tool list notifications.
pub async fn connect(
    config: &McpServerConfig,
    default_cwd: &Path,
    workspace: &Path,
    list_changed: UnboundedSender<()>,
) -> Result<Live, McpError> {
    let progress = ProgressDispatcher::new();
    let handler = Handler {
        list_changed,
        progress: progress.clone(),
    };
    let service = CancellationToken::new();
    let secs = config.startup_timeout.as_secs_f64();
    match &config.transport {
        McpTransport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let cwd = match cwd {
                // A relative `cwd` is taken from the folder of the file that declared it.
                Some(dir) => config.origin.file.parent().unwrap_or(default_cwd).join(dir),
                None => default_cwd.to_path_buf(),
            };
            let launch = Launch {
                server: &config.name,
                command,
                args,
                env,
                cwd: &cwd,
                workspace,
            };
            let (process, stdout, stdin) = stdio::spawn(&launch)?;
            let process = Arc::new(process);
            let started = serve_client_with_ct(handler, (stdout, stdin), service.clone());
            let running = match tokio::time::timeout(config.startup_timeout, started).await {
                Ok(Ok(running)) => running,
                Ok(Err(e)) => {
                    let stderr = settle_stderr(&process).await;
                    process.stop().await;
                    return Err(McpError::Handshake {
                        message: e.to_string(),
                        stderr: stderr_note(&stderr),
                    });
                }
                Err(_) => {
                    let stderr = stderr_note(&process.stderr.text());
                    process.stop().await;
                    return Err(McpError::StartTimeout { secs, stderr });
                }
            };
            Ok(watch(running, service, Some(process)))
        }
        McpTransport::Http {
            url,
            bearer_token_env_var,
            headers,
        } => {
            let mut transport_config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .custom_headers(header_map(headers)?);
            if let Some(var) = bearer_token_env_var {
                let token = std::env::var(var)
                    .ok()
                    .filter(|t| !t.is_empty())
                    .ok_or_else(|| McpError::TokenMissing(var.clone()))?;
                transport_config = transport_config.auth_header(token);
            }
            let transport =
                StreamableHttpClientTransport::with_client(HttpClient::new()?, transport_config);
            let started = serve_client_with_ct(handler, transport, service.clone());
            match tokio::time::timeout(config.startup_timeout, started).await {
                Ok(Ok(running)) => Ok(watch(running, service, None)),
                Ok(Err(e)) => Err(McpError::Handshake {
                    message: e.to_string(),
                    stderr: String::new(),
                }),
                Err(_) => Err(McpError::StartTimeout {
                    secs,
                    stderr: String::new(),
                }),
            }
        }
    }
}

/// A server that failed its handshake has usually just written why: give its stderr a moment.
async fn settle_stderr(process: &ServerProcess) -> String {
    let _ = tokio::time::timeout(EXIT_WAIT, process.exited.cancelled()).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    process.stderr.text()
}

/// Fires `closed` when the service ends (the transport closed) or the process exits.
fn watch(
    running: RunningService<RoleClient, Handler>,
    service: CancellationToken,
    process: Option<Arc<ServerProcess>>,
) -> Live {
    let progress = running.service().progress.clone();
    let closed = CancellationToken::new();
    let peer = running.peer().clone();
    let done = closed.clone();
    tokio::spawn(async move {
        let _ = running.waiting().await;
        done.cancel();
    });
    if let Some(process) = &process {
        let (exited, done, service) = (process.exited.clone(), closed.clone(), service.clone());
        tokio::spawn(async move {
            exited.cancelled().await;
            service.cancel();
            done.cancel();
        });
    }
    Live {
        peer,
        closed,
        process,
        service,
        progress,
    }
}

fn header_map(
    headers: &std::collections::BTreeMap<String, String>,
) -> Result<HashMap<HeaderName, HeaderValue>, McpError> {
    headers
        .iter()
        .map(|(name, value)| {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| McpError::BadHeader(name.clone()))?;
            let v = HeaderValue::from_str(value).map_err(|_| McpError::BadHeader(name.clone()))?;
            Ok((n, v))
        })
        .collect()
}
