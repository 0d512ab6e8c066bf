//! A list to choose from, filtered as the person types: earlier sessions (`/resume`) or models
//! (`/model`).

use crate::events::SessionSummary;
use crate::llm::Preset;

/// What the picker chooses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PickerKind {
    /// An archived session to reopen.
    Sessions,
    /// A model to use.
    Models,
}

/// One row.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PickerItem {
    /// What choosing it acts on (a session id, a model name).
    pub key: String,
    /// The main text (title, model name).
    pub label: String,
    /// The text after it (date, turns, first prompt; what a model is).
    pub detail: String,
    /// Why it cannot be chosen, when it cannot.
    pub problem: Option<String>,
}

/// The picker's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Picker {
    /// What it chooses.
    pub kind: PickerKind,
    /// Every row, in order (newest session first; presets, then recent models).
    pub items: Vec<PickerItem>,
    /// What the person typed to filter the rows.
    pub filter: String,
    /// The selected row among the visible ones.
    pub selected: usize,
    /// Waiting for the list (sessions are read by the agent task).
    pub loading: bool,
    /// Asking whether to delete the selected session.
    pub confirm_delete: bool,
}

impl Picker {
    /// An empty session picker waiting for the list.
    pub fn sessions() -> Self {
        Self {
            kind: PickerKind::Sessions,
            items: Vec::new(),
            filter: String::new(),
            selected: 0,
            loading: true,
            confirm_delete: false,
        }
    }

    /// The model picker: the presets, the configured providers' models (`listed`: label and
    /// words on it), then the names used recently (`current` marked).
    pub fn models(current: &Preset, listed: &[(String, String)], recent: &[String]) -> Self {
        let mut items: Vec<PickerItem> = [
            (Preset::Flash, "preset · fast, thinking off"),
            (Preset::Pro, "preset · thinking on, high reasoning effort"),
        ]
        .into_iter()
        .map(|(p, what)| PickerItem {
            key: p.model().to_string(),
            label: p.model().to_string(),
            detail: what.to_string(),
            problem: None,
        })
        .collect();
        for (label, detail) in listed {
            items.push(PickerItem {
                key: label.clone(),
                label: label.clone(),
                detail: detail.clone(),
                problem: None,
            });
        }
        let current = current.to_string();
        for name in recent {
            if !items.iter().any(|i| &i.key == name) {
                items.push(PickerItem {
                    key: name.clone(),
                    label: name.clone(),
                    detail: "used before".into(),
                    problem: None,
                });
            }
        }
        for item in &mut items {
            if item.key == current {
                item.detail.push_str(" · current");
            }
        }
        let selected = items.iter().position(|i| i.key == current).unwrap_or(0);
        Self {
            kind: PickerKind::Models,
            items,
            filter: String::new(),
            selected,
            loading: false,
            confirm_delete: false,
        }
    }

    /// Fills a session picker with `list` (the selection kept in range).
    pub fn set_sessions(&mut self, list: &[SessionSummary]) {
        self.items = list.iter().map(session_item).collect();
        self.loading = false;
        self.confirm_delete = false;
        self.clamp();
    }

    /// The indices into `items` of the rows the filter keeps: every word of it appears in the
    /// row's text, in any case.
    pub fn visible(&self) -> Vec<usize> {
        let words: Vec<String> = self
            .filter
            .split_whitespace()
            .map(str::to_lowercase)
            .collect();
        self.items
            .iter()
            .enumerate()
            .filter(|(_, item)| {
                let text = format!("{} {}", item.label, item.detail).to_lowercase();
                words.iter().all(|w| text.contains(w.as_str()))
            })
            .map(|(i, _)| i)
            .collect()
    }

    /// The selected row, if any is visible.
    pub fn chosen(&self) -> Option<&PickerItem> {
        self.visible()
            .get(self.selected)
            .and_then(|&i| self.items.get(i))
    }

    /// Moves the selection by `delta` rows, staying within the visible ones.
    pub fn step(&mut self, delta: isize) {
        let count = self.visible().len();
        if count == 0 {
            self.selected = 0;
            return;
        }
        self.selected = self.selected.saturating_add_signed(delta).min(count - 1);
    }

    /// Keeps the selection on a visible row.
    pub fn clamp(&mut self) {
        let count = self.visible().len();
        self.selected = self.selected.min(count.saturating_sub(1));
    }
}

/// A session's row: its title; when, how long, how it began.
fn session_item(s: &SessionSummary) -> PickerItem {
    let when = s
        .updated_at
        .map(|t| {
            t.with_timezone(&chrono::Local)
                .format("%Y-%m-%d %H:%M")
                .to_string()
        })
        .unwrap_or_default();
    let turns = format!("{} turn{}", s.turns, if s.turns == 1 { "" } else { "s" });
    let detail = if s.problem.is_some() {
        String::new()
    } else {
        [when, turns, s.first_prompt.clone()]
            .into_iter()
            .filter(|part| !part.is_empty())
            .collect::<Vec<_>>()
            .join(" · ")
    };
    PickerItem {
        key: s.id.clone(),
        label: s.title.clone(),
        detail,
        problem: s.problem.clone(),
    }
}
