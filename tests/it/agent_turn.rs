//! The ReAct loop end to end against the local model server: what it sends, what it records,
//! how it stops, and how interrupts leave the history.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use miniclaw::agent::session::Incomplete;
use miniclaw::agent::{Agent, AgentEvent, AgentSettings, EventSink, Session, TurnOutcome};
use miniclaw::events::FailCause;
use miniclaw::llm::{LlmClient, Preset, Role};
use miniclaw::tools::{Sandbox, ToolRegistry};
use serde_json::{Value, json};
use support::rig::{Probe, assert_history_valid, rig, run};
use support::{Reply, SseBuilder};
use tokio::sync::{Barrier, mpsc};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn a_tool_call_then_an_answer_sends_the_observation_back_and_saves_the_turn() {
    let script = vec![
        SseBuilder::new()
            .role()
            .keep_alive()
            .content(&["Let me check."])
            .tool_call(0, "call_1", "probe", &json!({"x": "你好"}), 3)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("All **done**."),
    ];
    let mut r = rig(script, vec![Probe::new("probe", false)], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "please probe").await;
    assert_eq!(outcome, TurnOutcome::Answered);

    let reqs = r.server.requests();
    assert_eq!(reqs.len(), 2);
    let first = reqs[0].json();
    assert_eq!(first["model"], "deepseek-flash");
    assert_eq!(first["thinking"], json!({"type": "disabled"}));
    assert_eq!(first["stream"], true);
    assert_eq!(first["tools"][0]["function"]["name"], "probe");
    assert_eq!(reqs[0].header("authorization"), Some("Bearer sk-test"));
    let second = reqs[1].json();
    let msgs = second["messages"].as_array().unwrap();
    assert_eq!(msgs[0]["role"], "system");
    assert_eq!(msgs[1]["content"], "please probe");
    let assistant = &msgs[2];
    assert_eq!(assistant["role"], "assistant");
    assert_eq!(
        assistant["reasoning_content"], "",
        "sent back even when empty"
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "call_1");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        json!({"x": "你好"}).to_string()
    );
    let tool = &msgs[3];
    assert_eq!(tool["role"], "tool");
    assert_eq!(tool["tool_call_id"], "call_1");
    let observation: Value = serde_json::from_str(tool["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        observation,
        json!({"ok": true, "tool": "probe", "echo": {"x": "你好"}})
    );

    assert!(events.contains(&AgentEvent::StepStarted { step: 2, max: 6 }));
    assert!(events.iter().any(|e| matches!(e, AgentEvent::ToolOutputDelta { id, text } if id == "call_1" && text == "probe running\n")));
    // The answer is what the last step streamed (TurnFinished does not repeat it).
    let last_step = events
        .iter()
        .rposition(|e| matches!(e, AgentEvent::StepStarted { .. }))
        .unwrap();
    let answer: String = events[last_step..]
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ContentDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(answer, "All **done**.");
    match events.last().unwrap() {
        AgentEvent::TurnFinished { usage, .. } => {
            assert_eq!(
                usage.unwrap().prompt_tokens,
                240,
                "two calls' usage added up"
            );
        }
        other => panic!("last event {other:?}"),
    }
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(session.last_answer(), Some("All **done**."));
}

#[tokio::test]
async fn pro_preset_sends_thinking_fields_and_returns_reasoning() {
    let script = vec![
        SseBuilder::new()
            .role()
            .reasoning(&["I should ", "probe."])
            .tool_call(0, "c1", "probe", &json!({"x": "1"}), 2)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .reasoning(&["Now answer."])
            .content(&["ok"])
            .finish("stop")
            .done()
            .build(),
    ];
    let mut r = rig(script, vec![Probe::new("probe", true)], Preset::Pro, 6).await;
    let (outcome, events) = run(&mut r.agent, "go").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let reqs = r.server.requests();
    let first = reqs[0].json();
    assert_eq!(first["model"], "deepseek-v4-pro");
    assert_eq!(first["thinking"], json!({"type": "enabled"}));
    assert_eq!(first["reasoning_effort"], "high");
    let second = reqs[1].json();
    assert_eq!(
        second["messages"][2]["reasoning_content"],
        "I should probe."
    );
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "I should probe.Now answer.");
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(
        session.messages.last().unwrap().reasoning.as_deref(),
        Some("Now answer.")
    );
}

