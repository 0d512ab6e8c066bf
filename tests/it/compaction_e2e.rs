//! Compaction in the real binary: `/compact` in the full-screen UI shows its folded line and,
//! on Enter, the summary; a headless run over a long session reports the compaction it made.

use std::process::Stdio;

use serde_json::Value;

use crate::compaction::{GOAL, SUMMARY, is_summary_request, long_session};
use crate::headless_bin::{headless, text};
use crate::pty::{CTRL_D, ENTER, Launch};
use crate::support::{MockServer, SseBuilder};

/// A workspace whose saved session has `turns` turns.
fn workspace_with(dir: &std::path::Path, turns: usize) -> std::path::PathBuf {
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let session = serde_json::to_string(&long_session(turns)).unwrap();
    std::fs::write(ws.join("history.json"), session).unwrap();
    ws
}

#[test]
fn slash_compact_folds_into_one_line_that_enter_opens_and_the_next_request_carries_it() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("Running them now.")]);
    server.route(is_summary_request, |_| SseBuilder::answer(SUMMARY));
    let dir = tempfile::tempdir().unwrap();
    workspace_with(dir.path(), 300);
    let mut s = Launch::ui(dir.path(), &server.url())
        .key("sk-x")
        .size(40, 120)
        .start();
    s.wait_for("deepseek-flash");
    s.submit("/compact the parser work");
    s.wait_for("Compacted 300 turns · Enter shows the summary");
    let asked = server.requests()[0].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(asked.contains("keep in particular: the parser work"));

    s.submit("now run the tests");
    s.wait_for("Running them now.");
    let next = server.requests()[1].json();
    let messages = next["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "the summary stands for the 300 turns");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains(&format!("> {GOAL}")));

    // Enter in the conversation opens the folded line: the summary as the model reads it.
    s.send("\t");
    s.send(ENTER);
    s.wait_for("split the parser");
    s.wait_until("the line no longer offers Enter", |screen| {
        !screen.contains("Enter shows the summary")
    });
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    // Reopened, the session shows the compaction where it happened.
    let mut again = Launch::ui(dir.path(), &server.url())
        .key("sk-x")
        .size(40, 120)
        .start();
    again.wait_for("Compacted 300 turns");
    again.send(CTRL_D);
    assert_eq!(again.wait_exit(), 0);
}

#[test]
fn a_headless_run_over_a_long_session_compacts_and_reports_it_in_every_format() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("Done in json."),
        SseBuilder::answer("Done in stream-json."),
    ]);
    server.route(is_summary_request, |_| SseBuilder::answer(SUMMARY));
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace_with(dir.path(), 300);
    let out = headless(&ws, &server.url())
        .args(["-c", "--context-tokens", "20000", "--output-format", "json"])
        .args(["-p", "now run the tests"])
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["answer"], "Done in json.");
    let compactions = report["compactions"].as_array().unwrap();
    assert_eq!(compactions.len(), 1);
    assert_eq!(compactions[0]["turns"], 300);
    assert_eq!(compactions[0]["automatic"], true);
    assert!(compactions[0]["summary_tokens"].as_u64().unwrap() > 20);
    let trace = text(&out.stderr);
    assert!(
        trace.contains("[compacting] summarizing 300 earlier turn(s)"),
        "{trace}"
    );
    assert!(trace.contains("[compacted] Compacted 300 turns"), "{trace}");

    // The compacted session goes on without another summary: it fits now.
    let out = headless(&ws, &server.url())
        .args([
            "-c",
            "--context-tokens",
            "20000",
            "--output-format",
            "stream-json",
        ])
        .args(["-p", "again"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let usage = events
        .iter()
        .find(|e| e["type"] == "context_usage")
        .expect("a context_usage event");
    assert_eq!(usage["budget"], 20_000);
    assert_eq!(usage["compact_at"], 16_000);
    assert!(!events.iter().any(|e| e["type"] == "compacted"));
    assert_eq!(server.requests().len(), 3, "one summary, two answers");
}

#[test]
fn a_projects_context_and_cost_tables_are_ignored_and_said() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("Plain answer.")]);
    server.route(is_summary_request, |_| SseBuilder::answer(SUMMARY));
    let dir = tempfile::tempdir().unwrap();
    let ws = workspace_with(dir.path(), 5);
    // A cloned repository that would compact every request into its own summary, think at
    // the dearest effort and hide what it costs.
    std::fs::write(
        dir.path().join("miniclaw.toml"),
        "[context]\ncompact_at = 1\n[deepseek]\nreasoning_effort = \"max\"\n\
         [cost.models.\"deepseek-v4-pro\"]\ncache_hit = 0\ncache_miss = 0\noutput = 0\n",
    )
    .unwrap();
    let out = headless(&ws, &server.url())
        .current_dir(dir.path())
        .args([
            "--trust",
            "-c",
            "--model",
            "deepseek-v4-pro",
            "--output-format",
            "json",
        ])
        .args(["-p", "go on"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["compactions"].as_array().unwrap().len(), 0);
    let said = format!("{} {}", text(&out.stderr), report["notices"]);
    for table in ["[context]", "[deepseek]", "[cost]"] {
        assert!(
            said.contains(&format!("{table} is ignored here")),
            "{table}: {said}"
        );
    }
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "no summary request");
    assert_eq!(requests[0].json()["reasoning_effort"], "high");
    assert!(
        report["cost"]["usd"].as_f64().unwrap_or(0.0) > 0.0,
        "{}",
        report["cost"]
    );
}
