//! A saved session told again as the events a live turn would have sent, so the UI shows it
//! through the same reducer as a live turn: one path for each kind of data.

use std::collections::HashMap;

use serde_json::Value;

mod plan;

use super::session::{Incomplete, Session};
use crate::events::{AgentEvent, CallOutcome, FailCause, RefusedBy, StepEnd, TurnOutcome};
use crate::llm::Role;

/// The events that tell `session` again, turn by turn (`max_steps` as each step's limit).
/// Tool calls have the timing saved with them (none in older sessions); a turn that made steps but no answer ends with
/// `StepLimit`, one without any step as `Failed`; one interrupted or failed ends as it did.
pub fn replay(session: &Session, max_steps: usize) -> Vec<AgentEvent> {
    let mut events = Vec::new();
    let mut open = false;
    let mut step = 0;
    // Whether the last step's calls were cut by an interrupt: its turn ended interrupted.
    let mut cut = false;
    let mut names: HashMap<&str, &str> = HashMap::new();
    let finish = |events: &mut Vec<AgentEvent>, outcome| {
        events.push(AgentEvent::TurnFinished {
            outcome,
            usage: None,
            last_usage: None,
        });
    };
    for m in &session.messages {
        match m.role {
            Role::System => {
                let Some(mark) = m.summary_mark() else {
                    continue;
                };
                // `/compact` ran between turns: the turn before it had ended.
                if open && !mark.automatic {
                    finish(&mut events, unfinished(step, cut));
                    open = false;
                }
                if let Some(billed) = &m.billed {
                    events.push(AgentEvent::ResponseCost(billed.cost));
                }
                events.push(AgentEvent::Compacted(crate::events::Compaction {
                    turns: mark.turns,
                    automatic: mark.automatic,
                    summary: m.content.to_string(),
                    summary_tokens: super::context::estimate_tokens(&m.content),
                    usage: None,
                }));
            }
            Role::User => {
                if open {
                    finish(&mut events, unfinished(step, cut));
                }
                cut = false;
                events.push(AgentEvent::TurnStarted {
                    prompt: m.shown().to_string(),
                });
                if let Some(a) = m.attached.as_ref().filter(|a| !a.mentions.is_empty()) {
                    events.push(AgentEvent::FilesAttached(a.mentions.clone()));
                }
                open = true;
                step = 0;
            }
            Role::Assistant => {
                step += 1;
                events.push(AgentEvent::StepStarted {
                    step,
                    max: max_steps,
                });
                if let Some(r) = m.reasoning.as_ref().filter(|r| !r.is_empty()) {
                    events.push(AgentEvent::ReasoningDelta(r.clone()));
                }
                if !m.content.is_empty() {
                    events.push(AgentEvent::ContentDelta(m.content.to_string()));
                }
                // As live, the response's cost comes once it has arrived.
                if let Some(billed) = &m.billed {
                    events.push(AgentEvent::ResponseCost(billed.cost));
                }
                if m.tool_calls.is_empty() {
                    // As live: a step that was not stopped ends as the answer.
                    if !matches!(
                        m.incomplete,
                        Some(Incomplete::Interrupted | Incomplete::Failed(_))
                    ) {
                        events.push(AgentEvent::StepFinished(StepEnd::Answer));
                    }
                } else {
                    events.push(AgentEvent::StepFinished(StepEnd::Thought));
                }
                for call in &m.tool_calls {
                    names.insert(&call.id, &call.function.name);
                    events.push(AgentEvent::ToolCallStarted {
                        id: call.id.clone(),
                        name: call.function.name.clone(),
                        arguments: call.function.arguments.clone(),
                    });
                }
                match &m.incomplete {
                    Some(Incomplete::Interrupted) => {
                        finish(&mut events, TurnOutcome::Interrupted);
                        open = false;
                    }
                    Some(why) => {
                        let cause = match why {
                            Incomplete::Cut(_) => FailCause::Cut,
                            _ => FailCause::Unrecorded,
                        };
                        let why = match why {
                            Incomplete::Failed(error) | Incomplete::Cut(error) => error,
                            Incomplete::Interrupted => "interrupted",
                        };
                        events.push(AgentEvent::Error {
                            message: format!("This answer stopped early: {why}"),
                        });
                        finish(&mut events, TurnOutcome::Failed(cause));
                        open = false;
                    }
                    None if m.tool_calls.is_empty() => {
                        finish(&mut events, TurnOutcome::Answered);
                        open = false;
                    }
                    None => {}
                }
            }
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap_or_default();
                let name = names.get(id.as_str()).map_or("", |n| n).to_string();
                let result = crate::events::Observation::saved(m.content.shared());
                let (outcome, approved) = match &m.outcome {
                    Some(outcome) => (outcome.clone(), m.approved),
                    None => saved_before_outcomes(&result),
                };
                cut |= outcome == CallOutcome::Interrupted;
                events.push(AgentEvent::ToolFinished {
                    id,
                    name,
                    result,
                    outcome,
                    approved,
                    duration: m.duration_ms.map(std::time::Duration::from_millis),
                });
            }
        }
    }
    if open {
        finish(&mut events, unfinished(step, cut));
    }
    plan::add_plan_events(session, events)
}

