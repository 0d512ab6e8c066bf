//! MCP servers in the full-screen UI, on a pseudo-terminal: the status line counts them while
//! not all are up, `/mcp` lists them, `/mcp restart NAME` ends the old process group and starts
//! a new one, and SIGTERM to MiniClaw ends the servers.

use crate::mcp;

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mcp::{config_home, stdio_entry};
use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const WAIT: Duration = Duration::from_secs(30);

/// The UI on a pseudo-terminal; its screen as text.
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn portable_pty::Child + Send + Sync>,
    _master: Box<dyn portable_pty::MasterPty + Send>,
}

impl Screen {
    fn start(dir: &Path, config: &Path) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 140,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
        cmd.args(["--workspace", dir.join("ws").to_str().unwrap()]);
        cmd.cwd(dir);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().to_string();
            if k.starts_with("DEEPSEEK_") || k.starts_with("MINICLAW_") {
                cmd.env_remove(k);
            }
        }
        cmd.env("HOME", dir);
        cmd.env("XDG_CONFIG_HOME", config);
        cmd.env("XDG_DATA_HOME", dir.join("data"));
        cmd.env("TERM", "xterm-256color");
        cmd.env("DEEPSEEK_API_KEY", "sk-x");
        cmd.env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9");
        let child = pty.slave.spawn_command(cmd).unwrap();
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(40, 140, 0)));
        let p = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                p.lock().unwrap().process(&buf[..n]);
            }
        });
        Self {
            parser,
            writer: pty.master.take_writer().unwrap(),
            child,
            _master: pty.master,
        }
    }

    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn wait_for(&self, what: &str) {
        let start = Instant::now();
        while !self.text().contains(what) {
            assert!(
                start.elapsed() < WAIT,
                "no {what:?} on the screen:\n{}",
                self.text()
            );
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    fn submit(&mut self, line: &str) {
        self.writer.write_all(line.as_bytes()).unwrap();
        self.writer.flush().unwrap();
        self.wait_for(line);
        self.writer.write_all(b"\r").unwrap();
        self.writer.flush().unwrap();
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn wait_gone(pid: u32) {
    let start = Instant::now();
    while mcp::alive(pid) {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "process {pid} is still running"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
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
    let mut screen = Screen::start(dir.path(), &config);
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
        .args(["-TERM", &screen.child.process_id().unwrap().to_string()])
        .status()
        .unwrap();
    let start = Instant::now();
    while screen.child.try_wait().unwrap().is_none() {
        assert!(start.elapsed() < WAIT, "MiniClaw did not exit");
        std::thread::sleep(Duration::from_millis(30));
    }
    wait_gone(second);
}
