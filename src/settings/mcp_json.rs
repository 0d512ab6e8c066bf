//! `.mcp.json` in Claude Code's shape:
//!
//! ```json
//! {"mcpServers": {
//!   "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${HOME}/notes"],
//!             "env": {"LOG": "${LOG_LEVEL:-info}"}},
//!   "remote": {"type": "http", "url": "https://example.org/mcp",
//!              "headers": {"Authorization": "Bearer ${TOKEN}"}}
//! }}
//! ```
//!
//! `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env`, `url` and
//! `headers`; an unset variable without a default skips its entry.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::SettingsError;
use super::expand::expand_vars;
use super::mcp::{McpServerConfig, McpTransport, Origin, check_name, check_url};

/// An entry as Claude Code writes it.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ClaudeEntry {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
}

/// Parses the text of a `.mcp.json`; broken entries are reported and skipped.
pub(super) fn parse(
    text: &str,
    origin: &Origin,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> (Vec<McpServerConfig>, Vec<String>) {
    let file = origin.file.clone();
    let root: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(source) => {
            return (
                Vec::new(),
                vec![SettingsError::Json { file, source }.to_string()],
            );
        }
    };
    let Some(servers) = root.get("mcpServers").and_then(Value::as_object) else {
        let what = "it has no `mcpServers` object".to_string();
        return (
            Vec::new(),
            vec![SettingsError::Shape { file, what }.to_string()],
        );
    };
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in servers {
        match parse_entry(name, entry, origin, lookup) {
            Ok(server) => found.push(server),
            Err(what) => warnings.push(
                SettingsError::Entry {
                    file: file.clone(),
                    name: name.clone(),
                    what,
                }
                .to_string(),
            ),
        }
    }
    (found, warnings)
}

fn parse_entry(
    name: &str,
    entry: &Value,
    origin: &Origin,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpServerConfig, String> {
    check_name(name)?;
    let entry: ClaudeEntry = serde_json::from_value(entry.clone()).map_err(|e| e.to_string())?;
    let mut missing = Vec::new();
    let mut expand = |text: &str| match expand_vars(text, lookup) {
        Ok(t) => t,
        Err(names) => {
            missing.extend(names);
            String::new()
        }
    };
    let transport = match (entry.kind.as_deref(), entry.command, entry.url) {
        (None | Some("stdio"), Some(command), None) => McpTransport::Stdio {
            command: expand(&command),
            args: entry.args.iter().map(|a| expand(a)).collect(),
            env: expand_map(&entry.env, &mut expand),
            cwd: None,
        },
        (None | Some("http" | "streamable-http"), None, Some(url)) => McpTransport::Http {
            url: expand(&url),
            bearer_token_env_var: None,
            headers: expand_map(&entry.headers, &mut expand),
        },
        (Some("sse"), ..) => {
            return Err(
                "`\"type\": \"sse\"` (the old SSE transport) is not supported; use a streamable HTTP endpoint (`\"type\": \"http\"`)".into(),
            );
        }
        (Some(other), ..) if !matches!(other, "stdio" | "http" | "streamable-http") => {
            return Err(format!("unknown `type` \"{other}\" (stdio or http)"));
        }
        _ => {
            return Err(
                "it needs `command` (a program) or `url` (with `\"type\": \"http\"`)".into(),
            );
        }
    };
    if !missing.is_empty() {
        missing.dedup();
        return Err(format!(
            "environment variable(s) {} not set and without a default (`${{VAR:-default}}`)",
            missing.join(", ")
        ));
    }
    match &transport {
        McpTransport::Stdio { command, .. } if command.trim().is_empty() => {
            return Err("`command` is empty".into());
        }
        McpTransport::Http { url, .. } => check_url(url)?,
        McpTransport::Stdio { .. } => {}
    }
    Ok(McpServerConfig::new(name, transport, origin.clone()))
}

fn expand_map(
    map: &BTreeMap<String, String>,
    expand: &mut impl FnMut(&str) -> String,
) -> BTreeMap<String, String> {
    map.iter().map(|(k, v)| (k.clone(), expand(v))).collect()
}
