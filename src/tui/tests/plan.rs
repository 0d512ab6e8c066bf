//! `/plan` on the screen: the planner's plan in a block of its own and in the input to edit,
//! Enter running it (Esc setting it aside), the timeline grouping the executor's steps under
//! each item with its state, and a saved plan run shown again the way it was seen live.

use std::time::Instant;

use super::common::*;
use crate::agent::plan::PlanMark;
use crate::agent::{AgentCommand, AgentEvent, Message, Session, TurnOutcome};
use crate::events::{ItemState, PlanEvent, PlanSummary};
use crate::llm::{FunctionCall, ToolCall};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::{EntryKind, PlanPhase};
use crate::tui::update::{self, Effect};
use crossterm::event::{KeyCode, KeyModifiers};
use serde_json::json;

const PLAN: &str = "1. Read notes.md\n2. Write summary.md\n3. Check it";

fn items() -> Vec<String> {
    ["Read notes.md", "Write summary.md", "Check it"]
        .map(String::from)
        .to_vec()
}

fn plan(event: PlanEvent) -> AgentEvent {
    AgentEvent::Plan(event)
}

fn finished(outcome: TurnOutcome) -> AgentEvent {
    AgentEvent::TurnFinished {
        outcome,
        usage: None,
        last_usage: None,
    }
}

/// The planner's turn as the agent reports it (and as a saved one is told again).
fn planner_turn(replayed: bool) -> Vec<AgentEvent> {
    vec![
        plan(PlanEvent::Planning {
            task: "Tidy the notes".into(),
            model: "deepseek-v4-pro".into(),
        }),
        AgentEvent::TurnStarted {
            prompt: "Tidy the notes".into(),
        },
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ContentDelta(PLAN.into()),
        finished(TurnOutcome::Answered),
        plan(PlanEvent::Proposed {
            items: items(),
            replayed,
        }),
    ]
}

/// The executor's first item (a read, then its answer), up to the second item's start.
fn first_item() -> Vec<AgentEvent> {
    vec![
        plan(PlanEvent::Executing {
            items: items(),
            model: "deepseek-flash".into(),
        }),
        plan(PlanEvent::ItemStarted { index: 0 }),
        AgentEvent::TurnStarted {
            prompt: "Read notes.md".into(),
        },
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "read_text_file".into(),
            arguments: r#"{"relative_path":"notes.md"}"#.into(),
        },
        AgentEvent::ToolFinished {
            id: "c1".into(),
            name: "read_text_file".into(),
            result: json!({"ok": true, "tool": "read_text_file", "content": "hi"}).into(),
            outcome: crate::events::CallOutcome::Ok,
            approved: false,
            duration: None,
        },
        AgentEvent::StepStarted { step: 2, max: 10 },
        AgentEvent::ContentDelta("Read: it says hi.".into()),
        finished(TurnOutcome::Answered),
        plan(PlanEvent::ItemFinished {
            index: 0,
            state: ItemState::Done,
            reason: None,
        }),
    ]
}

/// The second item fails; the run stops there.
fn failing_item() -> Vec<AgentEvent> {
    let reason = Some("the disk is full".to_string());
    vec![
        plan(PlanEvent::ItemStarted { index: 1 }),
        AgentEvent::TurnStarted {
            prompt: "Write summary.md".into(),
        },
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ContentDelta("I could not.\nITEM FAILED: the disk is full".into()),
        finished(TurnOutcome::Answered),
        plan(PlanEvent::ItemFinished {
            index: 1,
            state: ItemState::Failed,
            reason: reason.clone(),
        }),
        plan(PlanEvent::Finished(PlanSummary {
            done: 1,
            total: 3,
            stopped: Some((1, ItemState::Failed, reason)),
        })),
    ]
}

#[test]
fn slash_plan_asks_the_agent_for_a_plan_and_the_plan_waits_in_the_input() {
    let t0 = Instant::now();
    let mut s = state();
    let effects = send(&mut s, t0, "/plan Tidy the notes");
    assert_eq!(
        effects,
        [Effect::Command(AgentCommand::Plan("Tidy the notes".into()))]
    );
    assert!(s.busy());
    feed(&mut s, t0, planner_turn(false));
    assert_eq!(
        s.composer.input_text(),
        PLAN,
        "the plan is in the input, to edit"
    );
    assert!(s.view.plans.draft());
    // The planner's answer is shown once: as the plan's block.
    let kinds: Vec<EntryKind> = s.view.entries.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EntryKind::User, EntryKind::Plan]);
    assert_eq!(s.view.entries[0].text, "/plan Tidy the notes");
    insta::assert_snapshot!(render(&mut s, 100, 24, t0));
}

