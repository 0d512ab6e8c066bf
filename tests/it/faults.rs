//! Issue 5's fault catalogue against the local model server: for each fault the turn ends (never a
//! hang), the history stays valid and loadable, and the error says what happened and what to do.
//! A second turn afterwards proves the agent keeps running.

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use miniclaw::agent::{AgentEvent, TurnOutcome};
use miniclaw::events::FailCause;
use miniclaw::llm::{LlmClient, Preset, RetryPolicy};
use miniclaw::tools::ToolRegistry;
use serde_json::json;
use support::rig::{Probe, Rig, assert_history_valid, errors, observations, rig, rig_with, run};
use support::{Reply, SseBuilder};

const LIMIT: Duration = Duration::from_secs(20);

/// Runs a turn that must fail with an error mentioning every one of `says`, then a turn that
/// must succeed; the history is valid after both.
async fn fails_then_recovers(mut r: Rig, says: &[&str]) -> Vec<AgentEvent> {
    let (outcome, events) = tokio::time::timeout(LIMIT, run(&mut r.agent, "first"))
        .await
        .expect("a fault must end the turn, never hang it");
    assert!(matches!(outcome, TurnOutcome::Failed(_)), "{events:?}");
    let errs = errors(&events).join("\n");
    for s in says {
        assert!(errs.contains(s), "error {errs:?} should mention {s:?}");
    }
    assert!(!errs.contains("sk-test"), "the key never shows");
    assert_history_valid(&r.dir.path().join("history.json"));
    r.server.push(SseBuilder::answer("recovered"));
    let (outcome, _) = tokio::time::timeout(LIMIT, run(&mut r.agent, "again"))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Answered);
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(session.last_answer(), Some("recovered"));
    events
}

fn retrying(events: &[AgentEvent]) -> Vec<(u32, u32, Duration)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                ..
            } => Some((*attempt, *max_attempts, *delay)),
            _ => None,
        })
        .collect()
}

/// How many retries started the answer again from the start.
fn restarts(events: &[AgentEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, AgentEvent::Retrying { restarts: true, .. }))
        .count()
}

#[tokio::test]
async fn a_stream_cut_mid_answer_is_asked_for_again_once_and_says_so() {
    let cut = SseBuilder::new()
        .role()
        .content(&["Half of the ans"])
        .build();
    let mut r = rig(
        vec![cut, SseBuilder::answer("The whole answer.")],
        vec![],
        Preset::Flash,
        6,
    )
    .await;
    let (outcome, events) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered, "{events:?}");
    let retry = events
        .iter()
        .find_map(|e| match e {
            AgentEvent::Retrying {
                cause, restarts, ..
            } => Some((*cause, *restarts)),
            _ => None,
        })
        .expect("the retry is told");
    assert_eq!(retry, (miniclaw::llm::RetryCause::StreamCut, true));
    // The same request went again, and only the whole answer is kept.
    let requests = r.server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].json()["messages"],
        requests[1].json()["messages"]
    );
    let s = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(s.last_answer(), Some("The whole answer."));
    assert!(
        !serde_json::to_string(&s)
            .unwrap()
            .contains("Half of the ans")
    );
}

async fn retried_then_answered(first: Reply) -> Vec<AgentEvent> {
    let mut r = rig(
        vec![first, SseBuilder::answer("fine")],
        vec![],
        Preset::Flash,
        6,
    )
    .await;
    let (outcome, events) = tokio::time::timeout(LIMIT, run(&mut r.agent, "x"))
        .await
        .unwrap();
    assert_eq!(
        outcome,
        TurnOutcome::Answered,
        "success after a retry looks like success"
    );
    assert!(errors(&events).is_empty());
    assert_eq!(r.server.requests().len(), 2);
    assert_history_valid(&r.dir.path().join("history.json"));
    events
}

#[tokio::test]
async fn rate_limit_with_retry_after_is_retried_after_the_servers_delay() {
    let events =
        retried_then_answered(Reply::error_retry_after(429, "Rate limit reached", 0)).await;
    assert_eq!(retrying(&events), vec![(2, 2, Duration::ZERO)]);
}

