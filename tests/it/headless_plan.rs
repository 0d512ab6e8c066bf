//! `-p TASK --plan`, the real binary against the local model server: the planner (pro, the
//! read-only tools) and the executor (flash) as the request log shows them, the plan and its
//! items' states in the trace, the JSON report and the stream, and the exit status when an
//! item fails.

use crate::headless_bin;
use crate::support;

use headless_bin::{headless, text};
use serde_json::{Value, json};
use support::{MockServer, SseBuilder};

/// The tools a request offered.
fn tools(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
        .collect()
}

#[test]
fn plan_then_execute_reports_the_plan_and_each_items_state() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("1. Write hello.txt\n2. Read it back"),
        SseBuilder::calls(
            "w1",
            "write_text_file",
            json!({"relative_path": "hello.txt", "content": "hi"}),
        ),
        SseBuilder::answer("Wrote it."),
        SseBuilder::answer("It says hi."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let out = headless(&ws, &server.url())
        .args(["-p", "Make a greeting", "--plan", "--output-format", "json"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(std::fs::read_to_string(ws.join("hello.txt")).unwrap(), "hi");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["outcome"], "answered");
    assert_eq!(report["answer"], "It says hi.");
    let plan = &report["plan"];
    assert_eq!(plan["task"], "Make a greeting");
    assert_eq!(plan["planner_model"], "deepseek-v4-pro");
    assert_eq!(plan["executor_model"], "deepseek-flash");
    assert_eq!(
        (plan["done"].clone(), plan["total"].clone()),
        (json!(2), json!(2))
    );
    assert_eq!(plan["items"][0]["text"], "Write hello.txt");
    assert_eq!(plan["items"][0]["state"], "done");
    assert_eq!(
        plan["items"][0]["steps"][0]["tool_calls"][0]["name"],
        "write_text_file"
    );
    assert_eq!(plan["items"][1]["answer"], "It says hi.");
    assert_eq!(
        report["usage"]["total_tokens"], 600,
        "four requests' tokens add up"
    );
    assert!(stderr.contains("[plan] 1. Write hello.txt"), "{stderr}");
    assert!(stderr.contains("[plan item 2/2 done]"), "{stderr}");
    assert!(stderr.contains("[plan] done: 2/2 items"), "{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let planner = requests[0].json();
    assert_eq!(planner["model"], "deepseek-v4-pro");
    let offered = tools(&planner);
    assert!(
        offered.contains(&"read_text_file".to_string()),
        "{offered:?}"
    );
    for changing in [
        "write_text_file",
        "append_text_file",
        "replace_text_in_file",
    ] {
        assert!(!offered.contains(&changing.to_string()), "{offered:?}");
    }
    for executor in &requests[1..] {
        let body = executor.json();
        assert_eq!(body["model"], "deepseek-flash");
        assert!(tools(&body).contains(&"write_text_file".to_string()));
    }
}

#[test]
fn a_failed_item_stops_the_run_with_a_non_zero_status_and_says_which() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("1. One\n2. Two\n3. Three"),
        SseBuilder::answer("One is done."),
        SseBuilder::answer("ITEM FAILED: two cannot be done"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let out = headless(&ws, &server.url())
        .args(["-p", "Count", "--plan", "--output-format", "stream-json"])
        .args([
            "--planner-model",
            "deepseek-flash",
            "--executor-model",
            "my-model",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("[plan] stopped at item 2/3 (failed) two cannot be done"));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let finished = lines
        .iter()
        .find(|l| l["type"] == "plan_item_finished" && l["index"] == 1)
        .unwrap();
    assert_eq!(finished["state"], "failed");
    assert_eq!(finished["reason"], "two cannot be done");
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["exit_code"], 1);
    assert_eq!(result["plan"]["items"][2]["state"], "pending");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.json()["model"].clone())
        .collect();
    assert_eq!(
        models,
        [
            json!("deepseek-flash"),
            json!("my-model"),
            json!("my-model")
        ]
    );
}
