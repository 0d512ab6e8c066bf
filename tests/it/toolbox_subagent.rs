//! delegate_file_analysis end to end: the main agent delegates, the sub-agent reads the file
//! through its own loop against the local model server, and only its answer comes back.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use miniclaw::agent::budget::REQUESTS_PER_STEP;
use miniclaw::agent::dispatch::MAX_AGENT_CALLS_PER_STEP;
use miniclaw::agent::{Agent, AgentEvent, AgentSettings, EventSink, Session, TurnOutcome};
use miniclaw::llm::{LlmClient, Preset, RetryPolicy, Role};
use miniclaw::tools::subagent::{DelegateTool, SUBAGENT_PROMPT};
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};
use serde_json::{Value, json};
use support::rig::run;
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
    agent_with(server, dir, registry, 5)
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
    let server = Arc::new(
        MockServer::start(vec![
            SseBuilder::calls(
                "main_1",
                "delegate_file_analysis",
                json!({"relative_path": "x.md", "task": "t"}),
            ),
            Reply::Hang,
        ])
        .await,
    );
    let mut agent = main_agent(&server, dir.path());
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let seen = server.clone();
    // Interrupted once the sub-agent has started its first step and its request reached the
    // server (where it hangs): no guessed sleep.
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            if let AgentEvent::Nested { event, .. } = event
                && matches!(*event, AgentEvent::StepStarted { .. })
            {
                while seen.requests().len() < 2 {
                    tokio::task::yield_now().await;
                    tokio::time::sleep(Duration::from_millis(5)).await;
                }
                c.cancel();
            }
        }
    });
    let started = std::time::Instant::now();
    let outcome = agent.run_turn("go", &EventSink::new(tx), &cancel).await;
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

/// An agent with `registry` and `max_steps`, against `server`.
fn agent_with(
    server: &MockServer,
    dir: &std::path::Path,
    registry: ToolRegistry,
    max_steps: usize,
) -> Agent {
    Agent::new(
        client(server),
        Arc::new(registry),
        Arc::new(Sandbox::new(dir).unwrap()),
        Session::new(),
        AgentSettings {
            preset: Preset::Flash,
            max_steps,
            history_path: None,
        },
    )
}

/// One response delegating `n` different files (ids and paths start with `tag`).
fn delegations(tag: &str, n: usize) -> Reply {
    let mut sse = SseBuilder::new().role();
    for i in 0..n {
        sse = sse.tool_call(
            i,
            &format!("{tag}_{i}"),
            "delegate_file_analysis",
            &json!({"relative_path": format!("{tag}_{i}.md"), "task": "summarise"}),
            500,
        );
    }
    sse.finish("tool_calls").done().build()
}

/// The main loop's observations, in call order (refused calls report before the ones that run).
fn main_observations(events: &[AgentEvent], ids: &[String]) -> Vec<Value> {
    let by_id: std::collections::HashMap<&str, &Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { id, result, .. } => Some((id.as_str(), result.value())),
            _ => None,
        })
        .collect();
    ids.iter()
        .map(|id| by_id.get(id.as_str()).map_or(Value::Null, |v| (*v).clone()))
        .collect()
}