/// How a turn left without an answer ended: interrupted when an interrupt cut its last calls,
/// else its step limit if it made steps, else it failed before the first (an error the history
/// does not hold).
fn unfinished(steps: usize, cut: bool) -> TurnOutcome {
    if cut {
        TurnOutcome::Interrupted
    } else if steps == 0 {
        TurnOutcome::Failed(FailCause::Unrecorded)
    } else {
        TurnOutcome::StepLimit
    }
}

/// How a call of a session saved before outcomes were kept ended, and whether a person said yes
/// to it: read from its observation, the one place anything reads one back (such a session has
/// nothing else to tell it).
fn saved_before_outcomes(observation: &Value) -> (CallOutcome, bool) {
    let approved = observation["approved_by_user"] == true;
    if observation["ok"] != false {
        return (CallOutcome::Ok, approved);
    }
    let error = observation["error"]
        .as_str()
        .unwrap_or("failed")
        .to_string();
    let interrupted = [
        "interrupted",
        "denied by the user: interrupted",
        "not run: the turn was interrupted",
        "the call did not run: the turn was interrupted",
    ];
    let outcome = if interrupted.contains(&error.as_str()) {
        CallOutcome::Interrupted
    } else if observation["denied"] == true {
        match error.strip_prefix("denied by the user") {
            Some(reason) => CallOutcome::Denied {
                reason: reason.trim_start_matches(':').trim().to_string(),
            },
            None => CallOutcome::Refused {
                why: error,
                by: RefusedBy::Approval,
            },
        }
    } else {
        CallOutcome::Failed { error }
    };
    (outcome, approved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::Message;

    /// How the tool result `message` is told again.
    fn tool_outcome(message: &Message) -> CallOutcome {
        let result = serde_json::from_str(&message.content).unwrap_or(Value::Null);
        message
            .outcome
            .clone()
            .unwrap_or_else(|| saved_before_outcomes(&result).0)
    }
    use crate::llm::{FunctionCall, ToolCall};

    #[test]
    fn a_reopened_session_knows_what_its_responses_cost() {
        use crate::llm::Usage;
        use crate::llm::prices::{Billed, Cost, Money};
        use crate::settings::Currency;
        let cost = |picos| Cost {
            currency: Currency::Usd,
            amount: Money::from_picos(picos),
        };
        let billed = |cost| {
            Some(Billed {
                usage: Usage::default(),
                cost,
            })
        };
        let mut s = Session::new();
        s.push(Message::user("one"));
        s.push(Message::assistant("Done.", None, vec![]).billed(billed(Some(cost(5)))));
        s.push(Message::user("two"));
        // Saved before costs were kept.
        s.push(Message::assistant("Done.", None, vec![]));
        s.push(Message::user("three"));
        s.push(Message::assistant("Done.", None, vec![]).billed(billed(None)));
        // Saved and read back, as a reopened session is.
        let s: Session = serde_json::from_str(&serde_json::to_string(&s).unwrap()).unwrap();
        let t = crate::transcript::Transcript::of(&replay(&s, 6));
        let shown: Vec<(Option<String>, u32)> = t
            .turns
            .iter()
            .map(|turn| (turn.cost.shown(), turn.cost.unpriced()))
            .collect();
        assert_eq!(
            shown,
            [
                (Some("$0.000000000005".to_string()), 0),
                (None, 0),
                (None, 1)
            ]
        );
    }

    #[test]
    fn a_session_is_told_again_as_its_live_events() {
        let mut s = Session::new();
        s.push(Message::user("write it"));
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "write_text_file".into(),
                arguments: r#"{"relative_path":"a"}"#.into(),
            },
        };
        s.push(Message::assistant(
            "Writing.",
            Some("hmm".into()),
            vec![call],
        ));
        s.push(Message::tool("c1", r#"{"ok":true}"#));
        s.push(Message::assistant("Done.", None, vec![]));
        s.push(Message::user("more"));
        let mut cut = Message::assistant("Half", None, vec![]);
        cut.incomplete = Some(Incomplete::Interrupted);
        s.push(cut);
        s.push(Message::user("and again"));
        let events = replay(&s, 6);
        let finished = |outcome| AgentEvent::TurnFinished {
            outcome,
            usage: None,
            last_usage: None,
        };
        assert_eq!(
            events,
            vec![
                AgentEvent::TurnStarted {
                    prompt: "write it".into()
                },
                AgentEvent::StepStarted { step: 1, max: 6 },
                AgentEvent::ReasoningDelta("hmm".into()),
                AgentEvent::ContentDelta("Writing.".into()),
                AgentEvent::StepFinished(StepEnd::Thought),
                AgentEvent::ToolCallStarted {
                    id: "c1".into(),
                    name: "write_text_file".into(),
                    arguments: r#"{"relative_path":"a"}"#.into(),
                },
                AgentEvent::ToolFinished {
                    id: "c1".into(),
                    name: "write_text_file".into(),
                    result: serde_json::json!({"ok": true}).into(),
                    outcome: CallOutcome::Ok,
                    approved: false,
                    duration: None,
                },
                AgentEvent::StepStarted { step: 2, max: 6 },
                AgentEvent::ContentDelta("Done.".into()),
                AgentEvent::StepFinished(StepEnd::Answer),
                finished(TurnOutcome::Answered),
                AgentEvent::TurnStarted {
                    prompt: "more".into()
                },
                AgentEvent::StepStarted { step: 1, max: 6 },
                AgentEvent::ContentDelta("Half".into()),
                finished(TurnOutcome::Interrupted),
                AgentEvent::TurnStarted {
                    prompt: "and again".into()
                },
                finished(TurnOutcome::Failed(FailCause::Unrecorded)),
            ]
        );
    }

    #[test]
    fn a_call_saved_with_its_outcome_is_told_with_it_and_an_older_one_from_its_observation() {
        let kept = Message::tool_result(
            "c1",
            r#"{"ok":false,"error":"denied by the user: no","denied":true}"#,
            (CallOutcome::Failed { error: "x".into() }, false),
        );
        assert_eq!(
            tool_outcome(&kept),
            CallOutcome::Failed { error: "x".into() }
        );
        let cases = [
            (r#"{"ok":true,"approved_by_user":true}"#, CallOutcome::Ok),
            (
                r#"{"ok":false,"error":"denied by the user: not that","denied":true}"#,
                CallOutcome::Denied {
                    reason: "not that".into(),
                },
            ),
            (
                r#"{"ok":false,"error":"refused: read-only","denied":true}"#,
                CallOutcome::Refused {
                    why: "refused: read-only".into(),
                    by: RefusedBy::Approval,
                },
            ),
            (
                r#"{"ok":false,"error":"interrupted"}"#,
                CallOutcome::Interrupted,
            ),
            (
                r#"{"ok":false,"error":"no such file"}"#,
                CallOutcome::Failed {
                    error: "no such file".into(),
                },
            ),
        ];
        for (saved, outcome) in cases {
            assert_eq!(tool_outcome(&Message::tool("c", saved)), outcome, "{saved}");
        }
    }
}