#[tokio::test]
async fn read_only_calls_of_one_response_run_concurrently_and_return_in_order() {
    // Each probe waits until the other has started: run one after the other, they would deadlock.
    let barrier = Arc::new(Barrier::new(2));
    let mut a = Probe::new("read_a", true);
    a.barrier = Some(barrier.clone());
    let mut b = Probe::new("read_b", true);
    b.barrier = Some(barrier);
    let script = vec![
        SseBuilder::new()
            .role()
            .tool_call(0, "ca", "read_a", &json!({"x": "a"}), 4)
            .tool_call(1, "cb", "read_b", &json!({"x": "b"}), 4)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("both read"),
    ];
    let mut r = rig(script, vec![a, b], Preset::Flash, 6).await;
    let (outcome, _) =
        tokio::time::timeout(Duration::from_secs(10), run(&mut r.agent, "read both"))
            .await
            .expect("read-only calls must not run one after the other");
    assert_eq!(outcome, TurnOutcome::Answered);
    let msgs = r.server.requests()[1].json()["messages"].clone();
    assert_eq!(msgs[3]["tool_call_id"], "ca");
    assert_eq!(msgs[4]["tool_call_id"], "cb");
}

#[tokio::test]
async fn a_repeated_identical_call_is_not_run_again() {
    let call = |id: &str| SseBuilder::calls(id, "probe", json!({"x": "same"}));
    // Three identical calls in a row: the second is refused, and so is the third (a refused
    // repeat still counts as made).
    let script = vec![
        call("c1"),
        call("c2"),
        call("c3"),
        SseBuilder::answer("fine"),
    ];
    let mut r = rig(script, vec![Probe::new("probe", false)], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let results: Vec<&Value> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { result, .. } => Some(result.value()),
            _ => None,
        })
        .collect();
    assert_eq!(results[0]["ok"], true);
    assert_eq!(results[1]["ok"], false);
    assert!(
        results[1]["error"]
            .as_str()
            .unwrap()
            .contains("previous step")
    );
    assert_eq!(results[2]["ok"], false, "{:?}", results[2]);
    assert_history_valid(&r.dir.path().join("history.json"));
}

#[tokio::test]
async fn the_step_limit_stops_a_model_that_never_stops_calling_tools() {
    let script: Vec<Reply> = (0..5)
        .map(|i| SseBuilder::calls(&format!("c{i}"), "probe", json!({"x": i.to_string()})))
        .collect();
    let mut r = rig(script, vec![Probe::new("probe", false)], Preset::Flash, 3).await;
    let (outcome, events) = run(&mut r.agent, "loop").await;
    assert_eq!(outcome, TurnOutcome::StepLimit);
    assert_eq!(r.server.requests().len(), 3);
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::StepLimitReached { max: 3 }))
    );
    assert_history_valid(&r.dir.path().join("history.json"));
}

#[tokio::test]
async fn bad_arguments_and_unknown_tools_become_error_observations_and_the_loop_goes_on() {
    let script = vec![
        SseBuilder::new()
            .role()
            .tool_call_raw(0, "c1", "probe", "{not json")
            .tool_call_raw(1, "c2", "no_such_tool", "{}")
            .tool_call_raw(2, "c3", "probe", "{}")
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("recovered"),
    ];
    let mut r = rig(script, vec![Probe::new("probe", false)], Preset::Flash, 6).await;
    let (outcome, _) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let msgs = r.server.requests()[1].json()["messages"].clone();
    let obs =
        |i: usize| -> Value { serde_json::from_str(msgs[i]["content"].as_str().unwrap()).unwrap() };
    assert_eq!(obs(3)["ok"], false);
    assert!(obs(3)["error"].as_str().unwrap().contains("not valid JSON"));
    assert!(obs(4)["error"].as_str().unwrap().contains("unknown tool"));
    assert!(
        obs(5)["error"]
            .as_str()
            .unwrap()
            .contains("missing required field(s): x")
    );
}

