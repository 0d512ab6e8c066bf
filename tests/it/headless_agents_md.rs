//! A workspace's AGENTS.md, end to end: the real binary reads it, says so on stderr, and the
//! model server receives it in the system message of every request — cut with a note when it
//! is too long, rebuilt for a session continued from history.json, refused through a link out.

use crate::headless_bin;
use crate::support;

use std::path::Path;
use std::process::Output;

use headless_bin::bin;
use miniclaw::agent::session::SYSTEM_PROMPT;
use serde_json::{Value, json};
use support::{MockServer, Reply, SseBuilder};

/// The start notice of instructions that changed since the session last read them.
const CHANGED: &str = "[notice] AGENTS.md changed since this session last read it; the system \
     prompt now carries the new text. /instructions diff shows the change.";

fn run(ws: &Path, url: &str, extra: &[&str]) -> Output {
    bin()
        .args(["--workspace", ws.to_str().unwrap(), "-p", "hi"])
        .args(extra)
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", url)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The system message of every request the server received.
fn system_messages(server: &MockServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .map(|r| {
            let first = r.json()["messages"][0].clone();
            assert_eq!(first["role"], "system");
            first["content"].as_str().unwrap().to_string()
        })
        .collect()
}

fn saved_history(ws: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(ws.join("history.json")).unwrap()).unwrap()
}

fn tool_then_answer() -> Vec<Reply> {
    vec![
        SseBuilder::calls("c1", "list_files", json!({})),
        SseBuilder::answer("done"),
    ]
}

#[test]
fn agents_md_is_in_the_system_message_of_every_request_and_named_at_start() {
    let (server, _rt) = MockServer::start_blocking(tool_then_answer());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("AGENTS.md"), "Always answer in French.\n").unwrap();
    let out = run(&ws, &server.url(), &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("[notice] Read project instructions from AGENTS.md (25 bytes).\n"),
        "{err}"
    );
    let systems = system_messages(&server);
    assert_eq!(systems.len(), 2, "a tool call, then the answer");
    for system in &systems {
        assert!(system.starts_with(SYSTEM_PROMPT), "{system}");
        assert!(
            system.contains("# Project instructions (AGENTS.md)"),
            "{system}"
        );
        assert!(system.ends_with("Always answer in French."), "{system}");
    }
}

#[test]
fn an_oversized_agents_md_is_cut_with_a_note() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("ok")]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut long = "HEAD-MARKER ".to_string();
    long.push_str(&"x".repeat(40 * 1024 - long.len() - "TAIL-MARKER".len()));
    long.push_str("TAIL-MARKER");
    assert_eq!(long.len(), 40 * 1024);
    std::fs::write(ws.join("AGENTS.md"), &long).unwrap();
    let out = run(&ws, &server.url(), &["--output-format", "json"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    let notice = "Read project instructions from AGENTS.md (40 KB). It is longer than 32 KB: only its start is used.";
    assert!(err.contains(notice), "{err}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        report["notices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n == notice)
    );
    let system = &system_messages(&server)[0];
    assert!(system.contains("HEAD-MARKER"));
    assert!(!system.contains("TAIL-MARKER"), "the end was cut");
    assert!(
        system.ends_with("[AGENTS.md was cut here: only its first 32 KB of 40 KB are included.]"),
        "{}",
        &system[system.len() - 200..]
    );
}

#[test]
fn a_continued_session_gets_the_instructions_as_they_are_now() {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("first")]);
    assert!(run(&ws, &server.url(), &[]).status.success());
    assert_eq!(saved_history(&ws)["messages"][0]["content"], SYSTEM_PROMPT);
    let session_id = saved_history(&ws)["id"].clone();

    // The file appears: the stored system message is older than it, and is rebuilt.
    std::fs::write(ws.join("AGENTS.md"), "Use tabs.").unwrap();
    let (server, _rt2) = MockServer::start_blocking(vec![SseBuilder::answer("second")]);
    let out = run(&ws, &server.url(), &["--continue"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains(CHANGED), "{}", stderr(&out));
    let system = &system_messages(&server)[0];
    assert!(system.ends_with("Use tabs."), "{system}");
    let request = &server.requests()[0].json();
    let contents: Vec<&str> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or(""))
        .collect();
    assert!(
        contents.contains(&"first"),
        "the earlier turn is still sent"
    );
    let history = saved_history(&ws);
    assert_eq!(history["id"], session_id, "the same session");
    assert!(
        history["messages"][0]["content"]
            .as_str()
            .unwrap()
            .ends_with("Use tabs.")
    );
    assert_eq!(history["messages"].as_array().unwrap().len(), 5);

    // And it goes again with the file.
    std::fs::remove_file(ws.join("AGENTS.md")).unwrap();
    let (server, _rt3) = MockServer::start_blocking(vec![SseBuilder::answer("third")]);
    let out = run(&ws, &server.url(), &[]);
    // Gone is a change too; nothing else is said about the file.
    let err = stderr(&out);
    assert!(err.contains(CHANGED), "{err}");
    assert!(!err.replace(CHANGED, "").contains("AGENTS.md"), "{err}");
    assert_eq!(system_messages(&server)[0], SYSTEM_PROMPT);
}

#[test]
fn an_agents_md_linking_out_of_the_workspace_is_not_read() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("ok")]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(dir.path().join("secret.md"), "SECRET-OUTSIDE").unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.md"), ws.join("AGENTS.md")).unwrap();
    let out = run(&ws, &server.url(), &[]);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("[notice] AGENTS.md was not read (") && err.contains("outside the workspace"),
        "{err}"
    );
    assert_eq!(system_messages(&server)[0], SYSTEM_PROMPT);
}
