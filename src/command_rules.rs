//! Approvals for `run_command` that do not nag: prefix rules (`cargo test`) that let a command
//! line run unasked in the `ask` mode when every simple command in it starts with one, where
//! the rules come from, and what the approval dialog says about a command.

mod book;
mod call;
mod rule;
pub(crate) mod stored;

pub use book::{CommandRules, ConfigRule, Listed, RulesError};
pub use call::{
    CommandCall, CommandTimeouts, DEFAULT_MAX_TIMEOUT_SEC, DEFAULT_TIMEOUT_SEC, jail_summary,
};
pub use rule::{CommandRule, RuleError, list_text};

/// The name the shell command tool is registered under: the one place the gate, the dialog and
/// the rules know it by.
pub const RUN_COMMAND: &str = "run_command";

#[cfg(test)]
mod tests;