/// An answer that sends "Half an ans", then stalls before the rest.
fn half_an_answer() -> Reply {
    SseBuilder::new()
        .role()
        .content(&["Half an ans"])
        .pause(5_000)
        .content(&["wer"])
        .finish("stop")
        .done()
        .build()
}

/// Runs a turn and interrupts it as soon as the first answer text arrives.
async fn interrupt_at_first_content(agent: &mut Agent, prompt: &str) -> TurnOutcome {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    let watcher = tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if matches!(e, AgentEvent::ContentDelta(_)) {
                c.cancel();
            }
        }
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(3),
        agent.run_turn(prompt, &EventSink::new(tx), &cancel),
    )
    .await
    .expect("an interrupt stops the stream at once");
    watcher.abort();
    outcome
}

#[tokio::test]
async fn interrupting_mid_stream_keeps_the_partial_answer_marked() {
    let mut r = rig(vec![half_an_answer()], vec![], Preset::Flash, 6).await;
    let outcome = interrupt_at_first_content(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let last = session.messages.last().unwrap();
    assert_eq!(last.content, "Half an ans");
    assert_eq!(last.incomplete, Some(Incomplete::Interrupted));
}

#[tokio::test]
async fn interrupting_a_running_tool_leaves_every_call_with_a_result() {
    let mut slow = Probe::new("slow", false);
    slow.sleep = Duration::from_secs(30);
    let script = vec![
        SseBuilder::new()
            .role()
            .tool_call(0, "c1", "slow", &json!({"x": "1"}), 50)
            .tool_call(1, "c2", "slow", &json!({"x": "2"}), 50)
            .finish("tool_calls")
            .done()
            .build(),
    ];
    let mut r = rig(script, vec![slow], Preset::Flash, 6).await;
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if matches!(e, AgentEvent::ToolCallStarted { .. }) {
                c.cancel();
            }
        }
    });
    let outcome = tokio::time::timeout(
        Duration::from_secs(5),
        r.agent.run_turn("x", &EventSink::new(tx), &cancel),
    )
    .await
    .expect("an interrupt stops a tool at once");
    assert_eq!(outcome, TurnOutcome::Interrupted);
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let results: Vec<_> = session
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .collect();
    assert_eq!(results.len(), 2);
    assert!(results[0].content.contains("interrupted"));
}

#[tokio::test]
async fn an_invalid_key_is_reported_once_with_the_servers_message_and_history_stays_valid() {
    let script = vec![Reply::error(
        401,
        "Authentication Fails, Your api key is invalid",
    )];
    let mut r = rig(script, vec![], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "hi").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::RefusedKey));
    assert_eq!(r.server.requests().len(), 1, "401 is not retried");
    let message = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .unwrap();
    assert!(message.contains("Your api key is invalid"), "{message}");
    assert!(message.contains("DEEPSEEK_API_KEY"), "{message}");
    assert!(!message.contains("sk-test"));
    assert_history_valid(&r.dir.path().join("history.json"));
}

/// An answer of "Partial" cut by the model's output limit.
fn cut_at_the_output_limit() -> Reply {
    SseBuilder::new()
        .role()
        .content(&["Partial"])
        .finish("length")
        .done()
        .build()
}

#[tokio::test]
async fn a_length_cut_answer_is_kept_and_marked() {
    let script = vec![cut_at_the_output_limit()];
    let mut r = rig(script, vec![], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "long please").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Cut));
    assert!(
        events.iter().any(
            |e| matches!(e, AgentEvent::Error { message } if message.contains("output limit"))
        )
    );
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let last = session.messages.last().unwrap();
    assert_eq!(last.content, "Partial");
    assert!(last.incomplete.is_some());
}

