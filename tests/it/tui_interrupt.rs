//! Ctrl+C on a running tool, in the real binary: what it had printed stays on the screen, and the
//! model is told that the person interrupted it, with that output.

use std::os::unix::fs::OpenOptionsExt;

use serde_json::json;

use crate::pty::{CTRL_D, Launch};
use crate::support::{MockServer, SseBuilder};

const CTRL_C: &str = "\x03";

#[test]
fn an_interrupted_tool_keeps_its_output_and_the_model_hears_what_came() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls(
            "c1",
            "run_shell_command",
            json!({"command": "cat", "args": ["build.log"]}),
        ),
        SseBuilder::answer("You stopped it after two steps."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let fifo = ws.join("build.log");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    // 80×24: the side panes are hidden, so the conversation alone must show what came.
    let mut s = Launch::ui(dir.path(), &server.url())
        .key("sk-x")
        .size(24, 80)
        .start();
    s.wait_for("deepseek-flash");
    s.submit("watch the build");
    // `cat` has the pipe open once a writer that does not wait can open it.
    let mut writer = s.wait_on("`cat` to open the pipe", || {
        std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .ok()
    });
    std::io::Write::write_all(&mut writer, b"step one done\nstep two done\n").unwrap();
    s.wait_for("step two done");
    s.send(CTRL_C);
    s.wait_for("interrupted");
    // What it had printed stays under its call line.
    // What it printed is still shown, after the interrupt.
    let screen = s.screen();
    let conversation: String = screen
        .lines()
        .take_while(|l| !l.starts_with('╰'))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(conversation.contains("step two done"), "{screen}");
    drop(writer);

    s.submit("what happened?");
    s.wait_for("You stopped it after two steps.");
    let requests = server.requests();
    let tool = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .expect("the call's result went back");
    let content = tool["content"].as_str().unwrap();
    assert!(content.contains("interrupted by the person"), "{content}");
    assert!(
        content.contains("step one done\\nstep two done"),
        "{content}"
    );
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}
