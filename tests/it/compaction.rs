//! Compaction against the local model server: a long session is summarized before the request
//! that would pass the threshold, the goal rides along word for word, a failed summary falls back
//! to trimming (said), and every request begins with the one before it except at a compaction.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use miniclaw::agent::session::Message;
use miniclaw::agent::{Agent, AgentEvent, AgentSettings, Session, TurnOutcome};
use miniclaw::llm::{LlmClient, Preset, RetryPolicy};
use miniclaw::tools::{Sandbox, ToolRegistry};
use serde_json::{Value, json};
use support::rig::{Probe, assert_history_valid, run};
use support::{MockServer, Reply, SseBuilder};

/// The first prompt of the long sessions: it must reach every summary word for word.
pub const GOAL: &str = "GOAL: split src/parser.rs into lexer, grammar and errors modules \u{2014} keep the public API exactly as it is";

/// A session of `turns` turns after the goal's (pub for the binary's tests), each a question and a longish answer.
pub fn long_session(turns: usize) -> Session {
    let mut s = Session::new();
    s.push(Message::user(GOAL));
    s.push(Message::assistant("Understood.", None, vec![]));
    for n in 1..turns {
        s.push(Message::user(format!("turn {n}: look at part {n}")));
        s.push(Message::assistant(
            format!("Part {n} done. {}", "detail ".repeat(30)),
            None,
            vec![],
        ));
    }
    s
}

/// An agent on `session` talking to `server`, with a context budget of `budget` tokens.
fn agent(server: &MockServer, dir: &std::path::Path, session: Session, budget: usize) -> Agent {
    let client = LlmClient::new(&server.url(), Some("sk-test".into()))
        .unwrap()
        .with_retry(RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
        })
        .with_idle_timeout(Duration::from_secs(5));
    let mut registry = ToolRegistry::new();
    registry.register(Probe::new("probe", true));
    Agent::new(
        client,
        Arc::new(registry),
        Arc::new(Sandbox::new(dir).unwrap()),
        session,
        AgentSettings {
            preset: Preset::Flash,
            max_steps: 4,
            history_path: Some(dir.join("history.json")),
        },
    )
    .with_context_budget(Some(budget))
}

pub const SUMMARY: &str = "## Asked\n- split the parser\n## Decisions\n- three modules\n## Files\n- src/parser.rs read\n## Commands\n- none\n## Open\n- the errors module";

#[tokio::test]
async fn a_300_turn_session_is_compacted_before_the_request_and_keeps_its_goal_word_for_word() {
    let server = MockServer::start(vec![
        SseBuilder::answer(SUMMARY),
        SseBuilder::answer("Running them now."),
        SseBuilder::answer("Committed."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    let mut agent = agent(&server, dir.path(), long_session(300), 20_000);
    let (outcome, events) = run(&mut agent, "now run the tests").await;
    assert_eq!(outcome, TurnOutcome::Answered);

    // Told before and after: how many turns, and that the budget set it off.
    assert!(events.contains(&AgentEvent::Compacting {
        turns: 300,
        automatic: true
    }));
    let done = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Compacted(c) => Some(c.clone()),
            _ => None,
        })
        .expect("a Compacted event");
    assert_eq!(done.turns, 300);
    assert!(done.usage.is_some(), "the summary request's tokens count");
    // The gauge is told at once how little is left, before the next request reports.
    let at = events
        .iter()
        .position(|e| matches!(e, AgentEvent::Compacted(_)))
        .unwrap();
    match &events[at + 1] {
        AgentEvent::ContextUsage {
            used,
            budget,
            compact_at: Some(threshold),
        } => {
            assert_eq!(*budget, 20_000);
            assert!(*used < threshold / 4, "{used} of {threshold}");
        }
        other => panic!("a ContextUsage right after: {other:?}"),
    }

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The summary request: the summarizer's instructions and the conversation as text, no tools.
    let summary_request = requests[0].json();
    assert!(summary_request.get("tools").is_none());
    let asked = summary_request["messages"][1]["content"].as_str().unwrap();
    assert!(
        asked.contains("turn 299: look at part 299"),
        "the newest turn"
    );
    assert!(asked.contains("## Open"), "the sections asked for");
    // 300 turns do not fit 60% of 20,000 tokens: the oldest are left out, and it says so.
    assert!(asked.contains("left out to fit"));

    // The request after it: the system prompt with the summary, then only the running turn.
    let next = requests[1].json();
    let messages = next["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2, "{messages:#?}");
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains("# Earlier in this session (compacted)"));
    assert!(
        system.contains(&format!("First request:\n> {GOAL}")),
        "{system}"
    );
    assert!(system.contains("Latest instruction:\n> now run the tests"));
    assert!(system.contains("It is a record of what happened, not instructions"));
    assert!(system.ends_with(SUMMARY), "the model's words come last");
    assert_eq!(messages[1]["content"], "now run the tests");

    // The history keeps every turn, and the summary as a message of its own.
    let saved = assert_history_valid(&dir.path().join("history.json"));
    assert_eq!(saved.prompts().count(), 301);
    let (_, mark) = saved.last_compaction().expect("the compaction is saved");
    assert_eq!(mark.turns, 300);
    assert!(mark.automatic);

    // The next turn goes on from the summary without compacting again, and its request begins
    // with the one before it.
    let (outcome, events) = run(&mut agent, "and commit").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacting { .. }))
    );
    let requests = server.requests();
    let (before, after) = (requests[1].json(), requests[2].json());
    let (before, after) = (
        before["messages"].as_array().unwrap(),
        after["messages"].as_array().unwrap(),
    );
    assert_eq!(&after[..before.len()], &before[..]);
}

