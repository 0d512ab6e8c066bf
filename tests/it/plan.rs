//! `/plan` against the local model server: the planner (the pro preset, only the read-only
//! tools, asked for a plan) and the executor (the flash preset, every tool, one turn per item)
//! as the request log shows them; a failed item stopping the run; an interrupt stopping either
//! half; the plan and its progress saved and told again from the history.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use miniclaw::agent::plan::{PLANNER_ADDITION, PlanMark};
use miniclaw::agent::replay::replay;
use miniclaw::agent::{AgentEvent, EventSink, TurnOutcome, history};
use miniclaw::events::{ItemState, PlanEvent, PlanSummary};
use miniclaw::llm::Preset;
use serde_json::json;
use support::rig::{Probe, Rig, assert_history_valid, rig};
use support::{RecordedRequest, Reply, SseBuilder};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// A rig whose tools are a read-only `peek` and a changing `poke`.
async fn plan_rig(script: Vec<Reply>, max_steps: usize) -> Rig {
    let tools = vec![Probe::new("peek", true), Probe::new("poke", false)];
    rig(script, tools, Preset::Flash, max_steps).await
}

/// Collects every event sent to the sink it hands out; `cancel_on` cancels `cancel` when an
/// answer piece containing that text arrives.
fn collector(
    cancel: &CancellationToken,
    cancel_on: Option<&'static str>,
) -> (EventSink, Collected) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s, c) = (seen.clone(), cancel.clone());
    let task = tokio::spawn(async move {
        while let Some(e) = rx.recv().await {
            if let (Some(text), AgentEvent::ContentDelta(piece)) = (cancel_on, &e)
                && piece.contains(text)
            {
                c.cancel();
            }
            s.lock().unwrap().push(e);
        }
    });
    (EventSink::new(tx), Collected { seen, task })
}

/// The events a `collector` has read so far (on its own task).
struct Collected {
    seen: Arc<Mutex<Vec<AgentEvent>>>,
    task: tokio::task::JoinHandle<()>,
}

impl std::ops::Deref for Collected {
    type Target = Mutex<Vec<AgentEvent>>;
    fn deref(&self) -> &Self::Target {
        &self.seen
    }
}

fn plan_events(events: &[AgentEvent]) -> Vec<PlanEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Plan(p) => Some(p.clone()),
            _ => None,
        })
        .collect()
}

