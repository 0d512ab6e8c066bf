//! `/plan` runs as the screen shows them: each plan's items and their states (its block in the
//! conversation, the group headers of the timeline), and which turn belongs to what.

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

/// What a timeline step belongs to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StepGroup {
    /// An ordinary turn.
    #[default]
    Turn,
    /// A `/plan` planner's turn.
    Planner,
    /// The executor's turn for item `item` of `State::plans[plan]`.
    Item {
        /// The plan's index.
        plan: usize,
        /// The item's index.
        item: usize,
    },
}

impl StepGroup {
    /// The plan whose item this is, if it is one.
    pub fn plan(self) -> Option<usize> {
        match self {
            Self::Item { plan, .. } => Some(plan),
            _ => None,
        }
    }
}

/// The `/plan` bookkeeping of the screen.
#[derive(Clone, Debug, Default)]
pub struct Plans {
    /// Every plan of the session, oldest first.
    pub list: Vec<PlanView>,
    /// The task and model of a planner turn about to start (its `TurnStarted` takes them).
    pub planning: Option<(String, String)>,
    /// The last planner turn's task and model, for the plan it proposes.
    pub planned: Option<(String, String)>,
    /// The plan the executor runs (the screen counts as busy meanwhile).
    pub running: Option<usize>,
    /// The item whose turn runs or is about to start.
    pub item: Option<usize>,
    /// What the running turn's steps belong to.
    pub group: StepGroup,
}

impl Plans {
    /// Whether the last plan waits in the input to be run.
    pub fn draft(&self) -> bool {
        self.list
            .last()
            .is_some_and(|p| p.phase == PlanPhase::Draft)
    }
}