#[tokio::test]
async fn a_long_conversation_is_trimmed_to_the_budget_but_the_history_keeps_everything() {
    let mut script = Vec::new();
    for i in 0..6 {
        script.push(SseBuilder::calls(
            &format!("c{i}"),
            "probe",
            json!({"x": "y".repeat(6_000)}),
        ));
        script.push(SseBuilder::answer(&format!("answer {i}")));
    }
    let mut r = rig(script, vec![Probe::new("probe", true)], Preset::Flash, 6).await;
    r.agent = std::mem::replace(
        &mut r.agent,
        Agent::new(
            LlmClient::new("http://127.0.0.1:9", None).unwrap(),
            Arc::new(ToolRegistry::new()),
            Arc::new(Sandbox::new(r.dir.path()).unwrap()),
            Session::new(),
            AgentSettings {
                preset: Preset::Flash,
                max_steps: 1,
                history_path: None,
            },
        ),
    )
    .with_context_budget(Some(5_000))
    // Trimming is what this test is about: compaction would summarize the turns first.
    .with_compaction_at(0);
    let mut last_usage = None;
    for i in 0..6 {
        let (outcome, events) = run(&mut r.agent, &format!("question {i}")).await;
        assert_eq!(outcome, TurnOutcome::Answered);
        last_usage = events.iter().find_map(|e| match e {
            AgentEvent::ContextUsage { used, budget, .. } => Some((*used, *budget)),
            _ => None,
        });
    }
    assert_eq!(last_usage.map(|u| u.1), Some(5_000));
    let last_request = r.server.requests().last().unwrap().json();
    let sent = last_request["messages"].to_string();
    // Untrimmed, the six turns carry about 75 KB; the budget (with the estimate corrected by at
    // most 2x from the server's counts) keeps the request to about half of that at most.
    assert!(
        sent.len() < 40_000,
        "the request was trimmed ({} bytes)",
        sent.len()
    );
    assert!(sent.contains("left out to fit the context window") || sent.contains("cut to fit"));
    assert!(sent.contains("question 5"), "the current turn is whole");
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(
        session
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count(),
        6
    );
}

#[tokio::test]
async fn without_a_key_the_turn_says_what_to_set_and_sends_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::new(
        LlmClient::new("http://127.0.0.1:9", None).unwrap(),
        Arc::new(ToolRegistry::new()),
        Arc::new(Sandbox::new(dir.path()).unwrap()),
        Session::new(),
        AgentSettings {
            preset: Preset::Flash,
            max_steps: 6,
            history_path: Some(dir.path().join("history.json")),
        },
    );
    let (outcome, events) = run(&mut agent, "hello").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::MissingKey));
    let errors: Vec<_> = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Error { .. }))
        .collect();
    assert_eq!(errors.len(), 1);
    assert!(
        matches!(errors[0], AgentEvent::Error { message } if message.contains("DEEPSEEK_API_KEY") && message.contains(".env"))
    );
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::StepStarted { .. }))
    );
    assert_eq!(
        agent.session().messages.len(),
        1,
        "the history is left as it was"
    );
    assert!(!dir.path().join("history.json").exists());
}

