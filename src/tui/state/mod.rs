//! Everything the screen shows, as plain data: the transcript the agent's events fold into, the
//! conversation cells built from it (`conversation`), the turn's status (`status`), scroll
//! positions (`scroll`), input, focus, and the open overlay with its own data. The side panes'
//! caches are the panes' own, kept beside the state.

mod approval;
mod composer;
mod conversation;
mod find;
mod key_dialog;
mod picker;
mod plan;
mod popup;
mod scroll;
mod search;
mod status;
mod view;

pub use approval::{ANSWER_GRACE, ApprovalView, codes_shown};
pub use composer::Composer;
pub use conversation::{CallLine, CallStatus, Entry, EntryKind, Preview, WrapCache};
pub use find::{Find, Hit};
pub use key_dialog::{KeyDialog, KeyStage};
pub use picker::{Picker, PickerKind};
pub use plan::{ItemView, PlanPhase, PlanView};
pub use popup::{Choice, FileBatch, Popup, PopupKind, PopupRow};
pub use scroll::{Areas, Pane, Scroll, Scrolls};
pub use search::PromptSearch;
pub use status::{ContextGauge, RetryView, TurnStatus};
pub use view::{Glimpsed, TranscriptView};

use super::TuiOptions;
use super::theme::Theme;
use crate::llm::Preset;

/// The panes that can have the keyboard focus, in Tab order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Focus {
    /// The prompt editor.
    Input,
    /// The conversation.
    Conversation,
    /// The Thought / Action / Observation steps.
    Timeline,
    /// The reasoning of a step.
    Reasoning,
    /// A tool's live output and result.
    ToolOutput,
}

impl Focus {
    /// Every focusable pane in Tab order.
    pub const ORDER: [Focus; 5] = [
        Focus::Input,
        Focus::Conversation,
        Focus::Timeline,
        Focus::Reasoning,
        Focus::ToolOutput,
    ];
}

/// A box drawn over the panes, holding what it shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Overlay {
    /// Nothing.
    #[default]
    None,
    /// The key help, scrolled this far.
    Help {
        /// How far it is scrolled.
        scroll: usize,
    },
    /// "Clear this conversation?": archive, delete or keep it.
    ConfirmClear,
    /// A list to choose from (sessions or models).
    Picker(Picker),
    /// The first call of `State::approvals`, waiting for a yes or no (the calls waiting are the
    /// turn's, kept while another overlay is open).
    Approval,
    /// "Undo anyway?" after `/undo` found files changed since the turn.
    ConfirmUndo,
    /// The API key dialog.
    Key(KeyDialog),
}

/// Which overlay is open, without its data (what the keymap needs to know).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverlayKind {
    /// Nothing.
    None,
    /// The key help.
    Help,
    /// "Clear this conversation?".
    ConfirmClear,
    /// A picker.
    Picker,
    /// A call waiting for a yes or no.
    Approval,
    /// "Undo anyway?".
    ConfirmUndo,
    /// The API key dialog.
    Key,
}

impl Overlay {
    /// Which overlay this is.
    pub fn kind(&self) -> OverlayKind {
        match self {
            Self::None => OverlayKind::None,
            Self::Help { .. } => OverlayKind::Help,
            Self::ConfirmClear => OverlayKind::ConfirmClear,
            Self::Picker(_) => OverlayKind::Picker,
            Self::Approval => OverlayKind::Approval,
            Self::ConfirmUndo => OverlayKind::ConfirmUndo,
            Self::Key(_) => OverlayKind::Key,
        }
    }

    /// Whether nothing is drawn over the panes.
    pub fn is_none(&self) -> bool {
        matches!(self, Self::None)
    }

    /// The open picker.
    pub fn picker(&self) -> Option<&Picker> {
        match self {
            Self::Picker(p) => Some(p),
            _ => None,
        }
    }

    /// The open picker, to change.
    pub fn picker_mut(&mut self) -> Option<&mut Picker> {
        match self {
            Self::Picker(p) => Some(p),
            _ => None,
        }
    }

    /// The open key dialog.
    pub fn key_dialog(&self) -> Option<&KeyDialog> {
        match self {
            Self::Key(d) => Some(d),
            _ => None,
        }
    }

    /// The open key dialog, to change.
    pub fn key_dialog_mut(&mut self) -> Option<&mut KeyDialog> {
        match self {
            Self::Key(d) => Some(d),
            _ => None,
        }
    }
}

/// How a step's turn ended when it did not end with an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepStop {
    /// The person interrupted it.
    Interrupted,
    /// An error ended it.
    Failed,
}

