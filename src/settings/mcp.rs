//! MCP server entries: the merged form MiniClaw starts servers from, and Codex CLI's
//! `[mcp_servers.NAME]` tables.
//!
//! ```toml
//! [mcp_servers.time]
//! command = "uvx"
//! args = ["mcp-server-time"]
//! env = { TZ = "Europe/Paris" }     # added to the short allow-list servers get
//! cwd = "/some/folder"              # default: the folder MiniClaw starts in
//! startup_timeout_sec = 10          # default 10
//! tool_timeout_sec = 60             # default 60
//! enabled = true
//! enabled_tools = ["get_current_time"]
//! disabled_tools = ["convert_time"]
//!
//! [mcp_servers.remote]
//! url = "https://example.org/mcp"
//! bearer_token_env_var = "REMOTE_TOKEN"
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::error::SettingsError;

/// How long a server may take to start and list its tools, unless its entry says otherwise.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may take, unless its entry says otherwise.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout an entry may ask for (either kind).
const MAX_TIMEOUT_SECS: f64 = 3600.0;

/// Whose file an entry comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The user's own config folder: starts without asking.
    User,
    /// The project folder: starts only once the folder is trusted.
    Project,
}

/// The file an entry comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    /// The file.
    pub file: PathBuf,
    /// Whose it is.
    pub scope: Scope,
}

/// How MiniClaw reaches a server.
#[derive(Clone, PartialEq, Eq)]
pub enum McpTransport {
    /// A child process speaking JSON-RPC on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to the allow-listed environment.
        env: BTreeMap<String, String>,
        /// Its working folder (default: the folder MiniClaw starts in).
        cwd: Option<PathBuf>,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: String,
        /// The variable holding a bearer token for it.
        bearer_token_env_var: Option<String>,
        /// Headers sent with every request.
        headers: BTreeMap<String, String>,
    },
}

// Values of `env` and headers may be tokens: never shown.
impl std::fmt::Debug for McpTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Self::Http {
                url,
                bearer_token_env_var,
                headers,
            } => f
                .debug_struct("Http")
                .field("url", url)
                .field("bearer_token_env_var", bearer_token_env_var)
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
        }
    }
}

/// One MCP server as configured.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerConfig {
    /// Its name in the file (tools are named `mcp__NAME__TOOL` from it).
    pub name: String,
    /// How to reach it.
    pub transport: McpTransport,
    /// How long it may take to start and list its tools.
    pub startup_timeout: Duration,
    /// How long one tool call may take.
    pub tool_timeout: Duration,
    /// `enabled = false` keeps it listed but not started.
    pub enabled: bool,
    /// Only these tools are offered (all when `None`).
    pub enabled_tools: Option<Vec<String>>,
    /// These tools are never offered.
    pub disabled_tools: Vec<String>,
    /// Where it was declared.
    pub origin: Origin,
}

impl McpServerConfig {
    /// A server with default settings (tests, `.mcp.json` entries).
    pub fn new(name: &str, transport: McpTransport, origin: Origin) -> Self {
        Self {
            name: name.to_string(),
            transport,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            tool_timeout: DEFAULT_TOOL_TIMEOUT,
            enabled: true,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            origin,
        }
    }

    /// Whether the server's tool called `tool` is offered.
    pub fn offers(&self, tool: &str) -> bool {
        self.enabled_tools
            .as_ref()
            .is_none_or(|only| only.iter().any(|t| t == tool))
            && !self.disabled_tools.iter().any(|t| t == tool)
    }

    /// One line for the trust question: `NAME: program args…` or `NAME: URL`.
    pub fn summary(&self) -> String {
        match &self.transport {
            McpTransport::Stdio { command, args, .. } => {
                format!("{}: {} {}", self.name, command, args.join(" "))
                    .trim_end()
                    .to_string()
            }
            McpTransport::Http { url, .. } => format!("{}: {url}", self.name),
        }
    }
}