/// The observations of sub-agents at any depth (nesting shows one level).
fn nested_observations(events: &[AgentEvent]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Nested { event, .. } => match event.as_ref() {
                AgentEvent::ToolFinished { result, .. } => Some(result.value().clone()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn error_of(observation: &Value) -> &str {
    observation["error"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn thirty_two_delegations_in_a_two_step_turn_stay_within_one_request_budget() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.md"), "notes\n").unwrap();
    let mut script = vec![delegations("a", 32)];
    // Every sub-agent request: read a file again and again, never answering.
    let limit = 2 * REQUESTS_PER_STEP;
    for _ in 0..limit - 2 {
        script.push(SseBuilder::calls(
            "sub",
            "read_text_file",
            json!({"relative_path": "notes.md"}),
        ));
    }
    // The main loop's second and last step delegates again.
    script.push(delegations("b", 32));
    let server = MockServer::start(script).await;
    let mut registry = ToolRegistry::new();
    registry.register(DelegateTool::new());
    let mut agent = agent_with(&server, dir.path(), registry, 2);

    let (outcome, events) = run(&mut agent, "summarise everything").await;
    assert_eq!(
        outcome,
        TurnOutcome::StepLimit,
        "the turn ends at its step limit"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), limit, "one budget of 4 × --max-steps");
    let sub_requests = requests
        .iter()
        .filter(|r| r.json()["messages"][0]["content"] == SUBAGENT_PROMPT)
        .count();
    assert_eq!(
        sub_requests,
        limit - 2,
        "the main loop's two steps are kept"
    );

    let ids: Vec<String> = ["a", "b"]
        .iter()
        .flat_map(|tag| (0..32).map(move |i| format!("{tag}_{i}")))
        .collect();
    let obs = main_observations(&events, &ids);
    for (step, calls) in obs.chunks(32).enumerate() {
        for o in &calls[MAX_AGENT_CALLS_PER_STEP..] {
            assert_eq!(o["ok"], false);
            assert!(
                error_of(o).contains("at most 3 sub-agents run per step"),
                "{o}"
            );
        }
        let ran = &calls[..MAX_AGENT_CALLS_PER_STEP];
        assert!(ran.iter().all(|o| o["ok"] == false), "{ran:?}");
        let out_of_budget = ran
            .iter()
            .filter(|o| error_of(o).contains("budget of 8 model requests"))
            .count();
        // Step 1: at least one helper was stopped by the budget (6 requests cannot give three
        // helpers their 4 steps each); step 2: none could start.
        let expected = if step == 0 { 1 } else { 3 };
        assert!(out_of_budget >= expected, "step {}: {ran:?}", step + 1);
    }
    let stopped = events
        .iter()
        .any(|e| matches!(e, AgentEvent::StepLimitReached { max: 2 }));
    assert!(stopped, "the step limit is reported as before");
}

#[tokio::test]
async fn nested_sub_agents_draw_from_the_same_budget() {
    let dir = tempfile::tempdir().unwrap();
    // The helper may delegate in turn; its helpers have the usual reading tools.
    let mut inner = ToolRegistry::new();
    inner.register(DelegateTool::new());
    let mut registry = ToolRegistry::new();
    registry.register(DelegateTool::with_tools(inner));
    let limit = 2 * REQUESTS_PER_STEP;
    let mut script = vec![SseBuilder::calls(
        "main_1",
        "delegate_file_analysis",
        json!({"relative_path": "a.md", "task": "t"}),
    )];
    // Every helper request, at any depth: delegate 32 files.
    for _ in 0..limit - 2 {
        script.push(delegations("n", 32));
    }
    script.push(SseBuilder::answer("Nothing could be analysed."));
    let server = MockServer::start(script).await;
    let mut agent = agent_with(&server, dir.path(), registry, 2);

    let (outcome, events) = run(&mut agent, "go").await;
    assert_eq!(
        outcome,
        TurnOutcome::Answered,
        "the main loop's step is kept"
    );
    assert_eq!(server.requests().len(), limit);
    let main = main_observations(&events, &["main_1".to_string()]);
    assert!(
        error_of(&main[0]).contains("budget of 8 model requests"),
        "{main:?}"
    );
    // The helper made one step: three nested helpers ran, 29 calls were refused. (Its helpers
    // have no delegate tool: their calls are unknown-tool errors.)
    let nested = nested_observations(&events);
    let refused = nested
        .iter()
        .filter(|o| error_of(o).contains("at most 3 sub-agents run per step"))
        .count();
    assert_eq!(refused, 29, "{nested:?}");
    let stopped = nested
        .iter()
        .filter(|o| error_of(o).contains("budget of 8 model requests"))
        .count();
    assert!((1..=3).contains(&stopped), "{nested:?}");
}