#[tokio::test]
async fn rate_limit_without_retry_after_and_server_errors_are_retried_with_backoff() {
    for status in [429, 500, 503] {
        let events = retried_then_answered(Reply::error(status, "busy")).await;
        let r = retrying(&events);
        assert_eq!(r.len(), 1, "status {status}");
        assert_eq!((r[0].0, r[0].1), (2, 2));
    }
}

#[tokio::test]
async fn client_errors_are_not_retried_and_say_what_to_do() {
    for (status, server_says, advice) in [
        (400, "Invalid request format", "invalid"),
        (401, "Authentication Fails", "DEEPSEEK_API_KEY"),
        (402, "Insufficient Balance", "top up"),
        (422, "Invalid parameters", "invalid request parameters"),
    ] {
        let r = rig(
            vec![Reply::error(status, server_says)],
            vec![],
            Preset::Flash,
            6,
        )
        .await;
        let events = fails_then_recovers(r, &[server_says, advice]).await;
        assert!(
            retrying(&events).is_empty(),
            "status {status} is not retried"
        );
    }
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut r = rig(vec![], vec![], Preset::Flash, 6).await;
    r.agent = rebuild(
        &r,
        LlmClient::new(&format!("http://127.0.0.1:{port}"), Some("sk-test".into())).unwrap(),
    );
    let (outcome, events) = tokio::time::timeout(LIMIT, run(&mut r.agent, "x"))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Network));
    assert_eq!(retrying(&events).len(), 1);
    let errs = errors(&events).join("\n");
    assert!(
        errs.contains("network error") && errs.contains("Try the prompt again"),
        "{errs}"
    );
    assert_history_valid(&r.dir.path().join("history.json"));
}

/// A resolver that knows no names: a host that does not resolve, without asking any DNS server.
struct NoNames;

impl reqwest::dns::Resolve for NoNames {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            Err(Box::new(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!("no such host: {host}"),
            )) as Box<dyn std::error::Error + Send + Sync>)
        })
    }
}

#[tokio::test]
async fn a_name_that_does_not_resolve_is_reported() {
    let mut r = rig(vec![], vec![], Preset::Flash, 6).await;
    let client = LlmClient::new("http://model.example.invalid", Some("sk-test".into()))
        .unwrap()
        .with_dns_resolver(Arc::new(NoNames))
        .unwrap();
    r.agent = rebuild(&r, client);
    let (outcome, events) = tokio::time::timeout(LIMIT, run(&mut r.agent, "x"))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Network));
    let errs = errors(&events).join("\n");
    assert!(errs.contains("network error"), "{errs}");
    assert_history_valid(&r.dir.path().join("history.json"));
}

fn rebuild(r: &Rig, client: LlmClient) -> miniclaw::agent::Agent {
    let client = client.with_retry(RetryPolicy {
        max_attempts: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_millis(20),
    });
    miniclaw::agent::Agent::new(
        client,
        Arc::new(ToolRegistry::new()),
        Arc::new(miniclaw::tools::Sandbox::new(r.dir.path()).unwrap()),
        miniclaw::agent::Session::new(),
        miniclaw::agent::AgentSettings {
            preset: Preset::Flash,
            max_steps: 6,
            history_path: Some(r.dir.path().join("history.json")),
        },
    )
}

async fn short_idle(script: Vec<Reply>) -> Rig {
    rig_with(script, ToolRegistry::new(), Preset::Flash, 6, |c| {
        c.with_idle_timeout(Duration::from_millis(400))
    })
    .await
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let r = short_idle(vec![Reply::Hang, Reply::Hang]).await;
    fails_then_recovers(r, &["Try the prompt again"]).await;
}

#[tokio::test]
async fn a_stream_of_only_keep_alives_fails_once_it_was_queued_past_the_bound() {
    let mut b = SseBuilder::new();
    for _ in 0..40 {
        b = b.keep_alive().pause(50);
    }
    // Keep-alives every 50 ms keep the queued request alive past the 400 ms idle timeout, up to
    // the queue's bound (here 1 s): then it fails, told to try later, and is not retried.
    let r = rig_with(
        vec![b.build()],
        ToolRegistry::new(),
        Preset::Flash,
        6,
        |c| {
            c.with_idle_timeout(Duration::from_millis(400))
                .with_queue_limit(Duration::from_secs(1))
        },
    )
    .await;
    let events = fails_then_recovers(
        r,
        &["queued for 1 min", "Send the prompt again in a few minutes"],
    )
    .await;
    assert!(retrying(&events).is_empty());
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::Queued { started: false, .. }))
    );
}

