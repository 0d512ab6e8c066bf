//! End to end: the real `miniclaw-tui` in a pseudo-terminal in the `ask` approval mode, against
//! the local scripted model server: a write denied with a reason (the file unchanged, the reason
//! in the observation), then approved (the file written), then `/undo` (the file as before); and
//! `read-only` refusing the shell.

use crate::pty::{CTRL_D, ENTER, Launch, Pty};
use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{MockServer, RecordedRequest, Reply, SseBuilder};

/// The program in `dir` (home, config and workspace inside it) with `args`.
fn start(dir: &Path, base_url: &str, args: &[&str]) -> Pty {
    Launch::ui(dir, base_url)
        .key("sk-approvals")
        .args(args)
        .start()
}

fn call(tool: &str, args: Value) -> Reply {
    SseBuilder::new()
        .role()
        .content(&["Let me do that."])
        .tool_call(0, "call_0", tool, &args, 16)
        .finish("tool_calls")
        .done()
        .build()
}

/// The tool observations a request carries.
fn observations(request: &RecordedRequest) -> Vec<Value> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect()
}

fn wait_requests(server: &MockServer, n: usize, pty: &Pty) -> Vec<RecordedRequest> {
    pty.wait_on(&format!("the server to see {n} requests"), || {
        Some(server.requests()).filter(|r| r.len() >= n)
    })
}

#[test]
fn ask_denies_with_a_reason_then_approves_then_undo_puts_the_file_back() {
    let write = || {
        call(
            "write_text_file",
            json!({"relative_path": "hello.txt", "content": "from the model\n"}),
        )
    };
    let (server, _rt) = MockServer::start_blocking(vec![
        write(),
        SseBuilder::answer("left-alone-answer."),
        write(),
        SseBuilder::answer("written-answer."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ws/hello.txt");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "mine\n").unwrap();
    let mut p = start(dir.path(), &server.url(), &["--approval", "ask"]);
    p.wait_for("approval: ask");
    p.submit("overwrite hello.txt");
    // The title names the action and the file; the diff comes first and the raw arguments
    // are folded away until `v` shows them.
    p.wait_for("Write hello.txt?");
    p.wait_for("-mine");
    p.wait_for("+from the model");
    p.wait_for("v shows the arguments");
    assert!(
        !p.screen().contains("\"content\""),
        "the raw arguments are folded: {}",
        p.screen()
    );
    // Keys pressed just as the dialog appears are not taken as its answer.
    p.answer("n", "the line for a reason", |s| s.contains("Why not?"));
    p.send("keep my words");
    p.wait_for("keep my words");
    p.send(ENTER);
    p.wait_for("left-alone-answer.");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    let requests = wait_requests(&server, 2, &p);
    let seen = observations(&requests[1]);
    assert_eq!(
        seen[0]["error"], "denied by the user: keep my words",
        "{seen:?}"
    );
    p.wait_for("│ idle │");

    p.submit("now write it");
    p.wait_for("Write hello.txt?");
    p.answer("y", "the dialog closed", |s| {
        !s.contains("Write hello.txt?")
    });
    p.wait_for("written-answer.");
    p.wait_for("✓ approved");
    // The change shows under the call line in the conversation, as a diff.
    p.wait_for("hello.txt: +1 \u{2212}1");
    p.wait_for("+ from the model");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "from the model\n");
    p.wait_for("│ idle │");

    p.submit("/undo");
    p.wait_for("Undid the changes of “now write it”: hello.txt restored.");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn read_only_refuses_the_shell() {
    let (server, _rt) = MockServer::start_blocking(vec![
        call("run_shell_command", json!({"command": "ls", "args": []})),
        SseBuilder::answer("refused-answer."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url(), &["--approval", "read-only"]);
    p.wait_for("approval: read-only");
    p.submit("list the files with ls");
    p.wait_for("refused-answer.");
    let requests = wait_requests(&server, 2, &p);
    let seen = observations(&requests[1]);
    assert!(
        seen[0]["error"]
            .as_str()
            .unwrap()
            .contains("read-only mode"),
        "{seen:?}"
    );
    p.wait_for("│ idle │");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}