/// The whole UI state.
pub struct State {
    /// The model preset.
    pub preset: Preset,
    /// The configured providers (`/model NAME/MODEL`, the model picker).
    pub providers: crate::llm::Providers,
    /// The workspace shown in the status line.
    pub workspace: String,
    /// Whether a turn runs, and how it goes.
    pub status: TurnStatus,
    /// What happened and how it is shown: the transcript, the conversation cells built from it,
    /// the timeline's selection.
    pub view: TranscriptView,
    /// The focused pane.
    pub focus: Focus,
    /// The open overlay.
    pub overlay: Overlay,
    /// A short-lived hint shown in the status line until the given time (it is about a key just
    /// pressed, so it should not stay in the conversation).
    pub flash: Option<(String, std::time::Instant)>,
    /// Whether the reasoning pane is shown.
    pub show_reasoning: bool,
    /// Whether the side panes are collapsed (narrow terminals).
    pub side_collapsed: bool,
    /// The message being written, the queue behind the turn, and the completion popup.
    pub composer: Composer,
    /// Scroll of conversation, timeline, reasoning and tool output.
    pub scroll: Scrolls,
    /// Pane areas of the last layout.
    pub areas: Areas,
    /// The colours.
    pub theme: Theme,
    /// Tools for `/tools`: name, source, description.
    pub tools: Vec<crate::tools::toolbox::ToolInfo>,
    /// The skills, for `/skills` and `/skill`.
    pub skills: std::sync::Arc<crate::skills::Skills>,
    /// The custom slash commands (the popup offers them after the built-in ones).
    pub custom_commands: std::sync::Arc<crate::custom_commands::CustomCommands>,
    /// Model names used before, newest first (for the `/model` picker).
    pub recent_models: Vec<String>,
    /// The approval mode (shown in the status line; Shift+Tab changes it).
    pub approval_mode: crate::approval::ApprovalMode,
    /// Where the approval mode came from (for `/status`); a change in the UI makes it this
    /// folder's choice.
    pub approval_source: crate::approval::ApprovalSource,
    /// Whether `run_command` is offered, or why not (for `/status`).
    pub run_command: Result<(), String>,
    /// The workspace as given, the folder whose records (`remembered::folders`) keep the mode.
    pub folder: std::path::PathBuf,
    /// Calls waiting for a yes or no, oldest first (the first one is shown).
    pub approvals: Vec<ApprovalView>,
    /// The MCP servers as last reported (for `/mcp`, `/tools` and the status line).
    pub mcp: Vec<crate::events::McpServerStatus>,
    /// The command rules in force, shared with the agent's gate (`/permissions`).
    pub command_rules: std::sync::Arc<crate::command_rules::CommandRules>,
    /// Calls the gate let run by rules, told before they start: their id and what their call
    /// line says (`allowed by rule "cargo test"`), until the call's line is made.
    pub allowed_by: Vec<(String, String)>,
    /// Set when the person asked to quit.
    pub quit: bool,
    /// Set when the session's history could not be read: the UI ends, saying why.
    pub unavailable: Option<String>,
    /// The key file a key is saved to, as shown (`<config dir>/miniclaw/.env`).
    pub key_file: String,
    /// Whether the model client has a key (the event loop keeps it current).
    pub key_set: bool,
    /// Ctrl+F / `/find`: the find in the conversation, while it is open.
    pub find: Option<Find>,
    /// When to notify (`MINICLAW_NOTIFY`).
    pub notify: crate::tui::notify::NotifyWhen,
    /// The active session's id (what `--resume` takes); `None` once the history was cleared,
    /// when the agent started a session the screen was not told the id of.
    pub session_id: Option<String>,
    /// Whether the terminal speaks the kitty keyboard protocol, so Shift+Enter reaches the
    /// input as itself (the help and the input's title then name it).
    pub keyboard_enhanced: bool,
}

impl State {
    /// The state at start, showing the notices of `options`.
    pub fn new(options: &TuiOptions) -> Self {
        let mut state = Self {
            preset: options.preset.clone(),
            providers: crate::llm::Providers::default(),
            workspace: options.workspace.display().to_string(),
            status: TurnStatus::new(options.max_steps),
            view: TranscriptView::default(),
            focus: Focus::Input,
            overlay: Overlay::None,
            flash: None,
            show_reasoning: true,
            side_collapsed: false,
            composer: Composer::new(options.theme.muted, options.theme.text),
            scroll: Scrolls::default(),
            areas: Areas::default(),
            theme: options.theme.clone(),
            tools: options.tools.clone(),
            skills: options.skills.clone(),
            custom_commands: options.custom_commands.clone(),
            recent_models: options.recent_models.clone(),
            approval_mode: options.approval,
            approval_source: options.approval_source,
            run_command: options.run_command.clone(),
            folder: options.workspace.clone(),
            approvals: Vec::new(),
            mcp: Vec::new(),
            allowed_by: Vec::new(),
            command_rules: std::sync::Arc::new(crate::command_rules::CommandRules::empty(
                &options.workspace,
            )),
            quit: false,
            unavailable: None,
            key_file: crate::secrets::recommended_key_file(),
            key_set: true,
            find: None,
            notify: Default::default(),
            session_id: None,
            keyboard_enhanced: false,
        };
        for notice in &options.notices {
            state.view.push(EntryKind::Notice, notice.clone());
        }
        state
    }

    /// Empties the conversation and the steps (the history was cleared).
    pub fn clear_conversation(&mut self) {
        self.view = TranscriptView {
            generation: self.view.generation.wrapping_add(1),
            ..TranscriptView::default()
        };
        self.status.forget_session();
        // Enter's "go on" was the last turn's, of the session that is gone.
        self.status.go_on = false;
        self.session_id = None;
        for s in self.scroll.iter_mut() {
            *s = Default::default();
        }
    }

    /// Whether a turn is running (or was asked for, or a plan's executor is between items).
    pub fn busy(&self) -> bool {
        self.status.busy()
    }

    /// The panes currently shown, in Tab order.
    pub fn focusable(&self) -> Vec<Focus> {
        Focus::ORDER
            .into_iter()
            .filter(|f| match f {
                Focus::Input | Focus::Conversation => true,
                Focus::Timeline => self.areas.timeline.is_some() || self.areas.screen.width == 0,
                Focus::Reasoning => self.areas.reasoning.is_some(),
                Focus::ToolOutput => self.areas.tool_output.is_some(),
            })
            .collect()
    }

    /// The scroll slot of a pane (the input scrolls the conversation).
    pub fn scroll_slot(focus: Focus) -> Pane {
        match focus {
            Focus::Input | Focus::Conversation => Pane::Conversation,
            Focus::Timeline => Pane::Timeline,
            Focus::Reasoning => Pane::Reasoning,
            Focus::ToolOutput => Pane::ToolOutput,
        }
    }
}
