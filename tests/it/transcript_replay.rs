//! A reopened session looks as it did live: the real agent runs scripted turns against the
//! local model server, its live events are folded into a transcript, and the session it saved,
//! told again by `agent::replay`, folds into the same transcript (apart from what a history does
//! not keep: token counts, a running tool's output, the words of an error, and time below a
//! millisecond).

use std::sync::Arc;

use futures::FutureExt;
use miniclaw::agent::approvals::Asker;
use miniclaw::agent::replay::replay;
use miniclaw::approval::{ApprovalMode, ApprovalRequest, Decision};
use miniclaw::events::{EventSink, FailCause, TurnOutcome};
use miniclaw::llm::{Preset, ToolSchema};
use miniclaw::tools::{Tool, ToolContext, ToolFuture, ToolRegistry};
use miniclaw::transcript::Transcript;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::support::rig::{Probe, rig_with, run};
use crate::support::{Reply, SseBuilder};

/// What one model call of a scripted turn does.
#[derive(Clone, Debug)]
enum Step {
    /// Thinks, says something, and calls tools: each call a probe call that works, one whose
    /// arguments lack a required field (it fails), or an unknown tool (a guard refuses it).
    Calls(Vec<CallKind>, bool),
    /// Answers.
    Answer(bool),
    /// Starts an answer the provider cuts at its output limit (the turn fails).
    Cut,
    /// The server refuses the request before anything arrives (the turn fails).
    Refused,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum CallKind {
    Works,
    Fails,
    Unknown,
    /// A change the person approves.
    Approved,
    /// A change the person denies.
    Denied,
    /// A call during which the person interrupts the turn (the rest of it never runs).
    Interrupts,
}

fn call_kind() -> impl Strategy<Value = CallKind> {
    prop_oneof![
        Just(CallKind::Works),
        Just(CallKind::Fails),
        Just(CallKind::Unknown),
        Just(CallKind::Approved),
        Just(CallKind::Denied),
        Just(CallKind::Interrupts),
    ]
}

/// A change that needs a yes in `ask` mode.
struct Change;

impl Tool for Change {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "change".into(),
            description: "test change".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        }
    }
    fn read_only(&self) -> bool {
        false
    }
    fn call<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        async { Ok(Map::new()) }.boxed()
    }
}

/// A call during which the person interrupts: the turn's token is cancelled, and the call
/// never ends by itself.
struct Interrupter;

impl Tool for Interrupter {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "interrupt".into(),
            description: "test interrupt".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }
    fn read_only(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, _args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        async move {
            ctx.cancel.cancel();
            std::future::pending().await
        }
        .boxed()
    }
}

/// A call still running when the person interrupts: it ends only by the interrupt. (A probe
/// there raced the interrupt: once its zero sleep had elapsed on a loaded machine, the call
/// could finish as the turn was cancelled, and which won was the runtime's pick.)
struct Hang;

impl Tool for Hang {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "hang".into(),
            description: "test call that runs until the turn is interrupted".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}}),
        }
    }
    fn read_only(&self) -> bool {
        true
    }
    fn call<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        async { std::future::pending().await }.boxed()
    }
}

/// Says no to a change whose `x` is `no`, yes to the others.
struct Person;

impl Asker for Person {
    fn ask<'a>(
        &'a self,
        request: ApprovalRequest,
        _events: &'a EventSink,
    ) -> futures::future::BoxFuture<'a, Decision> {
        let no = request.arguments.contains("\"no\"");
        Box::pin(async move {
            if no {
                Decision::Deny("not that".into())
            } else {
                Decision::Approve
            }
        })
    }
}

/// A turn: up to two steps of calls, then an answer or a cut (none after an interrupt: the
/// turn ends there).
fn turn() -> impl Strategy<Value = Vec<Step>> {
    let calls = (prop::collection::vec(call_kind(), 1..3), any::<bool>())
        .prop_map(|(c, think)| Step::Calls(c, think));
    let end = prop_oneof![
        any::<bool>().prop_map(Step::Answer),
        Just(Step::Cut),
        Just(Step::Refused)
    ];
    (prop::collection::vec(calls, 0..3), end).prop_map(|(mut steps, end)| {
        steps.push(end);
        let interrupted = steps
            .iter()
            .position(|s| matches!(s, Step::Calls(c, _) if c.contains(&CallKind::Interrupts)));
        if let Some(i) = interrupted {
            steps.truncate(i + 1);
        }
        steps
    })
}

