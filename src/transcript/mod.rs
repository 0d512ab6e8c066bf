//! The one fold of the agent's events: turns, their steps (model calls), the steps' tool calls
//! with how each ended, a sub-agent's steps under the call that started it, and the `/plan`
//! runs the turns belong to.
//!
//! Every view reads this and nothing else works out what happened: the screen's conversation
//! cells, timeline and side panes, the headless trace, the JSON report, and a saved session
//! told again (the same fold over the events its replay makes of it). A view that
//! shows things as they happen applies each event and acts on the [`Change`] it made.

mod plan;
mod step;

use crate::events::{AgentEvent, CallOutcome, StepEnd, TurnOutcome};
use crate::llm::Usage;
use crate::llm::prices::Spend;

pub use plan::{Group, PlanItem, PlanRun};
pub use step::{Call, Finished, Step, SubAgent};

/// One turn: a prompt and the model calls it took.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Turn {
    /// What the person asked.
    pub prompt: String,
    /// The `@` mentions whose files went with the prompt (as written after `@`).
    pub mentions: Vec<String>,
    /// Where its steps start in [`Transcript::steps`].
    pub first_step: usize,
    /// What it belongs to: a `/plan` planner, an item of a plan, or nothing.
    pub group: Group,
    /// How it ended (`None` while it runs).
    pub outcome: Option<TurnOutcome>,
    /// Its tokens added up (`None` when the server reported none).
    pub usage: Option<Usage>,
    /// What its model responses cost, added up as each finished (a sub-agent's are not in
    /// it, as its tokens are not in `usage`).
    pub cost: Spend,
    /// What went wrong during it, in the words the person was told.
    pub errors: Vec<String>,
}

/// Everything that happened, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Transcript {
    /// The turns.
    pub turns: Vec<Turn>,
    /// Every step of every turn, in order (a step's `turn` says whose).
    pub steps: Vec<Step>,
    /// The `/plan` runs.
    pub plans: Vec<PlanRun>,
    /// What requests between turns cost (`/compact`'s summaries).
    pub between_turns: Spend,
}

/// What applying one event changed, for views that follow a turn as it happens.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Nothing the transcript holds (events around turns: sessions, servers, approvals).
    None,
    /// A turn began (the last of [`Transcript::turns`]).
    TurnStarted,
    /// The running turn's prompt carries files (its `mentions`).
    FilesAttached,
    /// A step began (the last of [`Transcript::steps`]).
    StepStarted,
    /// The last step's reasoning grew.
    Reasoning,
    /// The last step's text grew.
    Text,
    /// The last step's text turned out to be a thought or the answer.
    StepEnded(StepEnd),
    /// Call `call` of step `step` began.
    CallStarted {
        /// Index into [`Transcript::steps`].
        step: usize,
        /// Index into that step's calls.
        call: usize,
    },
    /// Call `call` of step `step` printed output.
    CallOutput {
        /// Index into [`Transcript::steps`].
        step: usize,
        /// Index into that step's calls.
        call: usize,
    },
    /// Call `call` of step `step` ended.
    CallFinished {
        /// Index into [`Transcript::steps`].
        step: usize,
        /// Index into that step's calls.
        call: usize,
    },
    /// The sub-agent of call `call` of step `step` moved on.
    SubAgent {
        /// Index into [`Transcript::steps`].
        step: usize,
        /// Index into that step's calls.
        call: usize,
    },
    /// The running turn met an error (the last of its `errors`).
    Error,
    /// A response of the running turn was priced (its `cost` grew).
    Cost,
    /// The last turn ended (its `outcome` says how).
    TurnEnded,
    /// A `/plan` run moved on (the last of [`Transcript::plans`]).
    Plan,
}

impl Transcript {
    /// An empty transcript.
    pub fn new() -> Self {
        Self::default()
    }

