//! `--output-format stream-json`, the real binary against the local model server: every line
//! parses, the events come in order and as they happen (a sub-agent's with its call's id), and
//! the last line is the result — also when Ctrl+C interrupts the turn.

use crate::headless_bin;
use crate::support;

use std::io::{BufRead, BufReader, Read};
use std::process::Stdio;
use std::time::Instant;

use headless_bin::{headless, history_id, text};
use serde_json::{Value, json};
use support::{Gate, MockServer, Reply, SseBuilder, wait};

/// The main agent delegates a file to a sub-agent, which reads it; then the main agent answers.
fn delegating_turn() -> Vec<Reply> {
    vec![
        SseBuilder::new()
            .role()
            .content(&["Delegating."])
            .tool_call(
                0,
                "call_d",
                "delegate_file_analysis",
                &json!({"relative_path": "notes.md", "task": "summarise"}),
                8,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::calls(
            "sub_r",
            "read_text_file",
            json!({"relative_path": "notes.md"}),
        ),
        SseBuilder::answer("The notes say hi."),
        SseBuilder::answer("They say hi."),
    ]
}

/// The `"type"` of each line, for lines of the main agent (`false`) or a sub-agent (`true`).
fn types(lines: &[Value], nested: bool) -> Vec<&str> {
    lines
        .iter()
        .filter(|l| l.get("parent_id").is_some() == nested)
        .map(|l| l["type"].as_str().unwrap())
        .collect()
}

/// Whether `wanted` appear in `all` in this order (other items may come between).
fn in_order(all: &[&str], wanted: &[&str]) -> bool {
    let mut rest = all.iter();
    wanted.iter().all(|w| rest.any(|a| a == w))
}

#[test]
fn stream_json_is_one_event_per_line_then_the_result() {
    let (server, _rt) = MockServer::start_blocking(delegating_turn());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("notes.md"), "hi").unwrap();
    std::fs::write(ws.join("AGENTS.md"), "Be brief.").unwrap();
    let out = headless(&ws, &server.url())
        .args([
            "-p",
            "what do the notes say?",
            "--output-format",
            "stream-json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let main = types(&lines, false);
    // A notice from start (the instructions read) comes first, as a line of its own.
    assert_eq!(
        lines[0],
        json!({"type": "notice", "text": "Read project instructions from AGENTS.md (9 bytes)."})
    );
    assert_eq!(main[1], "turn_started");
    assert_eq!(main.last(), Some(&"result"));
    assert!(
        in_order(
            &main,
            &[
                "turn_started",
                "step_started",
                "content_delta",
                "tool_call_started",
                "tool_finished",
                "step_started",
                "content_delta",
                "turn_finished",
                "result"
            ]
        ),
        "{main:?}"
    );
    let step = lines.iter().find(|l| l["type"] == "step_started").unwrap();
    assert_eq!(step, &json!({"type": "step_started", "step": 1, "max": 6}));
    let call = lines
        .iter()
        .find(|l| l["type"] == "tool_call_started")
        .unwrap();
    assert_eq!(call["arguments"]["task"], "summarise");

    // The sub-agent's events name the delegating call, and come while it runs.
    let nested = types(&lines, true);
    assert!(
        in_order(
            &nested,
            &["step_started", "tool_call_started", "tool_finished"]
        ),
        "{nested:?}"
    );
    assert!(
        lines
            .iter()
            .filter(|l| l.get("parent_id").is_some())
            .all(|l| l["parent_id"] == "call_d")
    );
    let position = |pred: &dyn Fn(&Value) -> bool| lines.iter().position(pred).unwrap();
    let started = position(&|l| l["type"] == "tool_call_started" && l["id"] == "call_d");
    let sub = position(&|l| l["parent_id"] == "call_d" && l["type"] == "tool_finished");
    let finished = position(&|l| l["type"] == "tool_finished" && l["id"] == "call_d");
    assert!(started < sub && sub < finished);
    assert_eq!(lines[sub]["result"]["ok"], true);

    let result = lines.last().unwrap();
    assert_eq!(result["answer"], "They say hi.");
    assert_eq!(result["outcome"], "answered");
    assert_eq!(result["exit_code"], 0);
    assert_eq!(result["session_id"], history_id(&ws));
    let sub_steps = &result["steps"][0]["tool_calls"][0]["steps"];
    assert_eq!(sub_steps[0]["tool_calls"][0]["name"], "read_text_file");
    let finished = lines.iter().find(|l| l["type"] == "turn_finished").unwrap();
    assert_eq!(finished["outcome"], "answered");
}

#[test]
fn stream_json_lines_arrive_while_the_turn_runs() {
    // The rest of the answer waits until the test has read the first delta.
    let gate = Gate::new();
    let slow = SseBuilder::new()
        .role()
        .content(&["early "])
        .until(gate.until("the test to read the first delta"))
        .content(&["late"])
        .finish("stop")
        .done()
        .build();
    let (server, _rt) = MockServer::start_blocking(vec![slow]);
    let dir = tempfile::tempdir().unwrap();
    let mut child = headless(&dir.path().join("ws"), &server.url())
        .args(["-p", "go", "--output-format", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the stream ended early"
        );
        if line.contains("\"content_delta\"") {
            break;
        }
    }
    // Written at the end, the line would have come only once the server gave up holding the
    // stream (after `WAIT`): the turn cannot end before the gate opens.
    assert!(
        started.elapsed() < wait::WAIT,
        "the first delta came only when the turn was over"
    );
    assert!(line.contains("early"), "{line}");
    gate.open();
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        rest.trim_end()
            .lines()
            .last()
            .unwrap()
            .contains("\"type\":\"result\"")
    );
}

#[test]
fn ctrl_c_interrupts_the_turn_and_the_result_says_so() {
    let (server, _rt) = MockServer::start_blocking(vec![Reply::Hang]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let mut child = headless(&ws, &server.url())
        .args(["-p", "go", "--output-format", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    while !line.contains("\"step_started\"") {
        line.clear();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the stream ended early"
        );
    }
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: a plain signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGINT) }, 0);
    let mut rest = String::new();
    stdout.read_to_string(&mut rest).unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(130));
    let result: Value = serde_json::from_str(rest.lines().last().unwrap()).unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["outcome"], "interrupted");
    assert_eq!(result["exit_code"], 130);
    assert_eq!(result["session_id"], history_id(&ws), "the prompt was kept");
}