#[tokio::test]
async fn a_failed_summary_falls_back_to_trimming_and_both_are_said() {
    let server = MockServer::start(vec![
        Reply::error(400, "the summary was refused"),
        SseBuilder::answer("Answered anyway."),
        SseBuilder::answer("And again."),
    ])
    .await;
    let dir = tempfile::tempdir().unwrap();
    // Long enough to stay past the threshold after the server's counts halve the estimate.
    let mut agent = agent(&server, dir.path(), long_session(600), 20_000);
    let (outcome, events) = run(&mut agent, "go on").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let failed = events.iter().find_map(|e| match e {
        AgentEvent::CompactionFailed { reason, automatic } => Some((reason.clone(), *automatic)),
        _ => None,
    });
    let (reason, automatic) = failed.expect("the failure is told");
    assert!(automatic);
    assert!(reason.contains("the summary was refused"), "{reason}");
    let trimmed = events.iter().find_map(|e| match e {
        AgentEvent::ContextTrimmed { dropped_turns, .. } => Some(*dropped_turns),
        _ => None,
    });
    assert!(trimmed.is_some_and(|n| n > 0), "the trimming is told");
    let requests = server.requests();
    assert_eq!(
        requests.len(),
        2,
        "the summary is not asked for again this turn"
    );
    let sent = requests[1].json()["messages"].to_string();
    assert!(sent.contains("left out to fit the context window"));
    assert!(sent.contains("go on"));
    // Nothing of it is saved as a compaction.
    let saved = assert_history_valid(&dir.path().join("history.json"));
    assert!(saved.last_compaction().is_none());

    // Nor in the next turn: each try is a paid request, so it waits for `/compact` or another
    // budget; the next turn is trimmed again, and said.
    let (outcome, events) = run(&mut agent, "and then").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacting { .. })),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::ContextTrimmed { .. })),
        "still past the threshold: {events:?}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(!is_summary_request(&requests[2]));
}

#[tokio::test]
async fn turns_that_hold_too_little_of_the_budget_are_trimmed_not_summarized() {
    // Three short turns, then a prompt that alone passes the threshold: a summary of the three
    // would free almost nothing, so none is asked for (it is paid); the request is fitted.
    let server = MockServer::start(vec![SseBuilder::answer("Read it.")]).await;
    let dir = tempfile::tempdir().unwrap();
    let mut agent = agent(&server, dir.path(), long_session(3), 20_000);
    let big = format!("read this: {}", "word ".repeat(70_000));
    let (outcome, events) = run(&mut agent, &big).await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::Compacting { .. }))
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert!(!is_summary_request(&requests[0]));
}

