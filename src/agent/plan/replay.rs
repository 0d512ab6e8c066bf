//! The plan events of a saved session, put into its replay where a live run sent them: before
//! a planner's or an item's `TurnStarted`, after its `TurnFinished`. Item states follow from
//! each item's turn by [`item_result`], the rule the live run uses.

use super::{PlanMark, item_result, parse_items};
use crate::agent::session::{Message, Session};
use crate::events::{AgentEvent, ItemState, PlanEvent, PlanSummary, TurnOutcome};
use crate::llm::Role;

/// An executor run being told again.
struct Run {
    id: String,
    total: usize,
    /// Each item that ended, in order: how, and why.
    ended: Vec<(ItemState, Option<String>)>,
}

impl Run {
    fn summary(&self) -> PlanSummary {
        let done = self
            .ended
            .iter()
            .take_while(|(s, _)| *s == ItemState::Done)
            .count();
        PlanSummary {
            done,
            total: self.total,
            stopped: self
                .ended
                .get(done)
                .map(|(state, reason)| (done, *state, reason.clone())),
        }
    }
}

/// `events` (the replay of `session`: one `TurnStarted` per prompt, in order) with the plan
/// events of its `/plan` runs added.
pub fn add_plan_events(session: &Session, events: Vec<AgentEvent>) -> Vec<AgentEvent> {
    let prompts: Vec<&Message> = session
        .messages
        .iter()
        .filter(|m| m.role == Role::User)
        .collect();
    if prompts.iter().all(|m| m.plan.is_none()) {
        return events;
    }
    let mut out = Vec::with_capacity(events.len() + 8);
    let mut next = 0;
    let mut open: Option<&Message> = None;
    let mut answer = String::new();
    let mut run: Option<Run> = None;
    for event in events {
        match &event {
            AgentEvent::TurnStarted { .. } => {
                open = prompts.get(next).copied();
                next += 1;
                answer.clear();
                started(open, &mut run, &mut out);
            }
            AgentEvent::StepStarted { .. } => answer.clear(),
            AgentEvent::ContentDelta(text) => answer.push_str(text),
            _ => {}
        }
        let outcome = match &event {
            AgentEvent::TurnFinished { outcome, .. } => Some(*outcome),
            _ => None,
        };
        out.push(event);
        if let Some(outcome) = outcome
            && let Some(prompt) = open.take()
        {
            ended(prompt, &outcome, &answer, &mut run, &mut out);
        }
    }
    if let Some(run) = run {
        out.push(AgentEvent::Plan(PlanEvent::Finished(run.summary())));
    }
    out
}

/// Before the turn of `prompt`: a run that it does not continue ends; a planner or an item
/// begins.
fn started(prompt: Option<&Message>, run: &mut Option<Run>, out: &mut Vec<AgentEvent>) {
    let mark = prompt.and_then(|m| m.plan.as_ref());
    let continues =
        matches!((&*run, mark), (Some(r), Some(PlanMark::Item { run: id, .. })) if *id == r.id);
    if !continues && let Some(ended) = run.take() {
        out.push(AgentEvent::Plan(PlanEvent::Finished(ended.summary())));
    }
    match (prompt, mark) {
        (Some(m), Some(PlanMark::Request { model })) => {
            out.push(AgentEvent::Plan(PlanEvent::Planning {
                task: m.shown().to_string(),
                model: model.clone(),
            }));
        }
        (
            _,
            Some(PlanMark::Item {
                model,
                run: id,
                index,
                items,
            }),
        ) => {
            if run.is_none() {
                out.push(AgentEvent::Plan(PlanEvent::Executing {
                    items: items.clone(),
                    model: model.clone(),
                }));
                *run = Some(Run {
                    id: id.clone(),
                    total: items.len(),
                    ended: Vec::new(),
                });
            }
            out.push(AgentEvent::Plan(PlanEvent::ItemStarted { index: *index }));
        }
        _ => {}
    }
}

/// After the turn of `prompt` ended in `outcome` with `answer`: the plan it proposed, or how
/// its item ended.
fn ended(
    prompt: &Message,
    outcome: &TurnOutcome,
    answer: &str,
    run: &mut Option<Run>,
    out: &mut Vec<AgentEvent>,
) {
    match &prompt.plan {
        Some(PlanMark::Request { .. }) if *outcome == TurnOutcome::Answered => {
            let items = parse_items(answer);
            if !items.is_empty() {
                out.push(AgentEvent::Plan(PlanEvent::Proposed {
                    items,
                    replayed: true,
                }));
            }
        }
        Some(PlanMark::Item { index, .. }) => {
            let (state, reason) = item_result(outcome, answer);
            out.push(AgentEvent::Plan(PlanEvent::ItemFinished {
                index: *index,
                state,
                reason: reason.clone(),
            }));
            if let Some(run) = run {
                run.ended.push((state, reason));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests;
