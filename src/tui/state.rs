//! Everything the screen shows, as plain data: conversation, timeline steps, input, focus,
//! scroll positions and the caches drawing reads.

use std::time::{Duration, Instant};

use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui_textarea::TextArea;
use serde_json::Value;

use super::TuiOptions;
use super::markdown::StreamingMarkdown;
use super::theme::Theme;
use crate::agent::AgentState;
use crate::llm::{Preset, Usage};

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

/// A box drawn over the panes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overlay {
    /// Nothing.
    None,
    /// The key help.
    Help,
    /// "Clear conversation history? (y/n)".
    ConfirmClear,
}

/// What a conversation entry is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// The person's prompt.
    User,
    /// The model's answer (markdown).
    Assistant,
    /// Something went wrong; says what to do.
    Error,
    /// Information (notices, `/tools`, `/model`).
    Notice,
    /// What the model said before calling tools (shown dimmed).
    Thought,
    /// One tool call, as one compact line updated live.
    Call,
}

/// Where a tool call shown in the conversation stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallStatus {
    /// Still running (a spinner is drawn after it).
    Running,
    /// Finished; how long it took, when known (calls of an earlier session have no timing).
    Done(Option<Duration>),
    /// Finished with `"ok": false`; the short reason.
    Failed(String),
}

/// The tool call a [`EntryKind::Call`] entry shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CallLine {
    /// The call id, to find the entry when the call finishes.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The raw JSON arguments.
    pub arguments: String,
    /// Where it stands.
    pub status: CallStatus,
}

/// Wrapped lines of an entry for one width and text version.
#[derive(Clone, Debug, Default)]
pub struct WrapCache {
    /// The width they were wrapped to.
    pub width: u16,
    /// The entry version they show.
    pub version: u64,
    /// The wrapped lines.
    pub lines: Vec<Line<'static>>,
    /// A streamed answer: `lines` is kept and only its open end re-wrapped per change.
    pub incremental: bool,
    /// Lines at the start of `lines` that stay as they are while the answer grows.
    pub stable: usize,
    /// How many of the markdown's frozen lines are wrapped into the stable part.
    pub frozen_raw: usize,
    /// Not rendered yet: `lines` is empty and this many lines are assumed (an entry far above
    /// the view at start-up; it is rendered when it scrolls into view).
    pub estimated: Option<usize>,
}

impl WrapCache {
    /// The entry's height in lines (exact, or the estimate while not rendered).
    pub fn height(&self) -> usize {
        self.estimated.unwrap_or(self.lines.len())
    }
}

/// One conversation entry.
#[derive(Clone, Debug)]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// The source text (markdown for answers).
    pub text: String,
    /// Whether an answer has fully arrived.
    pub done: bool,
    /// Whether the answer was cut short.
    pub interrupted: bool,
    /// Bumped on every change so caches know they are stale.
    pub version: u64,
    /// The markdown cache of an answer.
    pub markdown: StreamingMarkdown,
    /// The call of a [`EntryKind::Call`] entry.
    pub call: Option<CallLine>,
    /// Whether a long prompt is shown whole (it is folded to its first lines otherwise).
    pub expanded: bool,
    /// Whether a blank line follows; a thought and its call lines stay together, and the
    /// last of them gets its gap when something else follows.
    pub gap: bool,
    /// The wrapped lines.
    pub cache: WrapCache,
}

impl Entry {
    /// A new entry.
    pub fn new(kind: EntryKind, text: impl Into<String>) -> Self {
        Self {
            kind,
            text: text.into(),
            done: kind != EntryKind::Assistant,
            interrupted: false,
            version: 1,
            markdown: StreamingMarkdown::default(),
            call: None,
            expanded: false,
            gap: !matches!(kind, EntryKind::Thought | EntryKind::Call),
            cache: WrapCache::default(),
        }
    }

    /// A compact line for a tool call that just started.
    pub fn call(id: String, name: String, arguments: String) -> Self {
        let mut entry = Self::new(EntryKind::Call, String::new());
        entry.call = Some(CallLine {
            id,
            name,
            arguments,
            status: CallStatus::Running,
        });
        entry
    }

    /// Marks the entry changed.
    pub fn touch(&mut self) {
        self.version += 1;
    }
}

