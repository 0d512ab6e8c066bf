//! What the reducer asks of the event loop, and the status-line hints every part may flash.

use std::time::{Duration, Instant};

use crate::agent::AgentCommand;
use crate::llm::Preset;
use crate::secrets::Secret;
use crate::tui::state::State;

/// How long after a Ctrl+C a second one quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// Something the event loop must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Send a command to the agent.
    Command(AgentCommand),
    /// Use this preset from the next request on.
    SetPreset(Preset),
    /// Interrupt the running turn (and deny every call waiting for approval).
    Interrupt,
    /// Answer the call waiting for approval.
    Answer(String, crate::approval::Decision),
    /// Use this approval mode from now on (and remember it for this folder).
    SetApproval(crate::approval::ApprovalMode, std::path::PathBuf),
    /// Remove this project rule from the folder records (already out of the rules in force).
    ForgetCommandRule(crate::command_rules::CommandRule),
    /// Copy text to the clipboard.
    Copy(String),
    /// Check an API key with one request to the model server.
    CheckKey(Secret),
    /// Use this key from the next request on; `save`: write it to the key file first.
    UseKey {
        /// The key.
        key: Secret,
        /// Whether to save it to `<config dir>/miniclaw/.env`.
        save: bool,
    },
    /// List the workspace's files for the `@` popup (this listing's generation), off the loop.
    ListFiles(u64),
}

/// How long a flash hint stays in the status line.
pub const FLASH_FOR: Duration = Duration::from_secs(2);

/// Shows `text` in the status line for a moment.
pub(super) fn flash(state: &mut State, now: Instant, text: &str) {
    state.flash = Some((text.to_string(), now + FLASH_FOR));
}