#[test]
fn enter_runs_the_plan_as_edited_and_esc_sets_it_aside() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    let edited = "1. Read notes.md\n2. Write a shorter summary.md";
    let effects = send(&mut s, t0, edited);
    assert_eq!(
        effects,
        [Effect::Command(AgentCommand::RunPlan(edited.into()))]
    );
    assert!(s.composer.input_empty());

    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    let ctx = update::key_context(&s, t0);
    let esc = map_key(&ctx, k(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(esc, Action::DiscardPlan);
    update::apply(&mut s, esc, t0);
    assert!(s.composer.input_empty());
    assert_eq!(s.view.plans.list[0].phase, PlanPhase::NotRun);
    let effects = send(&mut s, t0, "just a question");
    assert_eq!(
        effects,
        [Effect::Command(AgentCommand::Prompt(
            "just a question".into()
        ))]
    );
}

#[test]
fn a_plan_without_numbered_items_is_not_run() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    assert!(send(&mut s, t0, "no list here").is_empty());
    assert_eq!(s.composer.input_text(), "no list here", "kept to be fixed");
    assert!(send(&mut s, t0, "/plan").is_empty());
    assert!(s.view.entries.last().unwrap().text.contains("needs a task"));
}

#[test]
fn the_run_stays_busy_between_items_and_esc_interrupts_it() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    send(&mut s, t0, PLAN);
    feed(&mut s, t0, first_item());
    assert!(s.busy(), "between two items the run still runs");
    let ctx = update::key_context(&s, t0);
    let esc = map_key(&ctx, k(KeyCode::Esc, KeyModifiers::NONE));
    assert_eq!(update::apply(&mut s, esc, t0), [Effect::Interrupt]);
    feed(&mut s, t0, failing_item());
    assert!(!s.busy());
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("Plan stopped at item 2 of 3 (failed): the disk is full")
    );
}

#[test]
fn the_timeline_groups_steps_under_each_item_while_it_runs() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    send(&mut s, t0, PLAN);
    feed(&mut s, t0, first_item());
    let mut running = failing_item();
    running.truncate(3);
    feed(&mut s, t0, running);
    insta::assert_snapshot!(render(&mut s, 120, 30, t0));
}

#[test]
fn a_stopped_plan_shows_which_item_failed() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/plan Tidy the notes");
    feed(&mut s, t0, planner_turn(false));
    send(&mut s, t0, PLAN);
    feed(&mut s, t0, first_item());
    feed(&mut s, t0, failing_item());
    insta::assert_snapshot!(render(&mut s, 120, 34, t0));
}

/// The session the run above saves.
fn saved_session() -> Session {
    let mut s = Session::new();
    let mut request = Message::user("Tidy the notes");
    request.plan = Some(PlanMark::Request {
        model: "deepseek-v4-pro".into(),
    });
    s.push(request);
    s.push(Message::assistant(PLAN, None, vec![]));
    let item = |index: usize| {
        let mut m = Message::user(format!("Carry out item {}", index + 1));
        m.plan = Some(PlanMark::Item {
            model: "deepseek-flash".into(),
            run: "r1".into(),
            index,
            items: items(),
        });
        m
    };
    s.push(item(0));
    let call = ToolCall {
        id: "c1".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_text_file".into(),
            arguments: r#"{"relative_path":"notes.md"}"#.into(),
        },
    };
    s.push(Message::assistant("", None, vec![call]));
    s.push(Message::tool(
        "c1",
        json!({"ok": true, "tool": "read_text_file", "content": "hi"}).to_string(),
    ));
    s.push(Message::assistant("Read: it says hi.", None, vec![]));
    s.push(item(1));
    s.push(Message::assistant(
        "I could not.\nITEM FAILED: the disk is full",
        None,
        vec![],
    ));
    s
}

#[test]
fn a_reopened_session_shows_its_plan_run_as_it_was_seen_live() {
    let t0 = Instant::now();
    let mut live = state();
    feed(&mut live, t0, planner_turn(false));
    update::apply(&mut live, Action::DiscardPlan, t0);
    feed(&mut live, t0, first_item());
    feed(&mut live, t0, failing_item());
    let mut reopened = state();
    update::show_session(&mut reopened, &saved_session(), t0);
    assert_eq!(reopened.view.plans.list, live.view.plans.list);
    assert_eq!(reopened.view.plans.list[0].phase, PlanPhase::Stopped);
    // The same screen but the status line (the live one still shows the last key's hint).
    let without_status = |screen: String| {
        let lines: Vec<String> = screen.lines().map(str::to_string).collect();
        lines[..lines.len() - 1].join("\n")
    };
    assert_eq!(
        without_status(render(&mut reopened, 120, 34, t0)),
        without_status(render(&mut live, 120, 34, t0))
    );
}
