//! The full-screen terminal UI: conversation, timeline of steps, reasoning, tool output, input
//! and status, driven by the agent's event stream.

pub(crate) mod app;
pub(crate) mod backend;
pub(crate) mod calls;
pub(crate) mod commands;
pub mod files;
pub(crate) mod find;
pub mod folder_question;
pub(crate) mod frame;
pub(crate) mod fuzzy;
pub(crate) mod input;
pub(crate) mod key_jobs;
pub(crate) mod keymap;
pub(crate) mod layout;
pub(crate) mod markdown;
pub(crate) mod memory;
pub(crate) mod notify;
pub(crate) mod panes;
pub(crate) mod paste;
mod screen;
pub(crate) mod smartcase;
pub(crate) mod state;
pub(crate) mod status_report;
pub(crate) mod terminal;
pub(crate) mod theme;
pub(crate) mod update;
pub(crate) mod view;
pub(crate) mod wrap;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use screen::{Screen, render_markdown, wrap_lines};
pub use state::FileBatch;
pub use theme::{ColorDepth, Theme};

use crate::agent::history::Glimpse;
use crate::agent::{Agent, AgentEvent, Opening, spawn_opening};
use crate::llm::Preset;

/// What the UI starts with.
#[derive(Clone, Debug)]
pub struct TuiOptions {
    /// The workspace folder (shown in the status line).
    pub workspace: PathBuf,
    /// The model preset at start.
    pub preset: Preset,
    /// The step limit per turn.
    pub max_steps: usize,
    /// Whether to capture the mouse (`--no-mouse` leaves it to the terminal).
    pub mouse: bool,
    /// The colours.
    pub theme: Theme,
    /// Notices shown in the conversation at start (missing key, history moved aside, ...).
    pub notices: Vec<String>,
    /// Tools for `/tools`: name, source, description.
    pub tools: Vec<crate::tools::toolbox::ToolInfo>,
    /// Model names used before, newest first (offered by `/model`).
    pub recent_models: Vec<String>,
    /// Open the session picker at start (`--resume` without a name).
    pub resume_picker: bool,
    /// The approval mode at start.
    pub approval: crate::approval::ApprovalMode,
    /// Where it came from (`--approval`, this folder's choice, the default).
    pub approval_source: crate::approval::ApprovalSource,
    /// Whether `run_command` is offered, or why not (for `/status`).
    pub run_command: Result<(), String>,
    /// The skills of the session (for `/skills` and `/skill`; the agent's sandbox holds them).
    pub skills: std::sync::Arc<crate::skills::Skills>,
    /// The custom slash commands (see [`load_custom_commands`]).
    pub custom_commands: std::sync::Arc<crate::custom_commands::CustomCommands>,
}

/// The custom slash commands: the person's, and the project's once the folder MiniClaw started
/// in is trusted; a name of a built-in command is reported and skipped, as are bad files.
pub fn load_custom_commands(
    project_trusted: bool,
) -> (crate::custom_commands::CustomCommands, Vec<String>) {
    let project = std::env::current_dir().ok();
    crate::custom_commands::load(
        &crate::custom_commands::default_sources(project_trusted, project.as_deref()),
        &|name| commands::find(name).is_some(),
    )
}

/// Why the UI stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The terminal could not be used.
    #[error("terminal error: {0}")]
    Io(#[from] std::io::Error),
    /// The agent task ended unexpectedly.
    #[error("the agent stopped unexpectedly")]
    AgentStopped,
    /// The session's history could not be read (the reason says which file and why).
    #[error("{0}")]
    SessionUnavailable(String),
    /// A task panicked (the terminal was restored).
    #[error("a task panicked; the terminal was restored")]
    Panicked,
}

/// Runs the full-screen UI for `agent` until the person quits; the terminal is restored on every
/// way out. While `opening` reads the session, the first frames show `glimpse` (its last turns
/// read from the end of the history) and the agent takes the session before its first command.
pub async fn run(
    agent: Agent,
    (opening, glimpse): (Opening, Option<Glimpse>),
    options: TuiOptions,
) -> Result<(), TuiError> {
    let mut state = state::State::new(&options);
    let notices = std::mem::take(&mut state.view.entries);
    let now = std::time::Instant::now();
    if opening.is_loading() {
        update::show_glimpse(&mut state, glimpse.as_ref(), now);
    } else {
        update::show_session(&mut state, agent.session(), now);
        state.session_id = Some(agent.session().id.clone());
        // Telling a long session again leaves freed memory between what stays (the events,
        // the grown lists). The code stays mapped: the first frame is about to run it.
        memory::give_back_heap();
    }
    drop(glimpse);
    state.view.entries.extend(notices);
    // When to notify: the person's environment says (see the README); a value it does not
    // know is said once, and the default used.
    state.notify = match std::env::var(notify::NOTIFY_VAR) {
        Ok(value) => notify::NotifyWhen::parse(&value).unwrap_or_else(|e| {
            state.view.push(state::EntryKind::Notice, e);
            notify::NotifyWhen::default()
        }),
        Err(_) => notify::NotifyWhen::default(),
    };
    state.providers = agent.client().providers().clone();
    state.command_rules = agent.command_rules();
    state.key_set = !state.preset.is_deepseek() || agent.client().has_key();
    let (keys, mut key_reports) = key_jobs::KeyJobs::new(agent.client().clone());
    let mut files = files::FileLister::new(Some(agent.sandbox().clone()));
    let (handle, mut events) = spawn_opening(agent, opening);
    if options.resume_picker {
        let mut effects = Vec::new();
        update::open_sessions(&mut state, &mut effects);
        app::perform(effects, &handle, &keys, &mut files);
    }
    // Without a key the dialog asks for one at once, unless the session picker was asked for
    // (Esc leaves it; the notice stays, and /key or sending opens it again).
    if !state.key_set && state.overlay.is_none() {
        update::open_key_dialog(&mut state);
    }
    let (mut terminal, _guard) = terminal::init(options.mouse, !options.theme.monochrome)?;
    state.keyboard_enhanced = terminal::keyboard_enhanced();
    let result = app::event_loop(
        &mut terminal,
        &mut state,
        &handle,
        &mut events,
        &keys,
        &mut key_reports,
        &mut files,
    )
    .await;
    // ratatui's terminal shows the cursor when dropped and prints to stderr if it cannot, which
    // panics when the terminal is gone (a closed window). Shown here instead; if that fails the
    // terminal is gone, and it is simply not dropped (the process is about to end).
    if terminal.show_cursor().is_err() {
        std::mem::forget(terminal);
    } else {
        drop(terminal);
    }
    drop(_guard);
    // A turn still running is interrupted and given a moment to save what it has, so quitting,
    // a signal or a closed terminal never loses the prompt or the partial answer.
    // (An agent that could not read the session ran no turn, and will tell none's end.)
    if state.busy() && !matches!(result, Err(TuiError::SessionUnavailable(_))) {
        handle.interrupt();
        let settled = async {
            while let Some(event) = events.recv().await {
                if matches!(event, AgentEvent::TurnFinished { .. }) {
                    break;
                }
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_secs(3), settled).await;
    }
    // On the normal screen now: how to come back, as Codex and Claude Code say it. Not after
    // a failure, whose message is printed next, nor for an empty session.
    if result.is_ok()
        && let Some(text) = status_report::farewell(&state)
    {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
    }
    result
}
