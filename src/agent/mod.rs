//! The agent: sessions and history, the ReAct loop, and the event stream the UI and headless mode read.

pub(crate) mod advice;
pub mod approvals;
mod blocking;
pub mod budget;
#[cfg(test)]
mod command_gate_tests;
pub(crate) mod compaction;
pub(crate) mod context;
pub(crate) mod delegation;
pub mod dispatch;
pub mod history;
mod hook_notify;
pub mod hook_points;
pub(crate) mod instructions;
pub(crate) mod mentions;
mod nested_instructions;
mod opening;
pub mod plan;
mod plan_run;
mod prompt;
pub mod replay;
pub(crate) mod runner;
pub mod session;
mod setup;
mod switch;
pub(crate) mod turn;
pub(crate) mod turn_input;
pub mod undo;

pub use crate::events::{AgentEvent, AgentState, EventSink, TurnOutcome};
pub use blocking::Unfinished;
pub use budget::{BudgetExhausted, RequestBudget};
pub use context::DEFAULT_COMPACT_AT;
pub use instructions::{INIT_PROMPT, INSTRUCTIONS_FILE};
pub use opening::Opening;
pub use runner::{AgentCommand, AgentHandle, ExpandedPrompt, spawn, spawn_opening};
pub use session::{Message, Session};
pub use turn::{Agent, AgentSettings};
pub use turn_input::TurnInput;