#[tokio::test]
async fn a_preset_switched_mid_turn_applies_to_the_next_request_and_an_early_interrupt_lands() {
    use miniclaw::agent::{AgentCommand, spawn};
    // The call waits until the test has switched the preset.
    let switched = Arc::new(Barrier::new(2));
    let mut slow = Probe::new("slow", false);
    slow.barrier = Some(switched.clone());
    let script = vec![
        SseBuilder::calls("c1", "slow", json!({"x": "1"})),
        SseBuilder::answer("done"),
        SseBuilder::new()
            .role()
            .content(&["never"])
            .pause(5_000)
            .finish("stop")
            .done()
            .build(),
    ];
    let r = rig(script, vec![slow], Preset::Flash, 6).await;
    let (handle, mut events) = spawn(r.agent);
    handle.send(AgentCommand::Prompt("go".into()));
    while let Some(e) = events.recv().await {
        if matches!(e, AgentEvent::ToolCallStarted { .. }) {
            handle.set_preset(Preset::Pro);
            switched.wait().await;
        }
        if matches!(e, AgentEvent::TurnFinished { .. }) {
            break;
        }
    }
    let reqs = r.server.requests();
    assert_eq!(reqs[0].json()["model"], "deepseek-flash");
    assert_eq!(
        reqs[1].json()["model"],
        "deepseek-v4-pro",
        "the next request of the same turn"
    );

    // An interrupt right after sending reaches the new turn, whatever the task is doing.
    handle.send(AgentCommand::Prompt("again".into()));
    handle.interrupt();
    let outcome = tokio::time::timeout(Duration::from_secs(3), async {
        while let Some(e) = events.recv().await {
            if let AgentEvent::TurnFinished { outcome, .. } = e {
                return outcome;
            }
        }
        TurnOutcome::Failed(FailCause::Unrecorded)
    })
    .await
    .expect("the interrupted turn ends at once");
    assert_eq!(outcome, TurnOutcome::Interrupted);
}

/// The messages of the server's `n`-th request (0-based).
fn sent_messages(r: &support::rig::Rig, n: usize) -> Vec<Value> {
    r.server.requests()[n].json()["messages"]
        .as_array()
        .unwrap()
        .clone()
}

#[tokio::test]
async fn an_interrupted_answer_goes_back_marked_so_continue_works() {
    let script = vec![half_an_answer(), SseBuilder::answer("…wer, finished.")];
    let mut r = rig(script, vec![], Preset::Flash, 6).await;
    let outcome = interrupt_at_first_content(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    let (outcome, _) = run(&mut r.agent, "continue").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let sent = sent_messages(&r, 1);
    let n = sent.len();
    assert_eq!(sent[n - 2]["role"], "assistant");
    assert_eq!(
        sent[n - 2]["content"],
        "Half an ans\n\n[interrupted by the user]"
    );
    assert_eq!(sent[n - 1]["content"], "continue");
}

#[tokio::test]
async fn a_cut_answer_goes_back_marked() {
    let script = vec![cut_at_the_output_limit(), SseBuilder::answer("the rest")];
    let mut r = rig(script, vec![], Preset::Flash, 6).await;
    run(&mut r.agent, "long please").await;
    run(&mut r.agent, "continue").await;
    let sent = sent_messages(&r, 1);
    let answer = sent[sent.len() - 2]["content"].as_str().unwrap();
    assert!(
        answer.starts_with("Partial\n\n[cut off: ") && answer.contains("output limit"),
        "{answer}"
    );
}

#[tokio::test]
async fn a_turn_that_failed_before_any_answer_never_leaves_two_prompts_back_to_back() {
    let script = vec![
        Reply::error(400, "bad request for a moment"),
        SseBuilder::answer("here it is"),
    ];
    let mut r = rig(script, vec![], Preset::Flash, 6).await;
    let (outcome, _) = run(&mut r.agent, "first prompt").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Server));
    let (outcome, _) = run(&mut r.agent, "second prompt").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let sent = sent_messages(&r, 1);
    let roles: Vec<&str> = sent.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"], "{sent:?}");
    // The failed step is kept, marked with its error, between the two prompts.
    let between = sent[2]["content"].as_str().unwrap();
    assert!(
        between.starts_with("[stopped by an error:") && between.contains("400"),
        "{between}"
    );
    // The history on disk keeps both prompts as they were.
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let prompts: Vec<&str> = session
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(prompts, ["first prompt", "second prompt"]);
}

