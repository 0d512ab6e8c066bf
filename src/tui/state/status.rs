//! Whether a turn runs and how it goes: the one source of "busy". The agent's events move it;
//! the screen marks it `Sent` when it asks the agent for a turn, so a second Enter queues.

use std::time::Instant;

use crate::events::AgentState;
use crate::llm::Usage;

/// Where the turn stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Phase {
    /// No turn runs.
    #[default]
    Idle,
    /// A turn was asked for at `at`; the agent has not said it began.
    Sent {
        /// When it was asked for.
        at: Instant,
    },
    /// A turn runs (or a plan's executor goes on between its items' turns).
    Running {
        /// When it was asked for.
        since: Instant,
        /// What the agent is doing (`None` until it says).
        doing: Option<AgentState>,
    },
}

/// A pending retry of a failed request.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryView {
    /// The attempt about to start.
    pub attempt: u32,
    /// The most attempts.
    pub max_attempts: u32,
    /// When it starts.
    pub at: Instant,
    /// Why it waits, in a few words (`rate limited`, `server error 503`).
    pub cause: String,
}

/// How full the context is, as the last request left it (tokens).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextGauge {
    /// Prompt tokens of the last request.
    pub used: usize,
    /// The budget.
    pub budget: usize,
    /// Where the session is compacted by itself (`None`: never).
    pub compact_at: Option<usize>,
}

impl ContextGauge {
    /// The share used, in percent.
    pub fn percent(&self) -> usize {
        self.used.saturating_mul(100) / self.budget.max(1)
    }
}

/// The running turn's status, as the status line shows it.
#[derive(Clone, Debug, PartialEq)]
pub struct TurnStatus {
    /// Where the turn stands.
    pub phase: Phase,
    /// The current step number.
    pub step: usize,
    /// The step limit.
    pub max_steps: usize,
    /// A pending retry.
    pub retry: Option<RetryView>,
    /// The last turn's token counts.
    pub last_usage: Option<Usage>,
    /// Context used by the last request, the budget and the compaction threshold.
    pub context: Option<ContextGauge>,
    /// The session is being compacted: how many turns the summary will replace.
    pub compacting: Option<usize>,
    /// Since when the model server holds the request in its queue (keep-alives, no data).
    pub queued: Option<Instant>,
    /// The last turn stopped at its step limit: Enter on the empty input goes on.
    pub go_on: bool,
}

impl TurnStatus {
    /// Idle, with `max_steps` steps per turn.
    pub fn new(max_steps: usize) -> Self {
        Self {
            phase: Phase::Idle,
            step: 0,
            max_steps,
            retry: None,
            last_usage: None,
            context: None,
            compacting: None,
            queued: None,
            go_on: false,
        }
    }

    /// Whether a turn runs or was asked for.
    pub fn busy(&self) -> bool {
        self.phase != Phase::Idle
    }

    /// When the running turn was asked for.
    pub fn since(&self) -> Option<Instant> {
        match self.phase {
            Phase::Idle => None,
            Phase::Sent { at } => Some(at),
            Phase::Running { since, .. } => Some(since),
        }
    }

    /// What the agent is doing, when a turn runs.
    pub fn doing(&self) -> Option<AgentState> {
        match self.phase {
            Phase::Running { doing, .. } => doing,
            _ => None,
        }
    }

    /// The screen asked the agent for a turn at `now`.
    pub fn sent(&mut self, now: Instant) {
        self.phase = Phase::Sent { at: now };
        self.retry = None;
    }

    /// The agent began a turn, or said what it does in it.
    pub fn running(&mut self, doing: Option<AgentState>, now: Instant) {
        let since = self.since().unwrap_or(now);
        let doing = doing.or(self.doing());
        self.phase = Phase::Running { since, doing };
    }

    /// No turn runs any more.
    pub fn idle(&mut self) {
        self.phase = Phase::Idle;
        self.retry = None;
        self.compacting = None;
        self.queued = None;
    }

    /// A new session: its numbers are not the last one's.
    pub fn forget_session(&mut self) {
        self.last_usage = None;
        self.context = None;
        self.step = 0;
    }
}