#[tokio::test]
async fn a_stream_cut_in_reasoning_keeps_what_arrived_marked() {
    let cut = SseBuilder::new()
        .role()
        .reasoning(&["I was thinking"])
        .build();
    // Cut again after the one automatic restart: the turn fails.
    let mut r = rig(vec![cut.clone(), cut], vec![], Preset::Pro, 6).await;
    let (outcome, events) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Network));
    assert!(
        errors(&events)
            .join("")
            .contains("closed before it was complete")
    );
    let s = assert_history_valid(&r.dir.path().join("history.json"));
    let last = s.messages.last().unwrap();
    assert_eq!(last.reasoning.as_deref(), Some("I was thinking"));
    assert!(
        last.incomplete
            .clone()
            .map(String::from)
            .is_some_and(|why| why.contains("closed before"))
    );
}

#[tokio::test]
async fn a_stream_cut_in_content_keeps_the_partial_answer() {
    let cut = SseBuilder::new()
        .role()
        .content(&["Half of the ans"])
        .build();
    let mut r = rig(vec![cut.clone(), cut], vec![], Preset::Flash, 6).await;
    let (_, events) = run(&mut r.agent, "x").await;
    assert_eq!(restarts(&events), 1, "restarted once, then given up");
    match events.last().unwrap() {
        AgentEvent::TurnFinished { outcome, .. } => {
            assert_eq!(*outcome, TurnOutcome::Failed(FailCause::Network));
        }
        e => panic!("{e:?}"),
    }
    // What the client had received when the stream broke is what it returned, and kept.
    assert!(events.contains(&AgentEvent::ContentDelta("Half of the ans".into())));
    let s = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(s.messages.last().unwrap().content, "Half of the ans");
    r.server.push(SseBuilder::answer("whole"));
    let (outcome, _) = run(&mut r.agent, "again").await;
    assert_eq!(outcome, TurnOutcome::Answered);
}

#[tokio::test]
async fn a_stream_cut_in_tool_call_arguments_runs_no_tool() {
    let cut = SseBuilder::new()
        .role()
        .raw(b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"probe\",\"arguments\":\"{\\\"x\\\": \\\"hal\"}}]},\"finish_reason\":null}]}\n\n")
        .build();
    let r = rig(
        vec![cut.clone(), cut],
        vec![Probe::new("probe", false)],
        Preset::Flash,
        6,
    )
    .await;
    let events = fails_then_recovers(r, &["closed before it was complete"]).await;
    assert!(
        observations(&events).is_empty(),
        "a half-arrived call is never run"
    );
}

#[tokio::test]
async fn a_malformed_chunk_is_reported() {
    let bad = SseBuilder::new()
        .role()
        .raw(b"data: {this is not json}\n\n")
        .done()
        .build();
    let r = rig(vec![bad], vec![], Preset::Flash, 6).await;
    fails_then_recovers(r, &["malformed"]).await;
}

#[tokio::test]
async fn finish_reasons_that_cut_the_answer_are_marked_and_explained() {
    for (reason, says) in [
        ("length", "output limit"),
        ("content_filter", "content filter"),
        ("insufficient_system_resource", "ran out of capacity"),
    ] {
        let reply = SseBuilder::new()
            .role()
            .content(&["Some of it"])
            .finish(reason)
            .done()
            .build();
        let mut r = rig(vec![reply], vec![], Preset::Flash, 6).await;
        let (outcome, events) = run(&mut r.agent, "x").await;
        assert_eq!(outcome, TurnOutcome::Failed(FailCause::Cut), "{reason}");
        assert!(errors(&events).join("").contains(says), "{reason}");
        let s = assert_history_valid(&r.dir.path().join("history.json"));
        assert_eq!(s.messages.last().unwrap().content, "Some of it");
        assert!(s.messages.last().unwrap().incomplete.is_some());
    }
}

