//! What happened and how it is shown: the transcript the agent's events fold into, the
//! conversation cells (entries) built from it, and the timeline's selection and expanded steps.

use std::collections::HashSet;

use super::StepStop;
use super::conversation::{ConvIndex, Entry, EntryKind};
use super::plan::Plans;
use crate::transcript::{Step, Transcript};

/// The transcript and its views' own data.
#[derive(Default)]
pub struct TranscriptView {
    /// What happened: the agent's events folded once (the timeline and side panes read it).
    pub transcript: Transcript,
    /// The conversation cells (prompts, answers, thoughts, call lines, notices).
    pub entries: Vec<Entry>,
    /// The streaming answer of the running turn (index into `entries`).
    pub live: Option<usize>,
    /// The reasoning of the running step while it streams (index into `entries`).
    pub reasoning: Option<usize>,
    /// The steps shown expanded in the timeline (indices into the transcript's steps).
    pub expanded: HashSet<usize>,
    /// The selected step.
    pub selected: Option<usize>,
    /// Set when the selection moved so the layout scrolls it into view.
    pub reveal_selection: bool,
    /// Line offsets of the conversation entries at the last layout.
    pub conv_index: ConvIndex,
    /// The first entry changed since the last layout other than by growing at the end (a call
    /// line finished, a gap added), so the layout looks again from there.
    pub conv_dirty: Option<usize>,
    /// The active session's title, once it has one (its first prompt, or `/rename`).
    pub session_title: Option<String>,
    /// The `/plan` runs' blocks in the conversation.
    pub plans: Plans,
    /// Set while the session is read (the view shows its glimpse, or nothing of it yet).
    pub opening: Option<Glimpsed>,
    /// Counts the views this one replaced (a clear, another session, the whole session after
    /// its glimpse): what was cached for a step of an earlier view is never this view's.
    pub generation: u64,
}

/// What of the view a session's glimpse made, for the whole session to take its place.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Glimpsed {
    /// The conversation's first entries are the glimpse's (those after it came since).
    pub entries: usize,
    /// The prompts Up recalls from `prompts.0` up to `prompts.1` are the glimpse's.
    pub prompts: (usize, usize),
}

impl TranscriptView {
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

    /// Removes the entries `gone` says, keeping the live answer's and the running reasoning's
    /// indices on their entries, and has the next layout look again from the first removed.
    pub fn remove_entries(&mut self, gone: impl Fn(&Entry) -> bool) {
        let Some(first) = self.entries.iter().position(&gone) else {
            return;
        };
        let shift = |at: Option<usize>, entries: &[Entry]| {
            at.and_then(|i| {
                let removed = entries[..i.min(entries.len())]
                    .iter()
                    .filter(|e| gone(e))
                    .count();
                (!entries.get(i).is_some_and(&gone)).then(|| i - removed)
            })
        };
        self.live = shift(self.live, &self.entries);
        self.reasoning = shift(self.reasoning, &self.entries);
        self.conv_index.live = shift(self.conv_index.live, &self.entries);
        self.entries.retain(|e| !gone(e));
        self.conv_dirty = Some(self.conv_dirty.map_or(first, |d| d.min(first)));
    }

    /// The conversation line of the call `id`, latest first.
    pub fn call_entry(&self, id: &str) -> Option<usize> {
        self.entries
            .iter()
            .rposition(|e| e.call.as_ref().is_some_and(|c| c.id == id))
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
}