#[tokio::test]
async fn steps_set_during_a_session_limit_the_next_turn_and_continue_goes_on() {
    let mut script: Vec<Reply> = (0..2)
        .map(|i| SseBuilder::calls(&format!("c{i}"), "probe", json!({"x": i.to_string()})))
        .collect();
    script.push(SseBuilder::answer("done after the limit"));
    let support::rig::Rig {
        server,
        agent,
        dir: _dir,
    } = rig(script, vec![Probe::new("probe", false)], Preset::Flash, 6).await;
    let (handle, mut events) = miniclaw::agent::spawn(agent);
    handle.send(miniclaw::agent::AgentCommand::SetMaxSteps(2));
    handle.send(miniclaw::agent::AgentCommand::Prompt("loop".into()));
    let mut notices = Vec::new();
    let first = loop {
        match events.recv().await.unwrap() {
            AgentEvent::StepLimitReached { max } => notices.push(max),
            AgentEvent::TurnFinished { outcome, .. } => break outcome,
            _ => {}
        }
    };
    assert_eq!(first, TurnOutcome::StepLimit);
    assert_eq!(server.requests().len(), 2, "the limit set by /steps held");
    assert_eq!(notices, [2], "said once, with the limit set");
    handle.send(miniclaw::agent::AgentCommand::Prompt("continue".into()));
    let second = loop {
        if let AgentEvent::TurnFinished { outcome, .. } = events.recv().await.unwrap() {
            break outcome;
        }
    };
    assert_eq!(second, TurnOutcome::Answered);
    // The model went on from where it stopped: the last call's result is in what it was sent.
    let sent = server.requests()[2].json()["messages"].clone();
    let roles: Vec<&str> = sent
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles[roles.len() - 3..], ["assistant", "tool", "user"]);
}

#[tokio::test]
async fn init_writes_agents_md_and_the_next_request_carries_it() {
    use miniclaw::agent::{AgentCommand, spawn};
    let mut registry = miniclaw::tools::ToolRegistry::new();
    miniclaw::tools::file_edit::register(&mut registry);
    let script = vec![
        SseBuilder::calls(
            "c1",
            "write_text_file",
            json!({"relative_path": "AGENTS.md", "content": "# Project\n\nBuild with `make canary-build`.\n"}),
        ),
        SseBuilder::answer("Wrote AGENTS.md."),
        SseBuilder::answer("ok"),
    ];
    let support::rig::Rig {
        server,
        agent,
        dir: _dir,
    } = support::rig::rig_with(script, registry, Preset::Flash, 6, |c| c).await;
    let (handle, mut events) = spawn(agent);
    handle.send(AgentCommand::Init);
    // AGENTS.md is configuration: /init's write asks even in auto, and the person says yes.
    let mut asked = 0;
    let mut notice = None;
    let mut finished = false;
    while let Some(e) = tokio::time::timeout(Duration::from_secs(10), events.recv())
        .await
        .expect("the init turn ends")
    {
        match e {
            AgentEvent::TurnFinished { .. } => finished = true,
            AgentEvent::ApprovalRequested(request) => {
                assert!(request.configuration, "{request:?}");
                asked += 1;
                handle.answer(&request.id, miniclaw::approval::Decision::Approve);
            }
            AgentEvent::Notice(text) if finished => {
                notice = Some(text);
                break;
            }
            _ => {}
        }
    }
    let notice = notice.expect("a notice names the instructions read again");
    assert_eq!(asked, 1, "/init asked");
    assert!(notice.contains("AGENTS.md"), "{notice}");
    // The first request asked for the file.
    let first = server.requests()[0].json();
    assert!(first["messages"].to_string().contains("starter AGENTS.md"));
    handle.send(AgentCommand::Prompt("what now?".into()));
    while let Some(e) = events.recv().await {
        if matches!(e, AgentEvent::TurnFinished { .. }) {
            break;
        }
    }
    let reqs = server.requests();
    let system = &reqs[2].json()["messages"][0];
    assert_eq!(system["role"], "system");
    assert!(
        system["content"]
            .as_str()
            .unwrap()
            .contains("make canary-build"),
        "{system}"
    );
}
