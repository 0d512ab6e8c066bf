//! A reopened session looks as it did live: the real agent runs scripted turns against the
//! local model server, its live events are folded into a transcript, and the session it saved,
//! told again by `agent::replay`, folds into the same transcript (apart from what a history does
//! not keep: timings, token counts, a running tool's output, the words of an error).

use miniclaw::agent::replay::replay;
use miniclaw::llm::Preset;
use miniclaw::transcript::Transcript;
use proptest::prelude::*;
use serde_json::json;

use crate::support::rig::{Probe, rig, run};
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
}

#[derive(Clone, Copy, Debug)]
enum CallKind {
    Works,
    Fails,
    Unknown,
}

fn call_kind() -> impl Strategy<Value = CallKind> {
    prop_oneof![
        Just(CallKind::Works),
        Just(CallKind::Fails),
        Just(CallKind::Unknown)
    ]
}

/// A turn: up to two steps of calls, then an answer or a cut.
fn turn() -> impl Strategy<Value = Vec<Step>> {
    let calls = (prop::collection::vec(call_kind(), 1..3), any::<bool>())
        .prop_map(|(c, think)| Step::Calls(c, think));
    let end = prop_oneof![any::<bool>().prop_map(Step::Answer), Just(Step::Cut)];
    (prop::collection::vec(calls, 0..3), end).prop_map(|(mut steps, end)| {
        steps.push(end);
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
            for (i, kind) in calls.iter().enumerate() {
                let id = format!("c{t}_{s}_{i}");
                b = match kind {
                    CallKind::Works => b.tool_call(i, &id, "probe", &json!({"x": id}), 5),
                    CallKind::Fails => b.tool_call(i, &id, "probe", &json!({"y": 1}), 5),
                    CallKind::Unknown => b.tool_call(i, &id, "nope", &json!({}), 5),
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
    }
}

/// What a history keeps of `t`: no timings, token counts or live output, and errors only as
/// their turn's outcome.
fn kept(mut t: Transcript) -> Transcript {
    for turn in &mut t.turns {
        turn.usage = None;
        turn.errors.clear();
    }
    for step in &mut t.steps {
        for call in &mut step.calls {
            call.output.clear();
            if let Some(done) = &mut call.finished {
                done.duration = None;
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
        let mut r = rig(script, vec![Probe::new("probe", true)], Preset::Flash, 6).await;
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
    let turns = vec![
        vec![
            Step::Calls(
                vec![CallKind::Works, CallKind::Fails, CallKind::Unknown],
                true,
            ),
            Step::Answer(true),
        ],
        vec![Step::Calls(vec![CallKind::Works], false), Step::Cut],
    ];
    let (live, replayed) = live_and_replayed(&turns);
    let outcomes: Vec<&str> = live.steps[0]
        .calls
        .iter()
        .map(|c| c.outcome().map_or("none", |o| o.name()))
        .collect();
    assert_eq!(outcomes, ["ok", "failed", "refused"]);
    assert_eq!(live.answer(0), Some("Here is answer 0"));
    assert_eq!(live.answer(1), Some("Half of an ans"));
    assert_eq!(live, replayed);
}
