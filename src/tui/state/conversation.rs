//! The conversation as data: entries (prompts, answers, thoughts, call lines, notices) and the
//! wrapped lines cached for them.

use std::time::{Duration, Instant};

use ratatui::text::Line;

use crate::tui::calls;
use crate::tui::markdown::StreamingMarkdown;

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
    /// A unified diff of files (`/diff`, `/undo`), coloured line by line.
    Diff,
    /// A `/plan` plan: its items with their states, in a block of its own.
    Plan,
    /// The heading of a plan item's executor turn.
    PlanItem,
    /// A step's reasoning (the pro preset's `reasoning_content`): one collapsed line,
    /// `✻ Thinking… 5 s` while it streams, `✻ Thought for 5 s` after; Enter shows the text.
    Reasoning,
    /// A compaction: one collapsed line (`Compacted 126 turns …`); Enter shows the summary.
    Compaction,
}

/// How long a step's reasoning took, for its [`EntryKind::Reasoning`] line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Thinking {
    /// When it began (`None`: told again from a saved session, which keeps no timing).
    pub started: Option<Instant>,
    /// How long it took, once it ended (timed).
    pub took: Option<Duration>,
    /// Whether it ended (the step went on to its text or calls, or ended).
    pub ended: bool,
}

/// Where a tool call shown in the conversation stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CallStatus {
    /// Still running (a spinner is drawn after it).
    Running,
    /// Finished; how long it took, when known (calls of an earlier session have no timing).
    Done(Option<Duration>),
    /// Finished after the person said yes to it; how long it took, when known.
    Approved(Option<Duration>),
    /// Finished with `"ok": false`; the short reason.
    Failed(String),
    /// A command that ran (`"ok": true`) but did not exit 0; how long it took, when known.
    Exited(crate::events::CommandExit, Option<Duration>),
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
    /// What a finished call returned, as readable lines (cleaned of terminal escapes), shown
    /// dimmed under the call line: folded to its first lines unless the entry is expanded.
    /// While it runs, its latest progress (a sub-agent's steps, the last output lines); empty
    /// for failed calls (their reason is on the call line).
    pub preview: Preview,
    /// What it changed in files, one diff per file: a file tool's change is shown instead of
    /// the preview; a command's follow its output.
    pub diffs: Vec<crate::diff::FileDiff>,
    /// Which remembered rules let it run without asking (`allowed by rule "cargo test"`).
    pub allowed_by: Option<String>,
}

/// What is shown under a call line, as [`CallLine::preview_lines`] gives it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preview {
    /// These lines: a running call's progress, or nothing (a failed call).
    Lines(Vec<String>),
    /// A finished call's observation, made into lines when first asked for: most calls of a
    /// long session are never drawn, and their lines would hold its outputs a second time.
    Result {
        /// What it returned (shared with the transcript).
        result: crate::events::Observation,
        /// Interrupted: only what it printed by then is shown.
        interrupted: bool,
        /// The lines, once made.
        lines: std::cell::OnceCell<Vec<String>>,
    },
}

impl Default for Preview {
    fn default() -> Self {
        Self::Lines(Vec::new())
    }
}

impl Preview {
    /// A finished call's preview, its lines made when first asked for.
    pub fn of_result(result: crate::events::Observation, interrupted: bool) -> Self {
        Self::Result {
            result,
            interrupted,
            lines: std::cell::OnceCell::new(),
        }
    }
}

impl CallLine {
    /// The lines shown under the call line (made from the observation on first use).
    pub fn preview_lines(&self) -> &[String] {
        match &self.preview {
            Preview::Lines(lines) => lines,
            Preview::Result {
                result,
                interrupted,
                lines,
            } => lines.get_or_init(|| {
                if *interrupted {
                    // Told as plain output, whatever the tool's usual fields are.
                    result
                        .get("output_so_far")
                        .and_then(serde_json::Value::as_str)
                        .map(|so_far| {
                            calls::preview_lines("", "", &serde_json::json!({ "": so_far }))
                        })
                        .unwrap_or_default()
                } else {
                    calls::preview_lines(&self.name, &self.arguments, result)
                }
            }),
        }
    }

    /// How many preview lines there are, up to `cap`: exact once made, guessed cheaply before
    /// (a line for the outcome, each line of a text field, a line for any other field), since
    /// an entry far above the view is only estimated.
    pub fn preview_len_guess(&self, cap: usize) -> usize {
        match &self.preview {
            Preview::Result {
                result,
                interrupted: false,
                lines,
            } if lines.get().is_none() => match result.parsed_or_text() {
                Ok(value) => (1 + calls::guess_lines(value, cap)).min(cap),
                // Not parsed yet (a saved call far above the view): its text's escaped
                // newlines, without parsing it.
                Err(text) => text.matches("\\n").take(cap).count().min(cap),
            },
            _ => self.preview_lines().len().min(cap),
        }
    }
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
    /// The markdown renderer of an answer (or an expanded thought or summary), made when it is
    /// first drawn: boxed and optional, since most entries of a long session are never drawn
    /// and the renderer is most of an entry's size.
    pub markdown: Option<Box<StreamingMarkdown>>,
    /// The call of a [`EntryKind::Call`] entry (boxed: most entries are not calls).
    pub call: Option<Box<CallLine>>,
    /// Whether a long prompt is shown whole (it is folded to its first lines otherwise).
    pub expanded: bool,
    /// Whether a blank line follows; a thought and its call lines stay together, and the
    /// last of them gets its gap when something else follows.
    pub gap: bool,
    /// A prompt's `@` mentions whose files went with it (as written after `@`), shown as chips.
    pub mentions: Vec<String>,
    /// The plan a [`EntryKind::Plan`] entry shows (a copy of `State::plans`' entry, kept in step).
    pub plan: Option<Box<super::plan::PlanView>>,
    /// The timing of a [`EntryKind::Reasoning`] entry.
    pub thinking: Thinking,
    /// The line a [`EntryKind::Compaction`] entry shows folded.
    pub headline: Option<String>,
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
            markdown: None,
            call: None,
            expanded: false,
            gap: !matches!(kind, EntryKind::Thought | EntryKind::Call),
            mentions: Vec::new(),
            plan: None,
            thinking: Thinking::default(),
            headline: None,
            cache: WrapCache::default(),
        }
    }

    /// The line of a compaction, folded (`Compacted 126 turns`); its summary, with its size,
    /// is the text Enter shows.
    pub fn compaction(c: &crate::events::Compaction) -> Self {
        let text = format!(
            "*A summary of {} tokens, sent instead of those turns:*\n\n{}",
            c.summary_tokens, c.summary
        );
        let mut entry = Self::new(EntryKind::Compaction, text);
        let by_itself = if c.automatic { " by itself" } else { "" };
        entry.headline = Some(format!(
            "Compacted {} turn{}{by_itself}",
            c.turns,
            if c.turns == 1 { "" } else { "s" }
        ));
        entry
    }

    /// A compact line for a tool call that just started.
    pub fn call(id: String, name: String, arguments: String) -> Self {
        let mut entry = Self::new(EntryKind::Call, String::new());
        entry.call = Some(Box::new(CallLine {
            id,
            name,
            arguments,
            status: CallStatus::Running,
            preview: Preview::default(),
            diffs: Vec::new(),
            allowed_by: None,
        }));
        entry
    }

    /// Marks the entry changed.
    pub fn touch(&mut self) {
        self.version += 1;
    }
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
