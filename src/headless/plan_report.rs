//! The `plan` object of the JSON report of a `--plan` run: the task, the models, and each item
//! with its state and the executor's steps for it.
//!
//! ```json
//! "plan": {"task": "...", "planner_model": "deepseek-v4-pro", "executor_model":
//!   "deepseek-v4-flash", "done": 1, "total": 2, "items": [{"text": "...", "state": "done",
//!   "reason": null, "answer": "...", "steps": [...]}, ...]}
//! ```

use serde::Serialize;

use super::steps::Steps;
use crate::events::{ItemState, PlanEvent};

/// One item of the plan.
#[derive(Debug, Serialize)]
pub struct ItemReport {
    /// What it asks.
    pub text: String,
    /// `pending`, `running`, `done`, `failed` or `interrupted`.
    pub state: &'static str,
    /// Why it failed, when it did.
    pub reason: Option<String>,
    /// What the executor answered for it.
    pub answer: Option<String>,
    /// The executor's steps for it.
    pub steps: Steps,
}

/// The plan of a `--plan` run and how far it got.
#[derive(Debug, Serialize)]
pub struct PlanReport {
    /// The task planned.
    pub task: String,
    /// The planner's model.
    pub planner_model: String,
    /// The executor's model (`null` when the plan never ran).
    pub executor_model: Option<String>,
    /// Items done.
    pub done: usize,
    /// Items in the plan.
    pub total: usize,
    /// The items, in order.
    pub items: Vec<ItemReport>,
}

impl PlanReport {
    /// A report for the planner's run on `task`.
    pub fn new(task: &str, planner_model: &str) -> Self {
        Self {
            task: task.to_string(),
            planner_model: planner_model.to_string(),
            executor_model: None,
            done: 0,
            total: 0,
            items: Vec::new(),
        }
    }

    /// Adds what `event` tells (a planning event starts a new report: see the builder).
    pub fn apply(&mut self, event: &PlanEvent) {
        match event {
            PlanEvent::Planning { .. } => {}
            PlanEvent::Proposed { items, .. } => self.set_items(items),
            PlanEvent::Executing { items, model } => {
                self.executor_model = Some(model.clone());
                self.set_items(items);
            }
            PlanEvent::ItemStarted { index } => self.set_state(*index, ItemState::Running, None),
            PlanEvent::ItemFinished {
                index,
                state,
                reason,
            } => self.set_state(*index, *state, reason.clone()),
            PlanEvent::Finished(summary) => {
                self.done = summary.done;
                self.total = summary.total;
            }
        }
    }

    fn set_items(&mut self, items: &[String]) {
        self.total = items.len();
        self.items = items
            .iter()
            .map(|text| ItemReport {
                text: text.clone(),
                state: ItemState::Pending.name(),
                reason: None,
                answer: None,
                steps: Steps::default(),
            })
            .collect();
    }

    fn set_state(&mut self, index: usize, state: ItemState, reason: Option<String>) {
        if let Some(item) = self.items.get_mut(index) {
            item.state = state.name();
            item.reason = reason;
        }
    }
}