/// One tool call of a step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallView {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The raw JSON arguments.
    pub arguments: String,
    /// Live output so far.
    pub output: String,
    /// The observation, once finished.
    pub result: Option<Value>,
    /// How long it ran.
    pub duration: Option<Duration>,
    /// One line per sub-agent event worth showing.
    pub nested: Vec<String>,
    /// What the sub-agent has said in its current step (its answer, when the turn ends).
    pub nested_text: String,
}

impl CallView {
    /// Whether the call finished with `"ok": false`.
    pub fn failed(&self) -> bool {
        self.result
            .as_ref()
            .is_some_and(|r| r.get("ok").and_then(Value::as_bool) == Some(false))
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

impl StepStop {
    /// The stop an unfinished message of the history was marked with (`interrupted`, or a
    /// failure such as `failed: ...` or a cut).
    pub fn of_incomplete(why: &str) -> Self {
        if why == "interrupted" {
            Self::Interrupted
        } else {
            Self::Failed
        }
    }
}

/// One Thought / Action / Observation step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepView {
    /// The turn it belongs to (0-based).
    pub turn: usize,
    /// Its 1-based number in the turn.
    pub number: usize,
    /// Streamed reasoning.
    pub reasoning: String,
    /// Streamed content (the thought when tools were called, else the answer).
    pub content: String,
    /// The calls it made.
    pub calls: Vec<CallView>,
    /// Whether it is shown expanded.
    pub expanded: bool,
    /// How its turn ended when it did not end with an answer.
    pub stopped: Option<StepStop>,
}

/// A scrollable pane's position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scroll {
    /// The first visible line (when not following).
    pub top: usize,
    /// Whether the view sticks to the bottom as output arrives.
    pub follow: bool,
    /// Lines in the pane at the last layout.
    pub total: usize,
    /// Visible lines at the last layout.
    pub height: usize,
}

impl Default for Scroll {
    fn default() -> Self {
        Self {
            top: 0,
            follow: true,
            total: 0,
            height: 1,
        }
    }
}

impl Scroll {
    /// The largest useful top line.
    pub fn max_top(&self) -> usize {
        self.total.saturating_sub(self.height)
    }

    /// The top line drawing uses.
    pub fn effective_top(&self) -> usize {
        if self.follow {
            self.max_top()
        } else {
            self.top.min(self.max_top())
        }
    }

    /// Moves by `delta` lines; reaching the bottom resumes following.
    pub fn by(&mut self, delta: isize) {
        let top = self.effective_top() as isize + delta;
        self.top = top.clamp(0, self.max_top() as isize) as usize;
        self.follow = self.top >= self.max_top();
    }

    /// Jumps to the top.
    pub fn to_top(&mut self) {
        self.top = 0;
        self.follow = self.max_top() == 0;
    }

    /// Jumps to the bottom and follows new output.
    pub fn to_bottom(&mut self) {
        self.follow = true;
        self.top = self.max_top();
    }

    /// Whether lines are hidden below the view.
    pub fn more_below(&self) -> bool {
        self.effective_top() < self.max_top()
    }

    /// Sets the size after a layout, keeping the position.
    pub fn resize(&mut self, total: usize, height: usize) {
        self.total = total;
        self.height = height.max(1);
        if !self.follow {
            self.top = self.top.min(self.max_top());
        }
    }
}

/// Where each pane is on screen (from the last layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Areas {
    /// The whole screen.
    pub screen: Rect,
    /// The conversation.
    pub conversation: Rect,
    /// The timeline, if shown.
    pub timeline: Option<Rect>,
    /// The reasoning, if shown.
    pub reasoning: Option<Rect>,
    /// The tool output, if shown.
    pub tool_output: Option<Rect>,
    /// The input.
    pub input: Rect,
    /// The status line.
    pub status: Rect,
    /// Whether the terminal is too small to use.
    pub too_small: bool,
}

/// Where each conversation entry starts in the wrapped conversation, so a frame finds the
/// visible entries without walking them all.
#[derive(Clone, Debug, Default)]
pub struct ConvIndex {
    /// The width the offsets were computed for.
    pub width: u16,
    /// `offsets[i]` is the first line of entry `i`; the last is the total.
    pub offsets: Vec<usize>,
    /// The live answer at the last layout (it may have changed since).
    pub live: Option<usize>,
}

