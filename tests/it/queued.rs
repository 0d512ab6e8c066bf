//! A request DeepSeek keeps in its queue, against the real binary: keep-alives for longer than
//! the idle timeout do not abandon it, the status line counts the wait, and headless runs report
//! it on stream-json and in the trace.

use std::process::Stdio;

use serde_json::Value;

use crate::headless_bin::{headless, text};
use crate::pty::{CTRL_D, Launch};
use crate::support::{Gate, MockServer, SseBuilder};

#[test]
fn the_status_line_counts_the_wait_in_the_queue_and_the_answer_still_comes() {
    // Keep-alives until the test has seen the queue on the screen, then the answer.
    let gate = Gate::new();
    let mut stream = SseBuilder::new();
    for _ in 0..3 {
        stream = stream.keep_alive().pause(400);
    }
    let reply = stream
        .until(gate.until("the screen showed the queue"))
        .role()
        .content(&["Served after the queue."])
        .finish("stop")
        .done()
        .build();
    let (server, _rt) = MockServer::start_blocking(vec![reply]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    s.wait_for("deepseek-flash");
    s.submit("hello");
    s.wait_until("a wait of a second or more", |screen| {
        (1..60).any(|n| screen.contains(&format!("queued at DeepSeek {n} s")))
    });
    gate.open();
    s.wait_for("Served after the queue.");
    s.wait_until("the queue is no longer shown", |screen| {
        !screen.contains("queued at")
    });
    assert_eq!(
        server.requests().len(),
        1,
        "the request was never abandoned"
    );
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn headless_runs_tell_the_wait_on_stream_json_and_once_in_the_trace() {
    let mut stream = SseBuilder::new();
    for _ in 0..6 {
        stream = stream.keep_alive().pause(150);
    }
    let reply = stream
        .role()
        .content(&["Queued answer."])
        .finish("stop")
        .done()
        .build();
    let (server, _rt) = MockServer::start_blocking(vec![reply]);
    let dir = tempfile::tempdir().unwrap();
    let out = headless(dir.path(), &server.url())
        .args(["--output-format", "stream-json", "-p", "hi"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let queued: Vec<&Value> = events.iter().filter(|e| e["type"] == "queued").collect();
    assert_eq!(
        queued.len(),
        7,
        "one a keep-alive, then the start: {queued:?}"
    );
    assert_eq!(queued.last().unwrap()["started"], true);
    assert!(queued.last().unwrap()["waited_ms"].as_u64().unwrap() >= 800);
    let trace = text(&out.stderr);
    assert_eq!(
        trace.matches("[queued] the model server holds").count(),
        1,
        "{trace}"
    );
    assert!(trace.contains("[queued] started after"), "{trace}");
    assert_eq!(events.last().unwrap()["answer"], "Queued answer.");
}