#[tokio::test]
async fn a_hundred_tool_calls_in_one_response_are_bounded() {
    let mut b = SseBuilder::new().role();
    for i in 0..100 {
        b = b.tool_call(
            i,
            &format!("c{i}"),
            "probe",
            &json!({"x": i.to_string()}),
            100,
        );
    }
    let script = vec![
        b.finish("tool_calls").done().build(),
        SseBuilder::answer("done"),
    ];
    let mut r = rig(script, vec![Probe::new("probe", true)], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs.len(), 100);
    assert_eq!(obs.iter().filter(|o| o["ok"] == true).count(), 32);
    let refused = obs
        .iter()
        .filter(|o| {
            o["error"]
                .as_str()
                .is_some_and(|e| e.contains("more than 32"))
        })
        .count();
    assert_eq!(refused, 68);
    let s = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(
        s.messages
            .iter()
            .filter(|m| m.tool_call_id.is_some())
            .count(),
        100
    );
}

#[tokio::test]
async fn a_tool_that_hangs_is_stopped_by_the_call_timeout() {
    let mut hang = Probe::new("hang", false);
    hang.sleep = Duration::from_secs(3600);
    let mut registry = ToolRegistry::new().with_call_timeout(Duration::from_millis(300));
    registry.register(hang);
    let script = vec![
        SseBuilder::calls("c1", "hang", json!({"x": "1"})),
        SseBuilder::answer("gave up"),
    ];
    let mut r = rig_with(script, registry, Preset::Flash, 6, |c| c).await;
    let (outcome, events) = tokio::time::timeout(LIMIT, run(&mut r.agent, "x"))
        .await
        .unwrap();
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs[0]["ok"], false);
    assert!(obs[0]["error"].as_str().unwrap().contains("timed out"));
}

#[tokio::test]
async fn a_tool_that_prints_ten_megabytes_is_capped_before_it_reaches_the_model() {
    let script = vec![
        SseBuilder::calls("c1", "read_text_file", json!({"relative_path": "big.txt"})),
        SseBuilder::answer("read it"),
    ];
    let mut registry = ToolRegistry::new();
    miniclaw::tools::files::register(&mut registry);
    miniclaw::tools::file_edit::register(&mut registry);
    let mut r = rig_with(script, registry, Preset::Flash, 6, |c| c).await;
    std::fs::write(
        r.dir.path().join("big.txt"),
        "0123456789\n".repeat(1_000_000),
    )
    .unwrap();
    let (outcome, _) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let sent = r.server.requests()[1].body.len();
    assert!(
        sent < 300 * 1024,
        "the observation sent was capped ({sent} bytes)"
    );
}

#[tokio::test]
async fn the_calls_of_a_response_cut_by_a_limit_are_not_run() {
    let cut = SseBuilder::new()
        .role()
        .tool_call(0, "c1", "probe", &json!({"x": "1"}), 3)
        .tool_call_raw(1, "c2", "probe", "{\"x\": \"hal")
        .finish("length")
        .done()
        .build();
    let r = rig(
        vec![cut],
        vec![Probe::new("probe", false)],
        Preset::Flash,
        6,
    )
    .await;
    let events = fails_then_recovers(r, &["output limit"]).await;
    assert!(
        observations(&events).is_empty(),
        "no call of a cut response runs"
    );
}

#[tokio::test]
async fn calls_refused_for_the_per_step_limit_may_be_asked_for_again() {
    let mut b = SseBuilder::new().role();
    for i in 0..34 {
        b = b.tool_call(
            i,
            &format!("c{i}"),
            "probe",
            &json!({"x": i.to_string()}),
            100,
        );
    }
    let again = SseBuilder::new()
        .role()
        .tool_call(0, "d32", "probe", &json!({"x": "32"}), 100)
        .tool_call(1, "d33", "probe", &json!({"x": "33"}), 100)
        .finish("tool_calls")
        .done()
        .build();
    let script = vec![
        b.finish("tool_calls").done().build(),
        again,
        SseBuilder::answer("all done"),
    ];
    let mut r = rig(script, vec![Probe::new("probe", true)], Preset::Flash, 6).await;
    let (outcome, events) = run(&mut r.agent, "x").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs.len(), 36);
    assert!(
        obs[34..].iter().all(|o| o["ok"] == true),
        "{:?}",
        &obs[34..]
    );
}
