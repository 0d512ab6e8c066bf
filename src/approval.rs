//! Who decides whether a call that changes something runs: the approval mode, and a person's
//! answer to one call. A leaf: the agent asks, the UI answers, config and the state file hold
//! the mode.

use serde::{Deserialize, Serialize};

/// How calls that change files, run commands or reach the network are let through.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum ApprovalMode {
    /// Everything inside the sandbox runs (the default).
    #[default]
    Auto,
    /// Each such call asks first.
    Ask,
    /// Such calls are refused.
    ReadOnly,
}

impl ApprovalMode {
    /// Every mode, in the order Shift+Tab goes through them.
    pub const ALL: [ApprovalMode; 3] = [Self::Auto, Self::Ask, Self::ReadOnly];

    /// The name shown and typed (`auto`, `ask`, `read-only`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Ask => "ask",
            Self::ReadOnly => "read-only",
        }
    }

    /// The mode named `name` (any case).
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(name.trim()))
    }

    /// The next mode (Shift+Tab).
    pub fn next(self) -> Self {
        let i = Self::ALL.iter().position(|m| *m == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

/// Where the approval mode of a run came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalSource {
    /// `--approval` (or `MINICLAW_APPROVAL`), for this run only.
    Flag,
    /// The mode chosen in this folder before (`/approval`, Shift+Tab).
    Folder,
    /// Nothing chosen: `auto`.
    #[default]
    Default,
}

impl ApprovalSource {
    /// How it is told after the mode (`approval: ask (this folder's choice; …)`).
    pub fn describe(self) -> &'static str {
        match self {
            Self::Flag => "--approval, for this run",
            Self::Folder => "this folder's choice; --approval overrides",
            Self::Default => {
                "the default; /approval or Shift+Tab chooses one for this folder, --approval for a run"
            }
        }
    }
}

/// A person's answer to one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Approve,
    /// Run it, and every call of this tool for the rest of the session.
    ApproveTool,
    /// Run this command, and let commands starting with these prefixes run without asking in
    /// this project from now on (`run_command` only).
    ApprovePrefixes(Vec<crate::command_rules::CommandRule>),
    /// Do not run it; the reason (maybe empty) goes to the model.
    Deny(String),
}

/// A call waiting for an answer, as the UI shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalRequest {
    /// The call's id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments, as the model wrote them.
    pub arguments: String,
    /// The change it would make to a file, as a unified diff (file-changing tools).
    pub diff: Option<String>,
    /// Its place among the calls of this step that ask (1-based).
    pub position: usize,
    /// How many calls of this step ask.
    pub of: usize,
    /// Whether the call writes configuration (an `AGENTS.md`, which joins the system prompt
    /// of later sessions): it asks in every mode that has a person to ask, `auto` included,
    /// and a yes to the tool for the session does not cover it.
    pub configuration: bool,
    /// What the dialog says about a `run_command` call (the gate fills it in).
    pub command: Option<CommandPrompt>,
}

/// What the approval dialog shows for a `run_command` call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandPrompt {
    /// The command line, as the model wrote it.
    pub line: String,
    /// The folder it runs in.
    pub folder: String,
    /// What the jail lets it do (`command_rules::jail_summary`).
    pub jail: String,
    /// Whether it will be able to reach the internet.
    pub network: bool,
    /// Why MiniClaw cannot read the line with certainty (then no rule covers it).
    pub unreadable: Option<String>,
    /// The prefixes "don't ask again" would add, one per simple command (`None`: not offered,
    /// for a line that cannot be read or a command with the network).
    pub prefixes: Option<Vec<crate::command_rules::CommandRule>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_cycle_and_parse_by_name() {
        assert_eq!(ApprovalMode::Auto.next(), ApprovalMode::Ask);
        assert_eq!(ApprovalMode::Ask.next(), ApprovalMode::ReadOnly);
        assert_eq!(ApprovalMode::ReadOnly.next(), ApprovalMode::Auto);
        assert_eq!(
            ApprovalMode::from_name("Read-Only"),
            Some(ApprovalMode::ReadOnly)
        );
        assert_eq!(ApprovalMode::from_name("never"), None);
        assert_eq!(
            serde_json::to_string(&ApprovalMode::ReadOnly).unwrap(),
            "\"read-only\""
        );
    }
}
