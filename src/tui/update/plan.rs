//! `/plan` in the screen: the plan's events move its block and its items' states, a proposed
//! plan waits in the input to be edited, and Enter runs it (Esc sets it aside).

use std::time::Instant;

use super::effect::{Effect, flash};
use crate::agent::AgentCommand;
use crate::agent::plan::{format_items, parse_items};
use crate::events::{ItemState, PlanEvent, PlanSummary};
use crate::tui::state::{Entry, EntryKind, Focus, PlanPhase, PlanView, State};

/// Applies a plan event.
pub(super) fn on_plan(state: &mut State, event: PlanEvent) {
    match event {
        // The planner's turn says it is one (the transcript knows what each turn belongs to).
        PlanEvent::Planning { .. } => {}
        PlanEvent::Proposed { items, replayed } => proposed(state, &items, replayed),
        PlanEvent::Executing { items, model } => executing(state, &items, model),
        PlanEvent::ItemStarted { index } => set_item(state, index, ItemState::Running, None),
        PlanEvent::ItemFinished {
            index,
            state: item_state,
            reason,
        } => set_item(state, index, item_state, reason),
        PlanEvent::Finished(summary) => finished(state, &summary),
    }
}

/// The planner wrote a plan: its answer becomes the plan's block, and a live plan waits in the
/// input to be edited and run.
fn proposed(state: &mut State, items: &[String], replayed: bool) {
    let (task, planner) = state
        .view
        .transcript
        .plans
        .last()
        .map(|p| (p.task.clone(), p.planner_model.clone()))
        .unwrap_or_default();
    let phase = if replayed {
        PlanPhase::NotRun
    } else {
        PlanPhase::Draft
    };
    set_aside(state);
    let mut plan = PlanView::new(task, planner, items, phase);
    // The planner's answer (after its prompt) is the plan: shown once, as the block.
    let answer = state
        .view
        .entries
        .iter()
        .rposition(|e| matches!(e.kind, EntryKind::Assistant | EntryKind::User))
        .filter(|&i| state.view.entries[i].kind == EntryKind::Assistant);
    let entry = Entry::new(EntryKind::Plan, "");
    let i = match answer {
        Some(i) => {
            state.view.entries[i] = entry;
            state.view.touch_entry(i);
            i
        }
        None => state.view.push_entry(entry),
    };
    plan.entry = Some(i);
    state.view.plans.list.push(plan);
    sync(state, state.view.plans.list.len() - 1);
    if !replayed {
        state.composer.set_input(&format_items(items));
        state.focus = Focus::Input;
    }
}

/// The executor begins: the plan waiting (or, told again, the last proposed) runs as edited.
fn executing(state: &mut State, items: &[String], model: String) {
    let reuse = state
        .view
        .plans
        .list
        .last()
        .is_some_and(|p| matches!(p.phase, PlanPhase::Draft | PlanPhase::NotRun));
    if !reuse {
        let plan = PlanView::new(String::new(), String::new(), items, PlanPhase::Running);
        state.view.plans.list.push(plan);
        let i = state.view.push_entry(Entry::new(EntryKind::Plan, ""));
        if let Some(plan) = state.view.plans.list.last_mut() {
            plan.entry = Some(i);
        }
    }
    let index = state.view.plans.list.len() - 1;
    if let Some(plan) = state.view.plans.list.last_mut() {
        plan.set_items(items);
        plan.phase = PlanPhase::Running;
        plan.executor = Some(model);
    }
    state.view.plans.executing = Some(index);
    sync(state, index);
}

fn set_item(state: &mut State, index: usize, item_state: ItemState, reason: Option<String>) {
    let Some(p) = state.view.plans.executing else {
        return;
    };
    if let Some(item) = state
        .view
        .plans
        .list
        .get_mut(p)
        .and_then(|p| p.items.get_mut(index))
    {
        item.state = item_state;
        item.reason = reason;
    }
    sync(state, p);
}

/// The executor stopped: the plan says how, and the screen is idle again.
fn finished(state: &mut State, summary: &PlanSummary) {
    if let Some(p) = state.view.plans.executing.take() {
        if let Some(plan) = state.view.plans.list.get_mut(p) {
            plan.phase = if summary.completed() {
                PlanPhase::Done
            } else {
                PlanPhase::Stopped
            };
        }
        sync(state, p);
    }
    let (done, total) = (summary.done, summary.total);
    match &summary.stopped {
        None if summary.completed() => {
            state.view.push(
                EntryKind::Notice,
                format!("Plan done: {done} of {total} items."),
            );
        }
        None => {
            state.view.push(
                EntryKind::Notice,
                format!("Plan stopped after {done} of {total} items."),
            );
        }
        Some((index, item_state, reason)) => {
            let why = reason
                .as_deref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default();
            let n = index + 1;
            let text = format!(
                "Plan stopped at item {n} of {total} ({}){why}.",
                item_state.name()
            );
            let kind = if *item_state == ItemState::Interrupted {
                EntryKind::Notice
            } else {
                EntryKind::Error
            };
            state.view.push(kind, text);
        }
    }
}

/// Copies plan `p` into its block and marks the block changed.
fn sync(state: &mut State, p: usize) {
    let Some(plan) = state.view.plans.list.get(p) else {
        return;
    };
    if let Some(i) = plan.entry
        && let Some(entry) = state.view.entries.get_mut(i)
    {
        entry.plan = Some(Box::new(plan.clone()));
        state.view.touch_entry(i);
    }
}

/// A plan waiting in the input is set aside (it stays shown, as not run).
pub(super) fn set_aside(state: &mut State) {
    if state.view.plans.draft() {
        let p = state.view.plans.list.len() - 1;
        state.view.plans.list[p].phase = PlanPhase::NotRun;
        sync(state, p);
    }
}

/// Enter on a plan waiting in the input: the executor runs the items as edited.
pub(super) fn run(state: &mut State, text: &str, now: Instant, effects: &mut Vec<Effect>) {
    if parse_items(text).is_empty() {
        flash(
            state,
            now,
            "No numbered item to run: write the plan as 1. … lines, or Esc to set it aside",
        );
        return;
    }
    state.composer.prompt_history.push(text.to_string());
    state.composer.history_pos = None;
    state.composer.reset_input();
    state.status.sent(now);
    effects.push(Effect::Command(AgentCommand::RunPlan(text.to_string())));
}

/// Esc on a plan waiting in the input: it is set aside, and the input emptied.
pub(super) fn discard(state: &mut State, now: Instant) {
    set_aside(state);
    state.composer.reset_input();
    flash(state, now, "Plan set aside (it stays in the conversation)");
}

/// `/plan TASK`: the planner turn.
pub(super) fn start(state: &mut State, task: &str, effects: &mut Vec<Effect>, now: Instant) {
    if task.is_empty() {
        state.view.push(
            EntryKind::Error,
            "`/plan` needs a task: /plan TASK writes a plan for it, to edit and run.",
        );
        return;
    }
    set_aside(state);
    state.status.sent(now);
    effects.push(Effect::Command(AgentCommand::Plan(task.to_string())));
}