/// The stream the server sends for `step` of turn `t`, step `s`.
fn reply(step: &Step, t: usize, s: usize) -> Reply {
    let b = SseBuilder::new().role();
    match step {
        Step::Calls(calls, think) => {
            let mut b = if *think {
                b.reasoning(&["weighing ", "it"])
            } else {
                b
            };
            b = b.content(&[&format!("Looking {t}.{s}")]);
            let interrupted = calls.contains(&CallKind::Interrupts);
            for (i, kind) in calls.iter().enumerate() {
                let id = format!("c{t}_{s}_{i}");
                b = match kind {
                    // Beside an interrupt, a call that works is still running when it comes.
                    CallKind::Works if interrupted => {
                        b.tool_call(i, &id, "hang", &json!({"x": id}), 5)
                    }
                    CallKind::Works => b.tool_call(i, &id, "probe", &json!({"x": id}), 5),
                    CallKind::Fails => b.tool_call(i, &id, "probe", &json!({"y": 1}), 5),
                    CallKind::Unknown => b.tool_call(i, &id, "nope", &json!({}), 5),
                    CallKind::Approved => b.tool_call(i, &id, "change", &json!({"x": id}), 5),
                    CallKind::Denied => b.tool_call(i, &id, "change", &json!({"x": "no"}), 5),
                    CallKind::Interrupts => b.tool_call(i, &id, "interrupt", &json!({}), 5),
                };
            }
            b.finish("tool_calls").done().build()
        }
        Step::Answer(think) => {
            let b = if *think { b.reasoning(&["so"]) } else { b };
            b.content(&["Here is ", &format!("answer {t}")])
                .finish("stop")
                .done()
                .build()
        }
        Step::Cut => b
            .content(&["Half of an ans"])
            .finish("length")
            .done()
            .build(),
        Step::Refused => Reply::error(400, "not this request"),
    }
}

/// What a history keeps of `t`: timings in milliseconds, no token counts or live output, and
/// errors only as their turn's outcome.
fn kept(mut t: Transcript) -> Transcript {
    for turn in &mut t.turns {
        turn.usage = None;
        turn.errors.clear();
        // A failure's kind is not kept, only the provider's cut (the history marks it apart).
        if let Some(TurnOutcome::Failed(cause)) = &mut turn.outcome
            && *cause != FailCause::Cut
        {
            *cause = FailCause::Unrecorded;
        }
    }
    for step in &mut t.steps {
        for call in &mut step.calls {
            call.output.clear();
            // Kept in whole milliseconds.
            if let Some(done) = &mut call.finished {
                done.duration = done
                    .duration
                    .map(|d| std::time::Duration::from_millis(d.as_millis() as u64));
            }
        }
    }
    t
}

fn live_and_replayed(turns: &[Vec<Step>]) -> (Transcript, Transcript) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let script = turns
            .iter()
            .enumerate()
            .flat_map(|(t, steps)| steps.iter().enumerate().map(move |(s, st)| reply(st, t, s)))
            .collect();
        let mut registry = ToolRegistry::new();
        registry.register(Probe::new("probe", true));
        registry.register(Change);
        registry.register(Interrupter);
        registry.register(Hang);
        let mut r = rig_with(script, registry, Preset::Flash, 6, |c| c).await;
        r.agent = r
            .agent
            .with_approvals(ApprovalMode::Ask, Some(Arc::new(Person)));
        let mut live = Transcript::new();
        for t in 0..turns.len() {
            let (_, events) = run(&mut r.agent, &format!("prompt {t}")).await;
            for e in &events {
                live.apply(e);
            }
        }
        let told = replay(r.agent.session(), 6);
        (kept(live), kept(Transcript::of(&told)))
    })
}

proptest! {
    #![proptest_config(crate::proptest_config(12))]

    #[test]
    fn a_reopened_session_folds_into_the_transcript_it_had_live(
        turns in prop::collection::vec(turn(), 1..4)
    ) {
        let (live, replayed) = live_and_replayed(&turns);
        prop_assert_eq!(live.turns.len(), turns.len());
        prop_assert_eq!(live, replayed);
    }
}

#[test]
fn every_kind_of_call_and_end_is_told_again_alike() {
    use CallKind::*;
    let turns = vec![
        vec![
            Step::Calls(vec![Works, Fails, Unknown, Approved, Denied], true),
            Step::Answer(true),
        ],
        vec![Step::Calls(vec![Works], false), Step::Cut],
        vec![Step::Refused],
        vec![Step::Calls(vec![Works, Interrupts, Works, Approved], false)],
    ];
    let (live, replayed) = live_and_replayed(&turns);
    let outcomes = |step: usize| -> Vec<&str> {
        live.steps[step]
            .calls
            .iter()
            .map(|c| c.outcome().map_or("none", |o| o.name()))
            .collect()
    };
    assert_eq!(outcomes(0), ["ok", "failed", "refused", "ok", "denied"]);
    assert!(live.steps[0].calls[3].finished.as_ref().unwrap().approved);
    assert_eq!(live.answer(0), Some("Here is answer 0"));
    assert_eq!(live.answer(1), Some("Half of an ans"));
    assert_eq!(live.turns[3].outcome, Some(TurnOutcome::Interrupted));
    assert_eq!(live.steps.len(), 6, "the refused request's step is kept");
    assert_eq!(
        outcomes(5),
        ["interrupted", "interrupted", "interrupted", "interrupted"]
    );
    assert_eq!(live, replayed);
}