/// An entry as Codex CLI writes it.
#[derive(Deserialize)]
struct CodexEntry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<PathBuf>,
    startup_timeout_sec: Option<f64>,
    tool_timeout_sec: Option<f64>,
    #[serde(default = "yes")]
    enabled: bool,
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    url: Option<String>,
    bearer_token_env_var: Option<String>,
    #[serde(default)]
    http_headers: BTreeMap<String, String>,
}

fn yes() -> bool {
    true
}

const KNOWN_KEYS: [&str; 12] = [
    "command",
    "args",
    "env",
    "cwd",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled",
    "enabled_tools",
    "disabled_tools",
    "url",
    "bearer_token_env_var",
    "http_headers",
];

/// Parses the `mcp_servers` table of a TOML file; broken entries are reported and skipped.
pub(super) fn parse_table(
    value: &toml::Value,
    origin: &Origin,
) -> (Vec<McpServerConfig>, Vec<String>) {
    let Some(table) = value.as_table() else {
        let e = SettingsError::Shape {
            file: origin.file.clone(),
            what: "`mcp_servers` must be a table of [mcp_servers.NAME] entries".into(),
        };
        return (Vec::new(), vec![e.to_string()]);
    };
    let mut servers = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in table {
        if let Some(keys) = entry.as_table() {
            for key in keys.keys().filter(|k| !KNOWN_KEYS.contains(&k.as_str())) {
                let e = SettingsError::UnknownKey {
                    file: origin.file.clone(),
                    name: name.clone(),
                    key: key.clone(),
                };
                warnings.push(e.to_string());
            }
        }
        match parse_entry(name, entry, origin) {
            Ok(server) => servers.push(server),
            Err(what) => warnings.push(
                SettingsError::Entry {
                    file: origin.file.clone(),
                    name: name.clone(),
                    what,
                }
                .to_string(),
            ),
        }
    }
    (servers, warnings)
}

fn parse_entry(
    name: &str,
    entry: &toml::Value,
    origin: &Origin,
) -> Result<McpServerConfig, String> {
    check_name(name)?;
    let entry: CodexEntry = entry
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim().to_string())?;
    let transport = match (entry.command, entry.url) {
        (Some(command), None) if !command.trim().is_empty() => McpTransport::Stdio {
            command,
            args: entry.args,
            env: entry.env,
            cwd: entry.cwd,
        },
        (None, Some(url)) => {
            check_url(&url)?;
            McpTransport::Http {
                url,
                bearer_token_env_var: entry.bearer_token_env_var,
                headers: entry.http_headers,
            }
        }
        (Some(_), Some(_)) => return Err("give either `command` or `url`, not both".into()),
        _ => return Err("it needs `command` (a program) or `url` (a remote server)".into()),
    };
    Ok(McpServerConfig {
        startup_timeout: timeout(
            entry.startup_timeout_sec,
            DEFAULT_STARTUP_TIMEOUT,
            "startup",
        )?,
        tool_timeout: timeout(entry.tool_timeout_sec, DEFAULT_TOOL_TIMEOUT, "tool")?,
        enabled: entry.enabled,
        enabled_tools: entry.enabled_tools,
        disabled_tools: entry.disabled_tools,
        ..McpServerConfig::new(name, transport, origin.clone())
    })
}

/// A server name must be usable in tool names and on the `/mcp restart NAME` line.
pub(super) fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err("a server name must be 1-64 letters, digits, `_` or `-`".into())
    }
}

/// Only `http` and `https` endpoints.
pub(super) fn check_url(url: &str) -> Result<(), String> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        Ok(u) => Err(format!("`url` must be http or https, not {}", u.scheme())),
        Err(e) => Err(format!("`url` is not a URL ({e})")),
    }
}

fn timeout(secs: Option<f64>, default: Duration, which: &str) -> Result<Duration, String> {
    match secs {
        None => Ok(default),
        Some(s) if s > 0.0 && s <= MAX_TIMEOUT_SECS => Ok(Duration::from_secs_f64(s)),
        Some(s) => Err(format!(
            "`{which}_timeout_sec` must be more than 0 and at most {MAX_TIMEOUT_SECS} (it is {s})"
        )),
    }
}
