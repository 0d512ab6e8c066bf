//! Everything the screen shows, as plain data: the transcript the agent's events fold into, the
//! conversation cells built from it (`conversation`), the turn's status (`status`), scroll
//! positions (`scroll`), input, focus, and the open overlay with its own data. The side panes'
//! caches are the panes' own, kept beside the state.

mod approval;
mod composer;
mod conversation;
mod key_dialog;
mod picker;
mod plan;
mod popup;
mod scroll;
mod status;

pub use approval::ApprovalView;
pub use composer::Composer;
pub use conversation::{CallLine, CallStatus, ConvIndex, Entry, EntryKind, WrapCache};
pub use key_dialog::{KeyDialog, KeyStage};
pub use picker::{Picker, PickerKind};
pub use plan::{ItemView, PlanPhase, PlanView, Plans};
pub use popup::{Choice, FileBatch, Popup, PopupKind, PopupRow};
pub use scroll::{Areas, Pane, Scroll, Scrolls};
pub use status::{RetryView, TurnStatus};

use super::TuiOptions;
use super::theme::Theme;
use crate::llm::Preset;
use crate::transcript::{Step, Transcript};

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
    /// What happened: the agent's events folded once (the timeline and side panes read it).
    pub transcript: Transcript,
    /// The conversation cells (prompts, answers, thoughts, call lines, notices).
    pub entries: Vec<Entry>,
    /// The streaming answer of the running turn (index into `entries`).
    pub live: Option<usize>,
    /// The steps shown expanded in the timeline (indices into the transcript's steps).
    pub expanded: std::collections::HashSet<usize>,
    /// The selected step.
    pub selected: Option<usize>,
    /// Set when the selection moved so the layout scrolls it into view.
    pub reveal_selection: bool,
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
    /// Line offsets of the conversation entries at the last layout.
    pub conv_index: ConvIndex,
    /// The first entry changed since the last layout other than by growing at the end (a call
    /// line finished, a gap added), so the layout looks again from there.
    pub conv_dirty: Option<usize>,
    /// The colours.
    pub theme: Theme,
    /// Tools for `/tools`: name, source, description.
    pub tools: Vec<crate::tools::toolbox::ToolInfo>,
    /// The active session's title, once it has one (its first prompt, or `/rename`).
    pub session_title: Option<String>,
    /// Model names used before, newest first (for the `/model` picker).
    pub recent_models: Vec<String>,
    /// The approval mode (shown in the status line; Shift+Tab changes it).
    pub approval_mode: crate::approval::ApprovalMode,
    /// Calls waiting for a yes or no, oldest first (the first one is shown).
    pub approvals: Vec<ApprovalView>,
    /// The MCP servers as last reported (for `/mcp`, `/tools` and the status line).
    pub mcp: Vec<crate::events::McpServerStatus>,
    /// Set when the person asked to quit.
    pub quit: bool,
    /// The key file a key is saved to, as shown (`<config dir>/miniclaw/.env`).
    pub key_file: String,
    /// Whether the model client has a key (the event loop keeps it current).
    pub key_set: bool,
    /// The `/plan` runs' blocks in the conversation.
    pub plans: Plans,
}

impl State {
    /// The state at start, showing the notices of `options`.
    pub fn new(options: &TuiOptions) -> Self {
        let mut state = Self {
            preset: options.preset.clone(),
            providers: crate::llm::Providers::default(),
            workspace: options.workspace.display().to_string(),
            status: TurnStatus::new(options.max_steps),
            transcript: Transcript::new(),
            entries: Vec::new(),
            live: None,
            expanded: Default::default(),
            selected: None,
            reveal_selection: false,
            focus: Focus::Input,
            overlay: Overlay::None,
            flash: None,
            show_reasoning: true,
            side_collapsed: false,
            composer: Composer::new(options.theme.muted, options.theme.text),
            scroll: Scrolls::default(),
            areas: Areas::default(),
            conv_index: ConvIndex::default(),
            conv_dirty: None,
            theme: options.theme.clone(),
            tools: options.tools.clone(),
            session_title: None,
            recent_models: options.recent_models.clone(),
            approval_mode: options.approval,
            approvals: Vec::new(),
            mcp: Vec::new(),
            quit: false,
            key_file: crate::secrets::recommended_key_file(),
            key_set: true,
            plans: Plans::default(),
        };
        for notice in &options.notices {
            state.push(EntryKind::Notice, notice.clone());
        }
        state
    }

    /// Empties the conversation and the steps (the history was cleared).
    pub fn clear_conversation(&mut self) {
        self.entries.clear();
        self.conv_dirty = None;
        self.transcript = Transcript::new();
        self.expanded.clear();
        self.live = None;
        self.selected = None;
        self.status.forget_session();
        self.session_title = None;
        self.plans = Plans::default();
        for s in self.scroll.iter_mut() {
            *s = Default::default();
        }
    }

    /// Appends an entry and returns its index.
    pub fn push(&mut self, kind: EntryKind, text: impl Into<String>) -> usize {
        self.push_entry(Entry::new(kind, text))
    }

    /// Appends `entry`, giving the entry before it its blank line unless they belong together
    /// (a thought and its calls), and returns its index.
    pub fn push_entry(&mut self, entry: Entry) -> usize {
        if entry.kind != EntryKind::Call
            && let Some(last) = self.entries.len().checked_sub(1)
            && !self.entries[last].gap
        {
            self.entries[last].gap = true;
            self.touch_entry(last);
        }
        self.entries.push(entry);
        self.entries.len() - 1
    }

    /// Marks entry `i` changed so the next layout renders it again.
    pub fn touch_entry(&mut self, i: usize) {
        if let Some(e) = self.entries.get_mut(i) {
            e.touch();
            self.conv_dirty = Some(self.conv_dirty.map_or(i, |d| d.min(i)));
        }
    }

    /// The conversation line of the call `id`, latest first.
    pub fn call_entry(&self, id: &str) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| e.call.as_ref().is_some_and(|c| c.id == id))
    }

    /// Whether a turn is running (or was asked for, or a plan's executor is between items).
    pub fn busy(&self) -> bool {
        self.status.busy()
    }

    /// The step that drawing details (reasoning, tool output) follow: the selection, else the
    /// latest.
    pub fn detail_step(&self) -> Option<&Step> {
        let steps = &self.transcript.steps;
        self.selected
            .and_then(|i| steps.get(i))
            .or_else(|| steps.last())
    }

    /// How step `i`'s turn stopped, when the step was its last and the turn did not end well.
    pub fn step_stop(&self, i: usize) -> Option<StepStop> {
        let steps = &self.transcript.steps;
        let step = steps.get(i)?;
        if steps.get(i + 1).is_some_and(|next| next.turn == step.turn) {
            return None;
        }
        match self.transcript.turns.get(step.turn)?.outcome? {
            crate::events::TurnOutcome::Interrupted => Some(StepStop::Interrupted),
            crate::events::TurnOutcome::Failed(_) => Some(StepStop::Failed),
            _ => None,
        }
    }

    /// The text of the last answer.
    pub fn last_answer(&self) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|e| e.kind == EntryKind::Assistant && !e.text.is_empty())
            .map(|e| e.text.as_str())
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