impl ConvIndex {
    /// All lines of the conversation.
    pub fn total(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }
}

/// One step's timeline lines and what they were drawn from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepLines {
    /// Width, selected, running, separator and a fingerprint of the step's content.
    pub key: (usize, bool, bool, bool, [usize; 8]),
    /// The lines.
    pub lines: Vec<Line<'static>>,
}

/// Lines prepared for the side panes at the last layout.
#[derive(Clone, Debug, Default)]
pub struct SideLines {
    /// Timeline lines of each step (a turn separator first when a turn starts), cached.
    pub timeline: Vec<StepLines>,
    /// The first timeline line of each step; one more entry holds the total.
    pub step_starts: Vec<usize>,
    /// Reasoning lines of the detail step, extended in place while the reasoning grows.
    pub reasoning: super::panes::wrap_cache::GrowingWrap,
    /// Tool output lines of the detail step, cached per call.
    pub tool_output: super::panes::tool_output::ToolLines,
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
}

/// The whole UI state.
pub struct State {
    /// The model preset.
    pub preset: Preset,
    /// The step limit.
    pub max_steps: usize,
    /// The workspace shown in the status line.
    pub workspace: String,
    /// What the agent is doing.
    pub agent_state: AgentState,
    /// When the current turn started.
    pub busy_since: Option<Instant>,
    /// The current step number.
    pub step: usize,
    /// The last turn's token counts.
    pub last_usage: Option<Usage>,
    /// A pending retry.
    pub retry: Option<RetryView>,
    /// Context used by the last request and the budget, in tokens.
    pub context: Option<(usize, usize)>,
    /// The conversation.
    pub entries: Vec<Entry>,
    /// The streaming answer of the running turn (index into `entries`).
    pub live: Option<usize>,
    /// Every step of every turn.
    pub steps: Vec<StepView>,
    /// The number of turns started.
    pub turns: usize,
    /// The selected step.
    pub selected: Option<usize>,
    /// Set when the selection moved so the layout scrolls it into view.
    pub reveal_selection: bool,
    /// The focused pane.
    pub focus: Focus,
    /// The open overlay.
    pub overlay: Overlay,
    /// How far the help overlay is scrolled.
    pub help_scroll: usize,
    /// A short-lived hint shown in the status line until the given time (it is about a key just
    /// pressed, so it should not stay in the conversation).
    pub flash: Option<(String, std::time::Instant)>,
    /// Whether the reasoning pane is shown.
    pub show_reasoning: bool,
    /// Whether the side panes are collapsed (narrow terminals).
    pub side_collapsed: bool,
    /// The prompt editor.
    pub input: TextArea<'static>,
    /// Long pastes standing in the input as markers.
    pub pastes: Vec<super::paste::Paste>,
    /// Earlier prompts, oldest first.
    pub prompt_history: Vec<String>,
    /// The recalled prompt, if recalling.
    pub history_pos: Option<usize>,
    /// The text being written before recalling started.
    pub draft: String,
    /// When Ctrl+C last cleared the input while idle.
    pub last_ctrl_c: Option<Instant>,
    /// Scroll of conversation, timeline, reasoning and tool output.
    pub scroll: Scrolls,
    /// Pane areas of the last layout.
    pub areas: Areas,
    /// Side pane lines of the last layout.
    pub side: SideLines,
    /// Line offsets of the conversation entries at the last layout.
    pub conv_index: ConvIndex,
    /// The first entry changed since the last layout other than by growing at the end (a call
    /// line finished, a gap added), so the layout looks again from there.
    pub conv_dirty: Option<usize>,
    /// The colours.
    pub theme: Theme,
    /// Tools for `/tools`: name, source, description.
    pub tools: Vec<crate::tools::toolbox::ToolInfo>,
    /// Set when the person asked to quit.
    pub quit: bool,
}

/// A pane that scrolls.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pane {
    /// The conversation.
    Conversation,
    /// The timeline of steps.
    Timeline,
    /// The reasoning.
    Reasoning,
    /// The tool output.
    ToolOutput,
}

