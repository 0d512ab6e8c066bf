//! `/plan` runs in the transcript: each plan's task, models and items with their states, and
//! which turn belongs to which run.

use crate::events::{ItemState, PlanEvent, PlanSummary};

/// What a turn belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Group {
    /// An ordinary turn.
    #[default]
    Turn,
    /// The planner's turn of plan `plan` (index into the transcript's plans).
    Planner {
        /// The plan's index.
        plan: usize,
    },
    /// The executor's turn for item `item` of plan `plan`.
    Item {
        /// The plan's index.
        plan: usize,
        /// The item's index.
        item: usize,
    },
}

impl Group {
    /// The plan whose item this is, if it is one.
    pub fn item_of(self) -> Option<usize> {
        match self {
            Self::Item { plan, .. } => Some(plan),
            _ => None,
        }
    }
}

/// One item of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanItem {
    /// What it asks.
    pub text: String,
    /// Where it stands.
    pub state: ItemState,
    /// Why it failed, when it did.
    pub reason: Option<String>,
}

/// One `/plan` run: planned, then maybe carried out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanRun {
    /// The task planned (empty for a plan run without its planner, e.g. told again).
    pub task: String,
    /// The planner's model.
    pub planner_model: String,
    /// The executor's model, once it runs.
    pub executor_model: Option<String>,
    /// The items: as proposed, then as carried out (the plan as edited).
    pub items: Vec<PlanItem>,
    /// Whether the planner proposed them.
    pub proposed: bool,
    /// Told again from a saved session (shown, not offered to edit).
    pub replayed: bool,
    /// How the executor ended, once it did.
    pub summary: Option<PlanSummary>,
    /// The item whose turn runs or is about to.
    pub current: Option<usize>,
    /// The planner's turn has not started yet.
    awaiting_planner: bool,
}

impl PlanRun {
    /// Whether the executor carries it out now.
    pub fn running(&self) -> bool {
        self.executor_model.is_some() && self.summary.is_none()
    }
}

fn items(texts: &[String]) -> Vec<PlanItem> {
    texts
        .iter()
        .map(|text| PlanItem {
            text: text.clone(),
            state: ItemState::Pending,
            reason: None,
        })
        .collect()
}

/// What the turn about to start belongs to (the planner's turn is taken once).
pub(super) fn group_of_next_turn(plans: &mut [PlanRun]) -> Group {
    let index = plans.len().saturating_sub(1);
    let Some(run) = plans.last_mut() else {
        return Group::Turn;
    };
    if run.awaiting_planner {
        run.awaiting_planner = false;
        return Group::Planner { plan: index };
    }
    match run.current {
        Some(item) if run.running() => Group::Item { plan: index, item },
        _ => Group::Turn,
    }
}

/// Adds what a plan event tells.
pub(super) fn apply(plans: &mut Vec<PlanRun>, event: &PlanEvent) {
    match event {
        PlanEvent::Planning { task, model } => plans.push(PlanRun {
            task: task.clone(),
            planner_model: model.clone(),
            awaiting_planner: true,
            ..PlanRun::default()
        }),
        PlanEvent::Proposed {
            items: texts,
            replayed,
        } => {
            if plans
                .last()
                .is_none_or(|p| p.proposed || p.executor_model.is_some())
            {
                plans.push(PlanRun::default());
            }
            if let Some(run) = plans.last_mut() {
                run.items = items(texts);
                run.proposed = true;
                run.replayed = *replayed;
            }
        }
        PlanEvent::Executing {
            items: texts,
            model,
        } => {
            // The plan proposed last runs (as edited); a run with none before is a plan of its
            // own.
            if plans.last().is_none_or(|p| p.executor_model.is_some()) {
                plans.push(PlanRun::default());
            }
            if let Some(run) = plans.last_mut() {
                run.items = items(texts);
                run.executor_model = Some(model.clone());
                run.summary = None;
                run.current = None;
            }
        }
        PlanEvent::ItemStarted { index } => set(plans, *index, ItemState::Running, None, true),
        PlanEvent::ItemFinished {
            index,
            state,
            reason,
        } => set(plans, *index, *state, reason.clone(), false),
        PlanEvent::Finished(summary) => {
            // Only an executor's run ends with a summary.
            if let Some(run) = plans.last_mut().filter(|r| r.executor_model.is_some()) {
                run.summary = Some(summary.clone());
                run.current = None;
            }
        }
    }
}

fn set(plans: &mut [PlanRun], index: usize, state: ItemState, reason: Option<String>, on: bool) {
    let Some(run) = plans.last_mut() else {
        return;
    };
    run.current = on.then_some(index);
    if let Some(item) = run.items.get_mut(index) {
        item.state = state;
        item.reason = reason;
    }
}
