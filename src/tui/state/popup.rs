//! The completion popup over the input: workspace files after `@`, slash commands after `/`,
//! or a command's argument values; and the cached list of workspace files it matches against.

use std::time::Instant;

use crate::tui::fuzzy::Fuzzy;

/// The most rows the popup shows: every slash command fits (the drawing clamps it to the
/// screen).
pub const POPUP_ROWS: usize = 24;

/// What the popup completes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PopupKind {
    /// A workspace file after `@`.
    Files,
    /// A slash command's name.
    Commands,
    /// The argument of the named slash command.
    Values(&'static str),
}

/// One choice.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    /// What the row shows and the match is made on (a path, `/model`, a value).
    pub label: String,
    /// Text after it (a command's argument and description, what a value is).
    pub detail: String,
    /// What completing puts in place of the typed word.
    pub insert: String,
}

/// One row as drawn: a choice and the letters the query matched in its label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PopupRow {
    /// The choice.
    pub choice: Choice,
    /// Character positions in `choice.label` to highlight.
    pub matched: Vec<usize>,
}

/// The open popup.
#[derive(Clone, Debug)]
pub struct Popup {
    /// What it completes.
    pub kind: PopupKind,
    /// Where the word being completed starts in the input (row, character column): its `@`
    /// or `/`, or a command argument's first character.
    pub anchor: (usize, usize),
    /// What was typed of the word so far (after the `@` or `/`).
    pub query: String,
    /// The rows shown (at most [`POPUP_ROWS`] files or values; every matching command).
    pub rows: Vec<PopupRow>,
    /// How many choices match in all.
    pub total: usize,
    /// The selected row.
    pub selected: usize,
    /// Indices of the matching choices, best first (into the file list or `choices`).
    ranked: Vec<usize>,
    /// The choices of a command or value popup (the file list holds a file popup's).
    choices: Vec<Choice>,
    fuzzy: Fuzzy,
}

impl Popup {
    /// A file popup at `anchor` for `query`, matched against `files`.
    pub fn files(anchor: (usize, usize), query: &str, files: &[String]) -> Self {
        let mut popup = Self::empty(PopupKind::Files, anchor, Fuzzy::paths());
        popup.set_file_query(query, files);
        popup
    }

    /// A command or value popup at `anchor` offering `choices`.
    pub fn choices(
        kind: PopupKind,
        anchor: (usize, usize),
        query: &str,
        choices: Vec<Choice>,
    ) -> Self {
        let mut popup = Self::empty(kind, anchor, Fuzzy::words());
        popup.choices = choices;
        popup.set_choice_query(query);
        popup
    }

    fn empty(kind: PopupKind, anchor: (usize, usize), fuzzy: Fuzzy) -> Self {
        Self {
            kind,
            anchor,
            query: String::new(),
            rows: Vec::new(),
            total: 0,
            selected: 0,
            ranked: Vec::new(),
            choices: Vec::new(),
            fuzzy,
        }
    }

    /// Matches `query` against `files`. A query that extends the last one only looks among
    /// the last one's matches (a fuzzy match of a longer query is a match of its start).
    pub fn set_file_query(&mut self, query: &str, files: &[String]) {
        let narrowing = !self.query.is_empty() && query.starts_with(self.query.as_str());
        let candidates = if narrowing {
            std::mem::take(&mut self.ranked)
        } else {
            (0..files.len()).collect()
        };
        self.ranked = self.fuzzy.rank(query, files, candidates);
        self.query = query.to_string();
        self.selected = 0;
        self.show(|i| Choice {
            label: files[i].clone(),
            detail: String::new(),
            insert: mention_text(&files[i]),
        });
    }

    /// Adds the files from `from` on (they just arrived) to the matches.
    pub fn add_files(&mut self, files: &[String], from: usize) {
        let more = self.fuzzy.rank(&self.query, files, from..files.len());
        let query = self.query.clone();
        self.fuzzy.merge(&query, files, &mut self.ranked, &more);
        let selected = self.selected;
        self.show(|i| Choice {
            label: files[i].clone(),
            detail: String::new(),
            insert: mention_text(&files[i]),
        });
        self.selected = selected.min(self.rows.len().saturating_sub(1));
    }

    /// Matches `query` against the choices.
    pub fn set_choice_query(&mut self, query: &str) {
        // A command is matched on its name, without the `/` before it.
        let skip = usize::from(self.kind == PopupKind::Commands);
        let labels: Vec<String> = self
            .choices
            .iter()
            .map(|c| c.label.chars().skip(skip).collect())
            .collect();
        self.ranked = self.fuzzy.rank(query, &labels, 0..labels.len());
        self.query = query.to_string();
        self.selected = 0;
        let choices = self.choices.clone();
        self.show(|i| choices[i].clone());
    }

    /// The rows for the best matches, with their matched letters.
    fn show(&mut self, choice: impl Fn(usize) -> Choice) {
        self.total = self.ranked.len();
        // Every command is offered (the built-in ones and up to the custom commands' cap; the
        // drawn list scrolls with the selection); files and values are many, only the best.
        let cap = match self.kind {
            PopupKind::Commands => usize::MAX,
            _ => POPUP_ROWS,
        };
        let best: Vec<usize> = self.ranked.iter().take(cap).copied().collect();
        // A command's label starts with its `/`, which is not part of the query.
        let skip = usize::from(self.kind == PopupKind::Commands);
        self.rows = best
            .into_iter()
            .map(|i| {
                let choice = choice(i);
                let label: String = choice.label.chars().skip(skip).collect();
                let matched = self
                    .fuzzy
                    .positions(&self.query, &label)
                    .into_iter()
                    .map(|p| p + skip)
                    .collect();
                PopupRow { choice, matched }
            })
            .collect();
    }

    /// Moves the selection by `delta` rows, wrapping around.
    pub fn step(&mut self, delta: isize) {
        let count = self.rows.len() as isize;
        if count > 0 {
            self.selected = (self.selected as isize + delta).rem_euclid(count) as usize;
        }
    }

    /// The selected choice, if any row is shown.
    pub fn chosen(&self) -> Option<&Choice> {
        self.rows.get(self.selected).map(|r| &r.choice)
    }
}

/// How a path is written after `@`: as it is, or in quotes when it holds white space.
pub fn mention_text(path: &str) -> String {
    if path.contains(char::is_whitespace) {
        format!("\"{path}\"")
    } else {
        path.to_string()
    }
}

/// Paths found by a listing of the workspace's files, handed over as the walk goes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FileBatch {
    /// The listing they belong to.
    pub generation: u64,
    /// Paths relative to the workspace.
    pub paths: Vec<String>,
    /// Whether the listing is over.
    pub done: bool,
}

/// The workspace's files, as the last listing found them (listed again when a file popup
/// opens and the list is older than a few seconds).
#[derive(Clone, Debug, Default)]
pub struct FileList {
    /// Paths relative to the workspace, in walk order.
    pub paths: Vec<String>,
    /// The listing the paths belong to; batches of an older one are ignored.
    pub generation: u64,
    /// Whether a listing is still under way (more paths may come).
    pub listing: bool,
    /// When the last listing finished.
    pub listed_at: Option<Instant>,
}
