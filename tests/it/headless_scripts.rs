//! Headless mode for scripts, the real binary against the local model server: the prompt from
//! stdin (piped in, or `-p -`), `--output-format json` parsed as a script would, and what is
//! refused (an empty or oversized stdin, `--output-format` without headless mode).

use crate::headless_bin;
use crate::pty::Launch;
use crate::support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use headless_bin::{bin, headless, history_id, text};
use serde_json::{Value, json};
use support::{MockServer, Reply, SseBuilder};

/// Runs `cmd` with `input` on its stdin (written from a thread: a refused input closes the pipe
/// early, which is not the test's failure).
fn run_with_stdin(mut cmd: Command, input: Vec<u8>) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// The content of the last message of a request (the prompt, in a turn's first request).
fn last_message(request: &support::RecordedRequest) -> Value {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone()
}

#[test]
fn a_prompt_piped_in_without_p_runs_headless() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("piped answer")]);
    let dir = tempfile::tempdir().unwrap();
    let out = run_with_stdin(
        headless(&dir.path().join("ws"), &server.url()),
        b"What is in the folder?\n".to_vec(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "piped answer\n");
    let prompt = last_message(&server.requests()[0]);
    assert_eq!(prompt["role"], "user");
    assert_eq!(
        prompt["content"], "What is in the folder?",
        "the line end is dropped"
    );
}

#[test]
fn dash_reads_the_prompt_from_stdin() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("ok")]);
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = headless(&dir.path().join("ws"), &server.url());
    cmd.args(["-p", "-"]);
    let out = run_with_stdin(cmd, "  two lines,\n中文 too\n\n".as_bytes().to_vec());
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok\n");
    assert_eq!(
        last_message(&server.requests()[0])["content"],
        "  two lines,\n中文 too"
    );
}

#[test]
fn an_empty_or_oversized_stdin_is_refused_before_anything_runs() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    for input in [&b""[..], b"\n  \n"] {
        let out = run_with_stdin(headless(&ws, &server.url()), input.to_vec());
        assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
        assert!(
            text(&out.stderr).contains("the prompt read from stdin is empty"),
            "{}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty());
    }
    // In JSON, a script still finds a report.
    let mut cmd = headless(&ws, &server.url());
    cmd.args(["-p", "-", "--output-format", "json"]);
    let out = run_with_stdin(cmd, Vec::new());
    assert_eq!(out.status.code(), Some(2));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exit_code"], 2);
    assert_eq!(report["outcome"], "failed");
    assert_eq!(report["session_id"], Value::Null);
    assert!(report["errors"][0].as_str().unwrap().contains("empty"));

    let big = vec![b'a'; 10 * 1024 * 1024 + 1];
    let out = run_with_stdin(headless(&ws, &server.url()), big);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("larger than 10 MB"),
        "{}",
        text(&out.stderr)
    );
    assert!(server.requests().is_empty(), "nothing was sent");
    assert!(!ws.join("history.json").exists(), "nothing was saved");
}

/// A turn that writes a file, then answers.
fn write_then_answer() -> Vec<Reply> {
    vec![
        SseBuilder::new()
            .role()
            .content(&["I'll write it."])
            .tool_call(
                0,
                "call_w",
                "write_text_file",
                &json!({"relative_path": "note.txt", "content": "hi"}),
                6,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("Wrote note.txt."),
    ]
}

#[test]
fn json_output_is_one_object_with_the_steps_calls_results_and_answer() {
    let (server, _rt) = MockServer::start_blocking(write_then_answer());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let out = headless(&ws, &server.url())
        .args(["-p", "write a note", "--output-format", "json"])
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        stdout.lines().count(),
        1,
        "one object, nothing else:\n{stdout}"
    );
    let report: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["answer"], "Wrote note.txt.");
    assert_eq!(report["outcome"], "answered");
    assert_eq!(report["exit_code"], 0);
    assert_eq!(report["errors"], json!([]));
    assert_eq!(report["usage"]["total_tokens"], 300, "two responses of 150");
    assert_eq!(report["session_id"], history_id(&ws));
    let steps = report["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["step"], 1);
    assert_eq!(steps[0]["thought"], "I'll write it.");
    let call = &steps[0]["tool_calls"][0];
    assert_eq!(call["id"], "call_w");
    assert_eq!(call["name"], "write_text_file");
    assert_eq!(
        call["arguments"],
        json!({"relative_path": "note.txt", "content": "hi"})
    );
    assert_eq!(call["result"]["ok"], true);
    assert_eq!(call["result"]["tool"], "write_text_file");
    assert!(call["duration_ms"].is_u64(), "{call}");
    assert_eq!(steps[1]["tool_calls"], json!([]));
    assert_eq!(
        steps[1]["thought"],
        Value::Null,
        "the answer is not a thought"
    );
    // The person watching still has the trace.
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("[Step 1 Action] write_text_file("),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("note.txt")).unwrap(), "hi");
}

#[test]
fn json_output_of_a_turn_stopped_at_the_step_limit() {
    let (server, _rt) = MockServer::start_blocking(write_then_answer());
    let dir = tempfile::tempdir().unwrap();
    let out = headless(&dir.path().join("ws"), &server.url())
        .args(["-p", "go", "--max-steps", "1", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "step_limit");
    assert_eq!(report["exit_code"], 3);
    assert_eq!(report["answer"], Value::Null);
    let notices = report["notices"].as_array().unwrap();
    assert!(
        notices
            .iter()
            .any(|n| n.as_str().unwrap().contains("step limit")),
        "{notices:?}"
    );
    // The way on is named in flags, which is what can be typed here.
    let stderr = text(&out.stderr);
    assert!(stderr.contains("--max-steps N"), "{stderr}");
    assert!(!stderr.contains("/steps"), "{stderr}");
}

#[test]
fn output_format_without_headless_mode_is_refused() {
    let out = bin()
        .args(["--list-tools", "--output-format", "json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--output-format is for headless mode only"),
        "{}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn output_format_in_a_terminal_without_p_is_refused_rather_than_opening_the_screen() {
    let dir = tempfile::tempdir().unwrap();
    let mut p = Launch::new(dir.path(), dir.path())
        .size(24, 200)
        .args(["--workspace", dir.path().join("ws").to_str().unwrap()])
        .args(["--output-format", "json"])
        .env("XDG_CONFIG_HOME", dir.path().join("config"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .start();
    // Had the screen opened, it would not exit.
    assert_eq!(p.wait_exit(), 2);
    let shown = text(&p.raw());
    assert!(
        shown.contains("--output-format is for headless mode only"),
        "{shown}"
    );
}
