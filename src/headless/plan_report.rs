//! The `plan` object of the JSON report of a `--plan` run, read from the transcript: the task,
//! the models, and each item with its state and the executor's steps for it.
//!
//! ```json
//! "plan": {"task": "...", "planner_model": "deepseek-v4-pro", "executor_model":
//!   "deepseek-flash", "done": 1, "total": 2, "items": [{"text": "...", "state": "done",
//!   "reason": null, "answer": "...", "steps": [...]}, ...]}
//! ```

use serde::Serialize;

use super::steps::{StepReport, report};
use crate::transcript::{Group, Transcript};

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
    pub steps: Vec<StepReport>,
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

/// The report of the transcript's last plan, when it has one.
pub fn plan_report(t: &Transcript) -> Option<PlanReport> {
    let index = t.plans.len().checked_sub(1)?;
    let run = &t.plans[index];
    let items = run
        .items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            // The item's turn (the last, should it have had more than one).
            let turn = t.turns.iter().rposition(|turn| {
                turn.group
                    == Group::Item {
                        plan: index,
                        item: i,
                    }
            });
            ItemReport {
                text: item.text.clone(),
                state: item.state.name(),
                reason: item.reason.clone(),
                answer: turn.and_then(|n| t.answer(n)).map(str::to_string),
                steps: turn.map(|n| report(t.steps_of(n))).unwrap_or_default(),
            }
        })
        .collect();
    Some(PlanReport {
        task: run.task.clone(),
        planner_model: run.planner_model.clone(),
        executor_model: run.executor_model.clone(),
        done: run.summary.as_ref().map_or(0, |s| s.done),
        total: run.items.len(),
        items,
    })
}
