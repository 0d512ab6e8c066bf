//! The input composer: the prompt being written, its long pastes, earlier prompts to recall,
//! messages queued behind the running turn, and the completion popup over it.

use std::time::Instant;

use ratatui::style::Style;
use ratatui_textarea::TextArea;

use super::popup::{FileList, Popup};
use super::search::PromptSearch;
use crate::tui::paste::{self, Paste};

/// Everything about the message being written.
pub struct Composer {
    /// The prompt editor.
    pub input: TextArea<'static>,
    /// Messages sent while a turn ran, oldest first: each starts a turn when the one before ends.
    pub queued: Vec<String>,
    /// Long pastes standing in the input as markers.
    pub pastes: Vec<Paste>,
    /// Earlier prompts, oldest first.
    pub prompt_history: Vec<String>,
    /// The recalled prompt, if recalling.
    pub history_pos: Option<usize>,
    /// The text being written before recalling started.
    pub draft: String,
    /// When Ctrl+C last cleared the input while idle.
    pub last_ctrl_c: Option<Instant>,
    /// The completion popup over the input (files after `@`, commands after `/`).
    pub popup: Option<Popup>,
    /// Where the word starts whose popup Esc closed (it stays closed for that word).
    pub popup_dismissed: Option<(usize, usize)>,
    /// The workspace's files, for the `@` popup.
    pub files: FileList,
    /// Ctrl+R's reverse search through earlier prompts, while it is open.
    pub search: Option<PromptSearch>,
    /// The archived sessions' prompts, newest first, as last listed (Ctrl+R asks again each
    /// time it opens: a session may have been archived since).
    pub archived_prompts: Vec<String>,
    /// The placeholder's and the text's styles.
    styles: (Style, Style),
}

impl Composer {
    /// An empty composer drawing its placeholder in `muted` and its text in `text`.
    pub fn new(muted: Style, text: Style) -> Self {
        let mut composer = Self {
            input: TextArea::default(),
            queued: Vec::new(),
            pastes: Vec::new(),
            prompt_history: Vec::new(),
            history_pos: None,
            draft: String::new(),
            last_ctrl_c: None,
            popup: None,
            popup_dismissed: None,
            files: FileList::default(),
            search: None,
            archived_prompts: Vec::new(),
            styles: (muted, text),
        };
        composer.reset_input();
        composer
    }

    /// The prompt text as typed (long pastes still as their markers).
    pub fn input_text(&self) -> String {
        self.input.lines().join("\n")
    }

    /// The prompt text to send: the typed text with each paste marker replaced by its paste.
    pub fn input_expanded(&self) -> String {
        paste::expand(&self.input_text(), &self.pastes)
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

    /// The prompts Ctrl+R searches, newest first, cleaned.
    pub fn search_candidates(&self) -> Vec<String> {
        super::search::candidates(&self.prompt_history, &self.archived_prompts)
    }

    /// Empties the input.
    pub fn reset_input(&mut self) {
        self.input = TextArea::default();
        self.pastes.clear();
        self.style_input();
    }

    fn style_input(&mut self) {
        self.input.set_cursor_line_style(Style::default());
        self.input
            .set_placeholder_text("Ask anything — Enter sends, F1 help");
        self.input.set_placeholder_style(self.styles.0);
        self.input.set_style(self.styles.1);
        self.input
            .set_wrap_mode(ratatui_textarea::WrapMode::WordOrGlyph);
    }
}
