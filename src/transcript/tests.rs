use std::time::Duration;

use serde_json::json;

use super::*;
use crate::events::{FailCause, ItemState, PlanEvent, PlanSummary, RefusedBy};

fn started(id: &str, name: &str) -> AgentEvent {
    AgentEvent::ToolCallStarted {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

fn finished(id: &str, outcome: CallOutcome, approved: bool) -> AgentEvent {
    AgentEvent::ToolFinished {
        id: id.into(),
        name: "t".into(),
        result: json!({"ok": outcome.is_ok()}).into(),
        outcome,
        approved,
        duration: Some(Duration::from_millis(2)),
    }
}

fn turn_end(outcome: TurnOutcome) -> AgentEvent {
    AgentEvent::TurnFinished {
        outcome,
        usage: None,
        last_usage: None,
    }
}

fn step(n: usize) -> AgentEvent {
    AgentEvent::StepStarted { step: n, max: 6 }
}

#[test]
fn text_before_calls_is_a_thought_and_the_last_steps_text_the_answer() {
    let events = vec![
        AgentEvent::TurnStarted {
            prompt: "go".into(),
        },
        AgentEvent::FilesAttached(vec!["a.md".into()]),
        step(1),
        AgentEvent::ReasoningDelta("hm".into()),
        AgentEvent::ContentDelta("Let me ".into()),
        AgentEvent::ContentDelta("look.".into()),
        AgentEvent::StepFinished(StepEnd::Thought),
        started("c1", "read"),
        AgentEvent::ToolOutputDelta {
            id: "c1".into(),
            text: "line".into(),
        },
        finished("c1", CallOutcome::Ok, true),
        started("c2", "write"),
        finished(
            "c2",
            CallOutcome::Denied {
                reason: "no".into(),
            },
            false,
        ),
        step(2),
        AgentEvent::ContentDelta("Done.".into()),
        AgentEvent::StepFinished(StepEnd::Answer),
        turn_end(TurnOutcome::Answered),
    ];
    let t = Transcript::of(&events);
    assert_eq!(t.turns.len(), 1);
    assert_eq!(t.turns[0].mentions, vec!["a.md".to_string()]);
    assert_eq!(t.turns[0].outcome, Some(TurnOutcome::Answered));
    assert_eq!(t.steps.len(), 2);
    assert_eq!(t.steps[0].thought(), Some("Let me look."));
    assert_eq!(t.steps[0].reasoning, "hm");
    let calls = &t.steps[0].calls;
    assert_eq!(calls[0].output, "line");
    assert!(calls[0].finished.as_ref().is_some_and(|f| f.approved));
    assert!(calls[1].failed());
    assert_eq!(t.answer(0), Some("Done."));
    assert_eq!(t.denied(), 1);
}

#[test]
fn an_interrupted_turn_keeps_its_partial_answer_and_its_open_call_has_no_end() {
    let events = vec![
        AgentEvent::TurnStarted {
            prompt: "go".into(),
        },
        step(1),
        AgentEvent::ContentDelta("Thinking".into()),
        AgentEvent::StepFinished(StepEnd::Thought),
        started("c1", "slow"),
        turn_end(TurnOutcome::Interrupted),
        AgentEvent::TurnStarted {
            prompt: "again".into(),
        },
        step(1),
        AgentEvent::ContentDelta("Half an ans".into()),
        AgentEvent::Error {
            message: "network".into(),
        },
        turn_end(TurnOutcome::Failed(FailCause::Network)),
    ];
    let mut t = Transcript::new();
    let changes: Vec<Change> = events.iter().map(|e| t.apply(e)).collect();
    assert_eq!(t.answer(0), None, "the text before a call is no answer");
    assert!(t.steps[0].calls[0].finished.is_none());
    assert_eq!(t.answer(1), Some("Half an ans"));
    assert_eq!(t.turns[1].errors, vec!["network".to_string()]);
    assert_eq!(
        t.turns[1].outcome.and_then(TurnOutcome::cause),
        Some(FailCause::Network)
    );
    assert_eq!(changes[3], Change::StepEnded(StepEnd::Thought));
    assert_eq!(changes[4], Change::CallStarted { step: 0, call: 0 });
    assert_eq!(changes[5], Change::TurnEnded);
    // Ending again changes nothing: the turn has ended.
    assert_eq!(t.apply(&turn_end(TurnOutcome::Answered)), Change::None);
}

#[test]
fn a_sub_agents_steps_go_under_the_call_that_started_it() {
    let nested = |e: AgentEvent| AgentEvent::Nested {
        parent_id: "c1".into(),
        event: Box::new(e),
    };
    let events = vec![
        AgentEvent::TurnStarted {
            prompt: "go".into(),
        },
        step(1),
        AgentEvent::StepFinished(StepEnd::Thought),
        started("c1", "delegate_file_analysis"),
        nested(step(1)),
        nested(AgentEvent::StepFinished(StepEnd::Thought)),
        nested(started("s1", "read_text_file")),
        nested(finished(
            "s1",
            CallOutcome::Refused {
                why: "repeat".into(),
                by: RefusedBy::Guard,
            },
            false,
        )),
        nested(AgentEvent::Error {
            message: "oops".into(),
        }),
        nested(step(2)),
        nested(AgentEvent::ContentDelta("Summary.\nMore.".into())),
        nested(turn_end(TurnOutcome::Answered)),
        finished("c1", CallOutcome::Ok, false),
    ];
    let t = Transcript::of(&events);
    assert_eq!(t.steps.len(), 1, "the sub-agent's steps are not the turn's");
    let sub = t.steps[0].calls[0].sub.as_deref().expect("a sub-agent");
    assert_eq!(sub.steps.len(), 2);
    assert!(sub.steps[0].calls[0].failed());
    assert_eq!(sub.errors, vec![(1, "oops".to_string())]);
    assert_eq!(sub.answer(), Some("Summary.\nMore."));
    assert_eq!(t.turns[0].errors, Vec::<String>::new());
    // A refusal by a guard is no denial.
    assert_eq!(t.denied(), 0);
}

#[test]
fn plan_turns_belong_to_their_planner_or_item() {
    let plan = |e: PlanEvent| AgentEvent::Plan(e);
    let events = vec![
        plan(PlanEvent::Planning {
            task: "t".into(),
            model: "pro".into(),
        }),
        AgentEvent::TurnStarted { prompt: "t".into() },
        turn_end(TurnOutcome::Answered),
        plan(PlanEvent::Proposed {
            items: vec!["a".into(), "b".into()],
            replayed: false,
        }),
        AgentEvent::TurnStarted {
            prompt: "unrelated".into(),
        },
        turn_end(TurnOutcome::Answered),
        plan(PlanEvent::Executing {
            items: vec!["a".into(), "b2".into()],
            model: "flash".into(),
        }),
        plan(PlanEvent::ItemStarted { index: 0 }),
        AgentEvent::TurnStarted { prompt: "a".into() },
        turn_end(TurnOutcome::Answered),
        plan(PlanEvent::ItemFinished {
            index: 0,
            state: ItemState::Done,
            reason: None,
        }),
        plan(PlanEvent::ItemStarted { index: 1 }),
        AgentEvent::TurnStarted {
            prompt: "b2".into(),
        },
        turn_end(TurnOutcome::Failed(FailCause::Server)),
        plan(PlanEvent::ItemFinished {
            index: 1,
            state: ItemState::Failed,
            reason: Some("its turn failed".into()),
        }),
        plan(PlanEvent::Finished(PlanSummary {
            done: 1,
            total: 2,
            stopped: Some((1, ItemState::Failed, None)),
        })),
    ];
    let t = Transcript::of(&events);
    let groups: Vec<Group> = t.turns.iter().map(|t| t.group).collect();
    assert_eq!(
        groups,
        vec![
            Group::Planner { plan: 0 },
            Group::Turn,
            Group::Item { plan: 0, item: 0 },
            Group::Item { plan: 0, item: 1 },
        ]
    );
    assert_eq!(t.plans.len(), 1);
    let run = &t.plans[0];
    assert_eq!(run.items[1].text, "b2");
    assert_eq!(run.items[1].state, ItemState::Failed);
    assert_eq!(run.executor_model.as_deref(), Some("flash"));
    assert!(!run.running());
}

#[test]
fn clearing_the_history_empties_it() {
    let mut t = Transcript::of(&[
        AgentEvent::TurnStarted {
            prompt: "go".into(),
        },
        step(1),
    ]);
    t.apply(&AgentEvent::HistoryCleared);
    assert_eq!(t, Transcript::new());
}
