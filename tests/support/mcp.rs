//! The reference MCP servers the MCP tests drive, installed by `bash .ci/mcp/install` into
//! `.ci/mcp` (or the folder `MINICLAW_MCP_SERVERS` names), small test servers written in Python,
//! and helpers to write MiniClaw's config file and read observations. A missing server fails
//! the test with the command that installs it: these tests never pass by skipping.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

const INSTALL: &str = "run `bash scripts/test.sh` (the README's test command) or `bash .ci/mcp/install` (they need Node.js with npm, and python3 with venv; .ci/run does it in CI)";

/// Where the reference servers are installed.
pub fn servers_dir() -> PathBuf {
    match std::env::var_os("MINICLAW_MCP_SERVERS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/mcp"),
    }
}

fn require(path: PathBuf, what: &str) -> String {
    assert!(
        path.exists(),
        "{what} is not installed at {}: {INSTALL}",
        path.display()
    );
    path.to_string_lossy().into_owned()
}

/// `node`, which the npm servers run on.
pub fn node() -> String {
    let found = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|d| d.join("node"))
            .find(|p| p.is_file())
    });
    match found {
        Some(p) => p.to_string_lossy().into_owned(),
        None => panic!("Node.js is not installed (apt-get install nodejs npm), then {INSTALL}"),
    }
}

/// `@modelcontextprotocol/server-everything`'s entry script.
pub fn everything_js() -> String {
    require(
        servers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "@modelcontextprotocol/server-everything",
    )
}

/// `@modelcontextprotocol/server-filesystem`'s entry script.
pub fn filesystem_js() -> String {
    require(
        servers_dir().join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"),
        "@modelcontextprotocol/server-filesystem",
    )
}

/// `mcp-server-time` in its virtual environment.
pub fn time_bin() -> String {
    require(
        servers_dir().join("venv/bin/mcp-server-time"),
        "mcp-server-time",
    )
}

/// A TOML string literal.
pub fn lit(text: &str) -> String {
    Value::String(text.to_string()).to_string()
}

/// `[mcp_servers.NAME]` running `command args…`, plus `extra` lines.
pub fn stdio_entry(name: &str, command: &str, args: &[&str], extra: &str) -> String {
    let args: Vec<String> = args.iter().map(|a| lit(a)).collect();
    format!(
        "[mcp_servers.{name}]\ncommand = {}\nargs = [{}]\n{extra}\n",
        lit(command),
        args.join(", ")
    )
}

/// server-everything on stdio as `[mcp_servers.NAME]`.
pub fn everything_entry(name: &str, extra: &str) -> String {
    stdio_entry(name, &node(), &[&everything_js(), "stdio"], extra)
}

/// Writes `<root>/config/miniclaw/config.toml`; returns the folder to give as XDG_CONFIG_HOME.
pub fn config_home(root: &Path, toml: &str) -> PathBuf {
    let home = root.join("config");
    std::fs::create_dir_all(home.join("miniclaw")).unwrap();
    std::fs::write(home.join("miniclaw/config.toml"), toml).unwrap();
    home
}

/// A small MCP server in Python (no packages needed): `mute` reads and never answers;
/// `dynamic` offers `add_tool`, which adds a tool `added` and sends
/// `notifications/tools/list_changed`; `pid` writes its process id to the file given after it.
pub const PY_SERVER: &str = r#"
import json, os, sys
mode = sys.argv[1]
if len(sys.argv) > 2:
    open(sys.argv[2], "w").write(str(os.getpid()))
if mode == "mute":
    sys.stderr.write("mute server: reading requests, answering none\n")
    sys.stderr.flush()
    for line in sys.stdin:
        pass
    sys.exit(0)
tools = [{"name": "add_tool", "description": "Adds the tool `added`.",
          "inputSchema": {"type": "object", "properties": {}}}]
def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    method, id = message.get("method"), message.get("id")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": id, "result": {
            "protocolVersion": message["params"]["protocolVersion"],
            "capabilities": {"tools": {"listChanged": True}},
            "serverInfo": {"name": "dynamic", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": id, "result": {"tools": tools}})
    elif method == "tools/call":
        name = message["params"]["name"]
        if name == "add_tool" and len(tools) == 1:
            tools.append({"name": "added", "description": "A tool that appeared later.",
                          "inputSchema": {"type": "object", "properties": {}},
                          "annotations": {"readOnlyHint": True}})
            send({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
        send({"jsonrpc": "2.0", "id": id, "result": {
            "content": [{"type": "text", "text": "called " + name}]}})
    elif id is not None:
        send({"jsonrpc": "2.0", "id": id, "result": {}})
"#;

/// Writes [`PY_SERVER`] into `dir`; returns its path.
pub fn py_server(dir: &Path) -> String {
    let path = dir.join("py_server.py");
    std::fs::write(&path, PY_SERVER).unwrap();
    path.to_string_lossy().into_owned()
}

/// The tool messages (parsed) of a recorded model request, in order.
pub fn observations(request: &Value) -> Vec<Value> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

/// The names of the tools offered in a recorded model request.
pub fn offered(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Whether the process `pid` still exists (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// Waits up to `secs` for `path` to hold a process id.
pub fn read_pid(path: &Path, secs: u64) -> u32 {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no pid in {}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