impl Pane {
    /// The side panes, which follow the live step.
    pub const SIDE: [Pane; 3] = [Pane::Timeline, Pane::Reasoning, Pane::ToolOutput];
}

/// The scroll position of each pane, looked up by [`Pane`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Scrolls([Scroll; 4]);

impl Scrolls {
    /// Every pane's position.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Scroll> {
        self.0.iter_mut()
    }
}

impl std::ops::Index<Pane> for Scrolls {
    type Output = Scroll;
    fn index(&self, pane: Pane) -> &Scroll {
        &self.0[pane as usize]
    }
}

impl std::ops::IndexMut<Pane> for Scrolls {
    fn index_mut(&mut self, pane: Pane) -> &mut Scroll {
        &mut self.0[pane as usize]
    }
}

impl State {
    /// The state at start, showing the notices of `options`.
    pub fn new(options: &TuiOptions) -> Self {
        let mut state = Self {
            preset: options.preset.clone(),
            max_steps: options.max_steps,
            workspace: options.workspace.display().to_string(),
            agent_state: AgentState::Idle,
            busy_since: None,
            step: 0,
            last_usage: None,
            retry: None,
            context: None,
            entries: Vec::new(),
            live: None,
            steps: Vec::new(),
            turns: 0,
            selected: None,
            reveal_selection: false,
            focus: Focus::Input,
            overlay: Overlay::None,
            help_scroll: 0,
            flash: None,
            show_reasoning: true,
            side_collapsed: false,
            input: TextArea::default(),
            pastes: Vec::new(),
            prompt_history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            last_ctrl_c: None,
            scroll: Scrolls::default(),
            areas: Areas::default(),
            side: SideLines::default(),
            conv_index: ConvIndex::default(),
            conv_dirty: None,
            theme: options.theme.clone(),
            tools: options.tools.clone(),
            quit: false,
        };
        state.reset_input();
        for notice in &options.notices {
            state.push(EntryKind::Notice, notice.clone());
        }
        state
    }

    /// Empties the conversation and the steps (the history was cleared).
    pub fn clear_conversation(&mut self) {
        self.entries.clear();
        self.conv_dirty = None;
        self.steps.clear();
        self.live = None;
        self.selected = None;
        self.last_usage = None;
        self.context = None;
        self.step = 0;
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

    /// Whether a turn is running.
    pub fn busy(&self) -> bool {
        self.agent_state != AgentState::Idle || self.busy_since.is_some()
    }

    /// The prompt text as typed (long pastes still as their markers).
    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// The prompt text to send: the typed text with each paste marker replaced by its paste.
    pub fn input_expanded(&self) -> String {
        super::paste::expand(&self.input_text(), &self.pastes)
    }

    /// Whether the input is empty.
    pub fn input_empty(&self) -> bool {
        self.input.lines().iter().all(String::is_empty)
    }

    /// Replaces the input text (cursor at the end).
    pub fn set_input(&mut self, text: &str) {
        let lines: Vec<String> = text.split('\n').map(str::to_string).collect();
        self.input = TextArea::new(lines);
        self.pastes.clear();
        self.style_input();
        self.input.move_cursor(ratatui_textarea::CursorMove::Bottom);
        self.input.move_cursor(ratatui_textarea::CursorMove::End);
    }

    /// Empties the input.
    pub fn reset_input(&mut self) {
        self.input = TextArea::default();
        self.pastes.clear();
        self.style_input();
    }

    fn style_input(&mut self) {
        self.input
            .set_cursor_line_style(ratatui::style::Style::default());
        self.input
            .set_placeholder_text("Ask anything — Enter sends, Alt+Enter adds a line, F1 help");
        self.input.set_placeholder_style(self.theme.muted);
        self.input.set_style(self.theme.text);
        self.input
            .set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    }

    /// The step that drawing details (reasoning, tool output) follow: the selection, else the
    /// latest.
    pub fn detail_step(&self) -> Option<&StepView> {
        self.selected
            .and_then(|i| self.steps.get(i))
            .or_else(|| self.steps.last())
    }

    /// The call with `id`, latest first.
    pub fn call_mut(&mut self, id: &str) -> Option<&mut CallView> {
        self.steps
            .iter_mut()
            .rev()
            .flat_map(|s| s.calls.iter_mut())
            .find(|c| c.id == id)
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
