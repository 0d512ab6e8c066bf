//! End to end: `/plan` in the real `miniclaw-tui` in a pseudo-terminal against the local model
//! server. The planner's requests name the pro preset and offer only read-only tools; the plan
//! waits in the input, is edited, and Enter runs it with the flash preset item by item; a
//! restart shows the plan and its progress from the history. Esc stops a running plan.

use crate::pty::{CTRL_D, ENTER, ESC, Launch, Pty};
use crate::support;

use std::path::Path;

use serde_json::{Value, json};
use support::{MockServer, RecordedRequest, SseBuilder};

/// The program in `dir` (home, config and workspace inside it).
fn start(dir: &Path, base_url: &str) -> Pty {
    Launch::ui(dir, base_url).key("sk-plan").start()
}

fn tools(request: &RecordedRequest) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

fn last_user(request: &RecordedRequest) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().unwrap().clone();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap_or("").to_string()
}

#[test]
fn slash_plan_plans_with_pro_is_edited_then_runs_with_flash_and_comes_back_after_a_restart() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("1. Write plan.txt\n2. Read it back"),
        SseBuilder::calls(
            "w1",
            "write_text_file",
            json!({"relative_path": "plan.txt", "content": "planned"}),
        ),
        SseBuilder::answer("Wrote plan.txt."),
        SseBuilder::answer("It says planned."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("Enter sends");
    p.submit("/plan Make a file");
    p.wait_for("Enter runs it item by item");
    p.wait_for("○ 2. Read it back");
    // Edit the second item in the input: "back" becomes "aloud".
    p.send(&"\x7f".repeat(4));
    p.send("aloud");
    p.wait_for("2. Read it aloud");
    p.send(ENTER);
    p.wait_for("Plan done: 2 of 2 items.");
    p.wait_for("✓ 2. Read it aloud");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("ws/plan.txt")).unwrap(),
        "planned"
    );

    let requests = server.requests();
    let models: Vec<Value> = requests.iter().map(|r| r.json()["model"].clone()).collect();
    assert_eq!(
        models,
        [
            "deepseek-v4-pro",
            "deepseek-flash",
            "deepseek-flash",
            "deepseek-flash"
        ]
    );
    let planner = tools(&requests[0]);
    assert!(
        planner.contains(&"read_text_file".to_string()),
        "{planner:?}"
    );
    assert!(
        !planner.contains(&"write_text_file".to_string()),
        "{planner:?}"
    );
    assert!(tools(&requests[1]).contains(&"write_text_file".to_string()));
    let second = last_user(&requests[3]);
    assert!(second.contains("2. [now] Read it aloud"), "{second}");

    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);

    // Reopened: the plan and where each item ended, from the history.
    let mut again = start(dir.path(), &server.url());
    again.wait_for("done · 2 of 2 items");
    again.wait_for("▶ Item 2 of 2 · Read it aloud");
    again.wait_for("turn 2 · plan of 2 items");
    again.send(CTRL_D);
    assert_eq!(again.wait_exit(), 0);
    assert_eq!(server.requests().len(), 4, "nothing was sent again");
}

#[test]
fn esc_stops_a_running_plan_and_no_later_item_runs() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("1. Wait a while\n2. Never start"),
        SseBuilder::new()
            .role()
            .content(&["Waiting"])
            .pause(30_000)
            .content(&[" on."])
            .finish("stop")
            .done()
            .build(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("Enter sends");
    p.submit("/plan Be slow");
    p.wait_for("Enter runs it item by item");
    p.send(ENTER);
    p.wait_for("Waiting");
    p.send(ESC);
    p.wait_for("Plan stopped at item 1 of 2 (interrupted).");
    p.wait_for("○ 2. Never start");
    assert_eq!(server.requests().len(), 2, "the second item never ran");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}