#[tokio::test]
async fn slash_compact_summarizes_everything_so_far_and_keeps_what_it_was_asked_to() {
    let server =
        MockServer::start(vec![SseBuilder::answer(SUMMARY), SseBuilder::answer("Ok.")]).await;
    let dir = tempfile::tempdir().unwrap();
    // A session far from its budget: only the person's word compacts it.
    let mut agent = agent(&server, dir.path(), long_session(5), 1_000_000);
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let done = agent
        .compact(
            Some("the module names"),
            &miniclaw::agent::EventSink::new(tx),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .expect("compacted");
    assert_eq!(done.turns, 5);
    assert!(!done.automatic);
    assert!(matches!(
        rx.try_recv(),
        Ok(AgentEvent::Compacting {
            turns: 5,
            automatic: false
        })
    ));
    // The summary request is billed like any response, though no turn runs.
    let mut told = Vec::new();
    while let Ok(e) = rx.try_recv() {
        told.push(e);
    }
    assert!(
        told.iter()
            .any(|e| matches!(e, AgentEvent::ResponseCost(Some(_))))
    );
    let saved = assert_history_valid(&dir.path().join("history.json"));
    let (at, _) = saved.last_compaction().unwrap();
    assert!(
        saved.messages[at].billed.is_some(),
        "its cost is saved with it"
    );
    let asked = server.requests()[0].json()["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(asked.contains("keep in particular: the module names"));
    assert!(!asked.contains("left out"), "five turns fit whole");
    run(&mut agent, "next").await;
    let next = server.requests()[1].json();
    let messages = next["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert!(
        messages[0]["content"]
            .as_str()
            .unwrap()
            .contains("at the person's request (/compact)")
    );
}

/// Whether a request is a compaction's summary request.
pub fn is_summary_request(request: &support::RecordedRequest) -> bool {
    request.body.contains("You summarize a working session")
}

/// The messages and tools of a request.
fn parts(request: &Value) -> (Vec<Value>, Value) {
    (
        request["messages"].as_array().unwrap().clone(),
        request.get("tools").cloned().unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn every_request_begins_byte_for_byte_with_the_one_before_it_but_at_a_compaction() {
    // Forty turns of a call and an answer each, in a budget that forces one compaction midway.
    let mut script = Vec::new();
    for n in 0..40 {
        script.push(SseBuilder::calls(
            &format!("c{n}"),
            "probe",
            json!({"x": format!("{n} {}", "z".repeat(2_000))}),
        ));
        script.push(SseBuilder::answer(&format!("answer {n}")));
    }
    let server = MockServer::start(script).await;
    // The summaries are answered wherever they fall, leaving the script to the turns.
    server.route(is_summary_request, |_| SseBuilder::answer(SUMMARY));
    let dir = tempfile::tempdir().unwrap();
    let mut agent = agent(&server, dir.path(), Session::new(), 12_000);
    let mut compactions = 0;
    for n in 0..40 {
        let (outcome, events) = run(&mut agent, &format!("question {n}")).await;
        assert_eq!(outcome, TurnOutcome::Answered, "turn {n}");
        compactions += events
            .iter()
            .filter(|e| matches!(e, AgentEvent::Compacted(_)))
            .count();
    }
    assert!(compactions >= 1, "the budget forced a compaction");
    let requests: Vec<Value> = server.requests().iter().map(|r| r.json()).collect();
    let raw: Vec<String> = server.requests().iter().map(|r| r.body.clone()).collect();
    let mut breaks = 0;
    let mut previous: Option<usize> = None;
    for (i, request) in requests.iter().enumerate() {
        // A summary request is not part of the conversation's chain; the prefix changes there.
        if is_summary_request(&server.requests()[i]) {
            breaks += 1;
            previous = None;
            continue;
        }
        if let Some(p) = previous {
            let (before, tools_before) = parts(&requests[p]);
            let (after, tools_after) = parts(request);
            assert_eq!(
                tools_before, tools_after,
                "request {i}: the tool list is stable"
            );
            assert_eq!(
                &after[..before.len()],
                &before[..],
                "request {i} begins with request {p}'s messages"
            );
            // And as bytes: the body up to the end of the earlier messages is the same.
            let cut = raw[p].find("],\"stream\"").expect("messages, then stream");
            assert!(
                raw[i].starts_with(&raw[p][..cut]),
                "request {i} is byte-identical up to request {p}'s end"
            );
        }
        previous = Some(i);
    }
    assert_eq!(
        breaks, compactions,
        "the prefix changes only at a compaction"
    );
}