    /// The transcript of `events`, applied in order.
    pub fn of<'a>(events: impl IntoIterator<Item = &'a AgentEvent>) -> Self {
        let mut t = Self::new();
        for e in events {
            t.apply(e);
        }
        t
    }

    /// Adds what `event` tells, and says what changed.
    pub fn apply(&mut self, event: &AgentEvent) -> Change {
        match event {
            AgentEvent::TurnStarted { prompt } => {
                let group = plan::group_of_next_turn(&mut self.plans);
                self.turns.push(Turn {
                    prompt: prompt.clone(),
                    first_step: self.steps.len(),
                    group,
                    ..Turn::default()
                });
                Change::TurnStarted
            }
            AgentEvent::FilesAttached(mentions) => match self.turns.last_mut() {
                Some(turn) => {
                    turn.mentions = mentions.clone();
                    Change::FilesAttached
                }
                None => Change::None,
            },
            AgentEvent::Error { message } => match self.running_turn() {
                Some(turn) => {
                    turn.errors.push(message.clone());
                    Change::Error
                }
                None => Change::None,
            },
            AgentEvent::ResponseCost(cost) => {
                match self.running_turn() {
                    Some(turn) => turn.cost.add(cost.as_ref()),
                    // A request between turns (`/compact`'s) costs the session all the same.
                    None => self.between_turns.add(cost.as_ref()),
                }
                Change::Cost
            }
            AgentEvent::TurnFinished { outcome, usage, .. } => match self.running_turn() {
                Some(turn) => {
                    turn.outcome = Some(*outcome);
                    turn.usage = *usage;
                    Change::TurnEnded
                }
                None => Change::None,
            },
            AgentEvent::Nested { parent_id, event } => {
                let Some((step, call)) = self.find_call(parent_id) else {
                    return Change::None;
                };
                let sub = self.steps[step].calls[call]
                    .sub
                    .get_or_insert_with(Default::default);
                if sub.apply(event) {
                    Change::SubAgent { step, call }
                } else {
                    Change::None
                }
            }
            AgentEvent::Plan(event) => {
                plan::apply(&mut self.plans, event);
                Change::Plan
            }
            AgentEvent::HistoryCleared => {
                *self = Self::new();
                Change::None
            }
            other => self.step_event(other),
        }
    }

    /// The events of a step and its calls.
    fn step_event(&mut self, event: &AgentEvent) -> Change {
        let turn = self.turns.len().saturating_sub(1);
        step::fold(&mut self.steps, turn, event)
    }

    /// What every turn's model responses cost, added up (a reopened session's included).
    pub fn cost(&self) -> Spend {
        let mut spend = self.between_turns;
        for turn in &self.turns {
            spend.merge(&turn.cost);
        }
        spend
    }

    /// The turn that has not ended, if one runs.
    fn running_turn(&mut self) -> Option<&mut Turn> {
        self.turns.last_mut().filter(|t| t.outcome.is_none())
    }

    /// The step and call index of call `id`, the latest first (ids are unique within a turn).
    pub fn find_call(&self, id: &str) -> Option<(usize, usize)> {
        step::find_call(&self.steps, id)
    }

    /// The steps of turn `turn`.
    pub fn steps_of(&self, turn: usize) -> &[Step] {
        let Some(t) = self.turns.get(turn) else {
            return &[];
        };
        let end = self
            .turns
            .get(turn + 1)
            .map_or(self.steps.len(), |next| next.first_step);
        &self.steps[t.first_step.min(end)..end]
    }

    /// What turn `turn` answered: its last step's text, unless that step went on to call
    /// tools (maybe partial, when the turn did not end `Answered`).
    pub fn answer(&self, turn: usize) -> Option<&str> {
        step::answer_of(self.steps_of(turn))
    }

    /// How many calls of the top-level turns were denied by approval.
    pub fn denied(&self) -> usize {
        self.steps
            .iter()
            .flat_map(|s| &s.calls)
            .filter(|c| c.outcome().is_some_and(CallOutcome::is_denied))
            .count()
    }
}

#[cfg(test)]
mod tests;
