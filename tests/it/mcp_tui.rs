//! MCP servers in the full-screen UI, on a pseudo-terminal: the status line counts them while
//! not all are up, `/mcp` lists them, `/mcp restart NAME` ends the old process group and starts
//! a new one, and SIGTERM to MiniClaw ends the servers.

use crate::mcp;

use std::path::Path;

use crate::pty::{Launch, Pty};
use crate::support::wait;
use mcp::{config_home, stdio_entry};

/// The UI on a pseudo-terminal, its config folder `config`, no model server to reach.
fn start(dir: &Path, config: &Path) -> Pty {
    Launch::new(dir, dir)
        .args(["--workspace", dir.join("ws").to_str().unwrap()])
        .env("XDG_CONFIG_HOME", config)
        .env("XDG_DATA_HOME", dir.join("data"))
        .key("sk-x")
        .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9")
        .start()
}

fn wait_gone(pid: u32) {
    wait::until(&format!("process {pid} to end"), || !mcp::alive(pid));
}

#[test]
fn status_line_mcp_listing_restart_and_exit() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("everything.pid");
    let launch = format!(
        "echo $$ > {}; exec {} {} stdio",
        pid_file.display(),
        mcp::node(),
        mcp::everything_js()
    );
    let config = config_home(
        dir.path(),
        &format!(
            "{}{}",
            stdio_entry("everything", "sh", &["-c", &launch], ""),
            stdio_entry("ghost", "no-such-mcp-program", &[], ""),
        ),
    );
    let mut screen = start(dir.path(), &config);
    // One of two is up: the status line says so, and the failure is in the conversation.
    screen.wait_for("MCP 1/2");
    screen.wait_for("MCP server `ghost` could not start: the program `no-such-mcp-program`");
    let first = mcp::read_pid(&pid_file, 20);

    screen.submit("/mcp");
    screen.wait_for("everything — ready, 13 tool(s)");
    screen.wait_for("ghost — failed, 0 tool(s)");
    screen.wait_for("last error: the program `no-such-mcp-program` was not found on PATH");

    screen.submit("/tools");
    screen.wait_for("mcp__everything__echo [mcp everything] — Echoes back the input string");

    std::fs::remove_file(&pid_file).unwrap();
    screen.submit("/mcp restart everything");
    screen.wait_for("MCP server `everything` is running again: 13 tool(s).");
    let second = mcp::read_pid(&pid_file, 20);
    assert_ne!(first, second);
    wait_gone(first);
    assert!(mcp::alive(second));

    screen.submit("/mcp restart nobody");
    screen.wait_for("There is no MCP server `nobody`; the servers are: everything, ghost.");

    // A signal ends MiniClaw, and its servers with it.
    std::process::Command::new("kill")
        .args(["-TERM", &screen.pid().unwrap().to_string()])
        .status()
        .unwrap();
    screen.wait_exit();
    wait_gone(second);
}
