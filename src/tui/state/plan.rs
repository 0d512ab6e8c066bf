//! `/plan` runs as the conversation shows them: each plan's block, with its items and their
//! states, and whether it waits in the input to be run.

use crate::events::ItemState;

/// Where a plan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanPhase {
    /// Proposed and waiting in the input: Enter runs it, Esc sets it aside.
    Draft,
    /// Proposed and never run.
    NotRun,
    /// The executor carries it out.
    Running,
    /// Every item was done.
    Done,
    /// The executor stopped at an item that was not done.
    Stopped,
}

/// One item of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ItemView {
    /// What it asks.
    pub text: String,
    /// Where it stands.
    pub state: ItemState,
    /// Why it failed.
    pub reason: Option<String>,
}

/// One plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanView {
    /// The task it was written for.
    pub task: String,
    /// Its items, in order.
    pub items: Vec<ItemView>,
    /// Where it stands.
    pub phase: PlanPhase,
    /// The planner's model.
    pub planner: String,
    /// The executor's model, once it runs.
    pub executor: Option<String>,
    /// The conversation entry showing its block.
    pub entry: Option<usize>,
}

impl PlanView {
    /// A plan of `items`, all pending.
    pub fn new(task: String, planner: String, items: &[String], phase: PlanPhase) -> Self {
        let mut plan = Self {
            task,
            items: Vec::new(),
            phase,
            planner,
            executor: None,
            entry: None,
        };
        plan.set_items(items);
        plan
    }

    /// Replaces the items (the plan as edited), all pending.
    pub fn set_items(&mut self, items: &[String]) {
        self.items = items
            .iter()
            .map(|text| ItemView {
                text: text.clone(),
                state: ItemState::Pending,
                reason: None,
            })
            .collect();
    }
}

/// The `/plan` runs' blocks in the conversation (what each run did is the transcript's).
#[derive(Clone, Debug, Default)]
pub struct Plans {
    /// Every plan of the session shown, oldest first.
    pub list: Vec<PlanView>,
    /// The block of the plan the executor carries out.
    pub executing: Option<usize>,
}

impl Plans {
    /// Whether the last plan waits in the input to be run.
    pub fn draft(&self) -> bool {
        self.list
            .last()
            .is_some_and(|p| p.phase == PlanPhase::Draft)
    }
}
