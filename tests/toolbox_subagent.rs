//! delegate_file_analysis end to end: the main agent delegates, the sub-agent reads the file
//! through its own loop against the local model server, and only its answer comes back.

mod support;

use std::sync::Arc;
use std::time::Duration;

use miniclaw::agent::{Agent, AgentEvent, AgentSettings, EventSink, Session, TurnOutcome};
use miniclaw::llm::{LlmClient, Preset, RetryPolicy, Role};
use miniclaw::tools::subagent::{DelegateTool, SUBAGENT_PROMPT};
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use support::{MockServer, Reply, SseBuilder};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn client(server: &MockServer) -> LlmClient {
    LlmClient::new(&server.url(), Some("sk-test".into()))
        .unwrap()
        .with_retry(RetryPolicy {
            max_attempts: 1,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(10),
        })
        .with_idle_timeout(Duration::from_secs(5))
}

fn main_agent(server: &MockServer, dir: &std::path::Path) -> Agent {
    let mut registry = ToolRegistry::new();
    registry.register(DelegateTool::new());
    Agent::new(
        client(server),
        Arc::new(registry),
        Arc::new(Sandbox::new(dir).unwrap()),
        Session::new(),
        AgentSettings {
            preset: Preset::Flash,
            max_steps: 5,
            history_path: None,
        },
    )
}

fn tool_names(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn the_sub_agent_reads_the_file_and_only_its_answer_returns() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "# Plan\nShip on Friday.\n").unwrap();
    let server = MockServer::start(vec![
        // Main agent: delegate.
        SseBuilder::calls(
            "main_1",
            "delegate_file_analysis",
            json!({"relative_path": "notes.md", "task": "When do we ship?"}),
        ),
        // Sub-agent: read the file, then answer.
        SseBuilder::calls(
            "sub_1",
            "read_text_file",
            json!({"relative_path": "notes.md"}),
        ),
        SseBuilder::answer("The plan says: ship on Friday."),
        // Main agent: the final answer.
        SseBuilder::answer("You ship on Friday."),
    ])
    .await;
    let mut agent = main_agent(&server, dir.path());
    let (tx, mut rx) = mpsc::unbounded_channel();
    let outcome = agent
        .run_turn(
            "When do we ship?",
            &EventSink::new(tx),
            &CancellationToken::new(),
        )
        .await;
    assert_eq!(outcome, TurnOutcome::Answered);

    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    assert_eq!(requests.len(), 4);
    // The sub-agent: its own prompt, only the two reading tools, the same model.
    let sub = &requests[1];
    assert_eq!(sub["messages"][0]["content"], SUBAGENT_PROMPT);
    assert_eq!(sub["messages"][1]["role"], "user");
    assert!(
        sub["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains("notes.md")
    );
    let mut names = tool_names(sub);
    names.sort();
    assert_eq!(names, ["list_files", "read_text_file"]);
    assert_eq!(sub["model"], requests[0]["model"]);
    // Its second call carries the file's content.
    let observation = requests[2]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(observation["role"], "tool");
    assert!(
        observation["content"]
            .as_str()
            .unwrap()
            .contains("Ship on Friday."),
        "{observation}"
    );
    // The main agent gets the analysis and nothing of the sub-agent's conversation.
    let main_msgs = requests[3]["messages"].as_array().unwrap();
    let result: Value =
        serde_json::from_str(main_msgs.last().unwrap()["content"].as_str().unwrap()).unwrap();
    assert_eq!(result["ok"], true);
    assert_eq!(result["tool"], "delegate_file_analysis");
    assert_eq!(result["analysis"], "The plan says: ship on Friday.");
    let text = serde_json::to_string(main_msgs).unwrap();
    assert!(!text.contains("sub_1") && !text.contains("file analyst"));
    assert!(
        agent
            .session()
            .messages
            .iter()
            .all(|m| m.role != Role::Tool || m.tool_call_id.as_deref() == Some("main_1"))
    );

    // The sub-agent's events arrive nested under the delegating call.
    let mut nested_tools = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let AgentEvent::Nested { parent_id, event } = ev {
            assert_eq!(parent_id, "main_1");
            if let AgentEvent::ToolFinished { name, .. } = *event {
                nested_tools.push(name);
            }
        }
    }
    assert_eq!(nested_tools, ["read_text_file"]);
}

#[tokio::test]
async fn an_interrupt_cancels_the_sub_agent_too() {
    let dir = tempfile::tempdir().unwrap();
    let server = MockServer::start(vec![
        SseBuilder::calls(
            "main_1",
            "delegate_file_analysis",
            json!({"relative_path": "x.md", "task": "t"}),
        ),
        Reply::Hang,
    ])
    .await;
    let mut agent = main_agent(&server, dir.path());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(400)).await;
        c.cancel();
    });
    let started = std::time::Instant::now();
    let outcome = agent.run_turn("go", &EventSink::discard(), &cancel).await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    assert!(started.elapsed() < Duration::from_secs(4));
    assert_eq!(server.requests().len(), 2, "the sub-agent had started");
}

#[tokio::test]
async fn without_a_model_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(DelegateTool::new());
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let obs = registry
        .execute(
            "delegate_file_analysis",
            r#"{"relative_path": "a.md", "task": "summarise"}"#,
            &ctx,
        )
        .await;
    assert_eq!(obs["ok"], false);
    assert!(
        obs["error"]
            .as_str()
            .unwrap()
            .contains("no model configured")
    );
    assert!(registry.is_read_only("delegate_file_analysis"));
}