fn tool_names(request: &RecordedRequest) -> Vec<String> {
    request.json()["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn system_prompt(request: &RecordedRequest) -> String {
    request.json()["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn last_user_text(request: &RecordedRequest) -> String {
    let body = request.json();
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    user["content"].as_str().unwrap_or("").to_string()
}

/// Waits until the collector has read every event sent: with the run over and its sink
/// dropped, the channel ends once it is read to the end.
async fn settle(events: EventSink, collected: &mut Collected) {
    drop(events);
    tokio::time::timeout(Duration::from_secs(10), &mut collected.task)
        .await
        .expect("the collector to read every event (did a copy of the sink outlive the run?)")
        .unwrap();
}

#[tokio::test]
async fn the_planner_uses_pro_and_read_only_tools_and_the_executor_flash_item_by_item() {
    let script = vec![
        SseBuilder::calls("p1", "peek", json!({"x": "look"})),
        SseBuilder::answer("Here is the plan:\n1. Look at the notes\n2. Change the notes\n"),
        SseBuilder::answer("Looked: they are short."),
        SseBuilder::calls("e1", "poke", json!({"x": "change"})),
        SseBuilder::answer("Changed them."),
    ];
    let mut r = plan_rig(script, 6).await;
    let cancel = CancellationToken::new();
    let (events, mut seen) = collector(&cancel, None);
    let (outcome, items) = r.agent.plan("Tidy the notes", &events, &cancel).await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(items, ["Look at the notes", "Change the notes"]);
    let summary = r.agent.execute_plan(items, &events, &cancel).await;
    assert!(summary.completed(), "{summary:?}");
    settle(events, &mut seen).await;

    let requests = r.server.requests();
    assert_eq!(requests.len(), 5);
    for planner in &requests[..2] {
        let body = planner.json();
        assert_eq!(body["model"], "deepseek-v4-pro");
        assert_eq!(body["thinking"], json!({"type": "enabled"}));
        assert_eq!(tool_names(planner), ["peek"], "only the read-only tools");
        assert!(system_prompt(planner).ends_with(PLANNER_ADDITION));
    }
    for executor in &requests[2..] {
        assert_eq!(executor.json()["model"], "deepseek-flash");
        assert_eq!(tool_names(executor), ["peek", "poke"]);
        assert!(!system_prompt(executor).contains(PLANNER_ADDITION));
    }
    let first_item = last_user_text(&requests[2]);
    assert!(
        first_item.starts_with("Carry out item 1 of 2"),
        "{first_item}"
    );
    assert!(
        first_item.contains("The task: Tidy the notes"),
        "{first_item}"
    );
    assert!(last_user_text(&requests[3]).contains("1. [done] Look at the notes\n2. [now]"));
    // The person's preset is untouched by the run.
    assert_eq!(r.agent.current_preset(), Preset::Flash);

    let said = plan_events(&seen.lock().unwrap());
    assert!(matches!(&said[0], PlanEvent::Planning { model, .. } if model == "deepseek-v4-pro"));
    assert!(matches!(
        &said[1],
        PlanEvent::Proposed {
            replayed: false,
            ..
        }
    ));
    assert!(matches!(&said[2], PlanEvent::Executing { model, .. } if model == "deepseek-flash"));
    assert_eq!(
        said.last(),
        Some(&PlanEvent::Finished(PlanSummary {
            done: 2,
            total: 2,
            stopped: None
        }))
    );
}

#[tokio::test]
async fn the_plan_and_its_progress_are_saved_and_told_again_from_the_history() {
    let script = vec![
        SseBuilder::answer("1. Look\n2. Change\n3. Check"),
        SseBuilder::answer("Looked."),
        SseBuilder::answer("I could not.\nITEM FAILED: the notes are read-only"),
    ];
    let mut r = plan_rig(script, 6).await;
    let cancel = CancellationToken::new();
    let (events, mut live) = collector(&cancel, None);
    let (_, items) = r.agent.plan("Tidy", &events, &cancel).await;
    r.agent.execute_plan(items, &events, &cancel).await;
    settle(events, &mut live).await;

    let path = r.dir.path().join("history.json");
    let session = assert_history_valid(&path);
    let marks: Vec<&PlanMark> = session
        .messages
        .iter()
        .filter_map(|m| m.plan.as_ref())
        .collect();
    assert_eq!(
        marks.len(),
        3,
        "the planner's prompt and two items' prompts"
    );
    assert!(matches!(marks[0], PlanMark::Request { model } if model == "deepseek-v4-pro"));
    assert!(matches!(marks[2], PlanMark::Item { index: 1, items, .. } if items.len() == 3));
    let prompts: Vec<&str> = session.prompts().collect();
    assert_eq!(
        prompts,
        ["Tidy", "Look", "Change"],
        "items are shown as themselves"
    );

    // Reopened: the same plan events as live (the proposal shown, not edited again).
    let loaded = history::load(&path).unwrap().session;
    let told = plan_events(&replay(&loaded, 6));
    let mut seen = plan_events(&live.lock().unwrap());
    for event in &mut seen {
        if let PlanEvent::Proposed { replayed, .. } = event {
            *replayed = true;
        }
    }
    assert_eq!(told, seen);
    assert!(told.contains(&PlanEvent::ItemFinished {
        index: 1,
        state: ItemState::Failed,
        reason: Some("the notes are read-only".into()),
    }));
}

#[tokio::test]
async fn a_failed_item_stops_the_run_and_says_which() {
    let script = vec![
        SseBuilder::answer("Done with one."),
        SseBuilder::answer("ITEM FAILED: no such file"),
    ];
    let mut r = plan_rig(script, 6).await;
    let cancel = CancellationToken::new();
    let (events, mut seen) = collector(&cancel, None);
    let items = vec!["One".to_string(), "Two".to_string(), "Three".to_string()];
    let summary = r.agent.execute_plan(items, &events, &cancel).await;
    settle(events, &mut seen).await;
    assert_eq!(
        summary,
        PlanSummary {
            done: 1,
            total: 3,
            stopped: Some((1, ItemState::Failed, Some("no such file".into()))),
        }
    );
    assert_eq!(r.server.requests().len(), 2, "item 3 never ran");
    let said = plan_events(&seen.lock().unwrap());
    assert!(!said.contains(&PlanEvent::ItemStarted { index: 2 }));
}

#[tokio::test]
async fn an_item_that_uses_every_step_fails_the_run() {
    let script = vec![SseBuilder::calls("c1", "poke", json!({"x": "1"}))];
    let mut r = plan_rig(script, 1).await;
    let cancel = CancellationToken::new();
    let (events, _) = collector(&cancel, None);
    let items = vec!["Loop".to_string(), "Never".to_string()];
    let summary = r.agent.execute_plan(items, &events, &cancel).await;
    let (index, state, reason) = summary.stopped.unwrap();
    assert_eq!((index, state), (0, ItemState::Failed));
    assert!(reason.unwrap().contains("every step"));
    assert_eq!(r.server.requests().len(), 1);
}

/// An answer that sends "Working" and stalls before the rest.
fn stalled(text: &'static str) -> Reply {
    SseBuilder::new()
        .role()
        .content(&[text])
        .pause(5_000)
        .content(&[" more"])
        .finish("stop")
        .done()
        .build()
}

#[tokio::test]
async fn an_interrupt_stops_the_executor_and_no_later_item_runs() {
    let mut r = plan_rig(
        vec![SseBuilder::answer("First done."), stalled("Working")],
        6,
    )
    .await;
    let cancel = CancellationToken::new();
    let (events, _) = collector(&cancel, Some("Working"));
    let items = vec!["A".to_string(), "B".to_string(), "C".to_string()];
    let summary = tokio::time::timeout(
        Duration::from_secs(3),
        r.agent.execute_plan(items, &events, &cancel),
    )
    .await
    .expect("an interrupt stops the run at once");
    assert_eq!(summary.stopped, Some((1, ItemState::Interrupted, None)));
    assert_eq!(summary.done, 1);
    assert_eq!(r.server.requests().len(), 2);
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let last = session.messages.last().unwrap();
    assert_eq!(
        last.incomplete,
        Some(miniclaw::agent::session::Incomplete::Interrupted)
    );
}

#[tokio::test]
async fn an_interrupt_stops_the_planner_without_a_plan() {
    let mut r = plan_rig(vec![stalled("1. Half")], 6).await;
    let cancel = CancellationToken::new();
    let (events, mut seen) = collector(&cancel, Some("Half"));
    let (outcome, items) = r.agent.plan("Tidy", &events, &cancel).await;
    settle(events, &mut seen).await;
    assert_eq!(outcome, TurnOutcome::Interrupted);
    assert!(items.is_empty());
    let said = plan_events(&seen.lock().unwrap());
    assert!(!said.iter().any(|e| matches!(e, PlanEvent::Proposed { .. })));
}

#[tokio::test]
async fn a_planner_answer_without_a_numbered_list_is_no_plan() {
    let mut r = plan_rig(vec![SseBuilder::answer("I would rather not.")], 6).await;
    let cancel = CancellationToken::new();
    let (events, mut seen) = collector(&cancel, None);
    let (outcome, items) = r.agent.plan("Tidy", &events, &cancel).await;
    settle(events, &mut seen).await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(items.is_empty());
    let seen = seen.lock().unwrap();
    assert!(seen.iter().any(
        |e| matches!(e, AgentEvent::Error { message } if message.contains("no numbered plan"))
    ));
}
