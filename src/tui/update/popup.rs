//! The completion popup follows the word at the input's cursor: `@` opens workspace files, `/`
//! at the start of a one-line input opens the commands, and after a command and a space its
//! argument's values. Typing filters it; Up / Down choose; Tab completes; Enter inserts a file
//! or runs a command; Esc closes it until another word is begun.

use std::time::{Duration, Instant};

use ratatui_textarea::CursorMove;

use super::choices;
use super::effect::Effect;
use super::input;
use crate::tui::commands;
use crate::tui::keymap::Action;
use crate::tui::state::{FileBatch, Focus, Overlay, Popup, PopupKind, State};

/// A file list younger than this is used again when a file popup opens.
const FILES_FRESH: Duration = Duration::from_secs(10);

/// The word at the cursor that a popup completes.
#[derive(Debug, PartialEq, Eq)]
struct Word {
    kind: PopupKind,
    anchor: (usize, usize),
    query: String,
}

/// Brings the popup in line with the word at the cursor after the input changed: updates,
/// closes, or (when `open` is set: the person typed) opens it.
pub(super) fn refresh(state: &mut State, open: bool, now: Instant, effects: &mut Vec<Effect>) {
    let word = (state.focus == Focus::Input && state.overlay == Overlay::None)
        .then(|| word_at_cursor(state))
        .flatten();
    let Some(word) = word else {
        state.composer.popup = None;
        state.composer.popup_dismissed = None;
        return;
    };
    if state.composer.popup_dismissed == Some(word.anchor) {
        state.composer.popup = None;
        return;
    }
    state.composer.popup_dismissed = None;
    let same = state
        .composer
        .popup
        .as_ref()
        .is_some_and(|p| p.kind == word.kind && p.anchor == word.anchor);
    match (same, word.kind) {
        (true, _)
            if state
                .composer
                .popup
                .as_ref()
                .is_some_and(|p| p.query == word.query) => {}
        (true, PopupKind::Files) => {
            if let Some(p) = state.composer.popup.as_mut() {
                p.set_file_query(&word.query, &state.composer.files.paths);
            }
        }
        (true, _) => {
            if let Some(p) = state.composer.popup.as_mut() {
                p.set_choice_query(&word.query);
            }
        }
        (false, _) if !open => state.composer.popup = None,
        (false, PopupKind::Files) => open_files(state, word, now, effects),
        (false, kind) => {
            let list = choices::for_kind(state, kind);
            state.composer.popup = Some(Popup::choices(kind, word.anchor, &word.query, list));
        }
    }
}

/// Opens the file popup, listing the workspace again unless a recent list is at hand.
fn open_files(state: &mut State, word: Word, now: Instant, effects: &mut Vec<Effect>) {
    let files = &mut state.composer.files;
    let fresh = files
        .listed_at
        .is_some_and(|t| now.saturating_duration_since(t) < FILES_FRESH);
    if !files.listing && !fresh {
        files.generation += 1;
        files.paths.clear();
        files.listing = true;
        effects.push(Effect::ListFiles(files.generation));
    }
    state.composer.popup = Some(Popup::files(
        word.anchor,
        &word.query,
        &state.composer.files.paths,
    ));
}

/// Files found by the running listing: kept, and matched when the file popup is open.
pub fn on_files(state: &mut State, batch: FileBatch, now: Instant) {
    if batch.generation != state.composer.files.generation || !state.composer.files.listing {
        return;
    }
    let from = state.composer.files.paths.len();
    state.composer.files.paths.extend(batch.paths);
    if batch.done {
        state.composer.files.listing = false;
        state.composer.files.listed_at = Some(now);
    }
    if let Some(popup) = state
        .composer
        .popup
        .as_mut()
        .filter(|p| p.kind == PopupKind::Files)
    {
        popup.add_files(&state.composer.files.paths, from);
    }
}

/// Applies a popup key.
pub(super) fn apply(state: &mut State, action: Action, now: Instant, effects: &mut Vec<Effect>) {
    let Some(popup) = state.composer.popup.as_mut() else {
        return;
    };
    match action {
        Action::PopupMove(delta) => popup.step(delta),
        Action::PopupClose => {
            state.composer.popup_dismissed = Some(popup.anchor);
            state.composer.popup = None;
        }
        Action::PopupComplete => complete(state, now, effects),
        Action::PopupChoose => choose(state, now, effects),
        _ => {}
    }
}

/// Tab: the selected choice takes the place of the typed word.
fn complete(state: &mut State, now: Instant, effects: &mut Vec<Effect>) {
    let Some(popup) = state.composer.popup.as_ref() else {
        return;
    };
    let Some(choice) = popup.chosen().cloned() else {
        return;
    };
    let (kind, anchor) = (popup.kind, popup.anchor);
    state.composer.history_pos = None;
    match kind {
        PopupKind::Files => replace_word(state, anchor, &format!("@{} ", choice.insert)),
        PopupKind::Commands => replace_word(state, anchor, &choice.insert),
        PopupKind::Values(_) => {
            replace_word(state, anchor, &choice.insert);
            // The value is complete: the popup would only show it again.
            state.composer.popup_dismissed = Some(anchor);
        }
    }
    state.composer.popup = None;
    refresh(state, true, now, effects);
}

/// Enter: a file is inserted; a command (or a command with its value) runs, unless it needs
/// an argument, when it is completed instead. With nothing to choose, Enter sends as usual.
fn choose(state: &mut State, now: Instant, effects: &mut Vec<Effect>) {
    let Some(popup) = state.composer.popup.as_ref() else {
        return;
    };
    let kind = popup.kind;
    // A value nobody typed or moved to is not chosen: `/approval ` + Enter shows the mode, it
    // does not set the first one offered.
    let chosen = match kind {
        PopupKind::Values(_) if popup.query.trim().is_empty() && popup.selected == 0 => None,
        _ => popup.chosen().cloned(),
    };
    // A custom command with an argument hint waits for its arguments, as a built-in one that
    // needs its argument does.
    let needs_argument = |label: &str| {
        let name = label.trim_start_matches('/');
        match commands::find(name) {
            Some(c) => c.needs_argument(),
            None => state
                .custom_commands
                .find(name)
                .is_some_and(|c| c.argument_hint.is_some()),
        }
    };
    match (kind, chosen) {
        (PopupKind::Files, Some(_)) => complete(state, now, effects),
        (PopupKind::Commands, Some(c)) if needs_argument(&c.label) => complete(state, now, effects),
        (PopupKind::Commands, Some(c)) => {
            state.composer.set_input(&c.label);
            state.composer.popup = None;
            input::send(state, now, effects);
        }
        (PopupKind::Values(_), Some(_)) => {
            complete(state, now, effects);
            state.composer.popup = None;
            input::send(state, now, effects);
        }
        (_, None) => {
            state.composer.popup = None;
            input::send(state, now, effects);
        }
    }
}

/// Replaces the word that starts at `anchor` (up to the next white space after the cursor)
/// with `text`, the cursor after it.
fn replace_word(state: &mut State, anchor: (usize, usize), text: &str) {
    let (row, col) = anchor;
    let line = state
        .composer
        .input
        .lines()
        .get(row)
        .cloned()
        .unwrap_or_default();
    let cursor = state.composer.input.cursor().1;
    let end = cursor
        + line
            .chars()
            .skip(cursor)
            .take_while(|c| !c.is_whitespace())
            .count();
    let to_u16 = |n: usize| u16::try_from(n).unwrap_or(u16::MAX);
    state
        .composer
        .input
        .move_cursor(CursorMove::Jump(to_u16(row), to_u16(col)));
    state.composer.input.delete_str(end.saturating_sub(col));
    state.composer.input.insert_str(text);
}

/// The word the cursor is in or just after, when a popup completes it.
fn word_at_cursor(state: &State) -> Option<Word> {
    let ratatui_textarea::DataCursor(row, col) = state.composer.input.cursor();
    let lines = state.composer.input.lines();
    let before: String = lines.get(row)?.chars().take(col).collect();
    if row == 0 && lines.len() == 1 && before.starts_with('/') {
        return command_word(&before);
    }
    // The word before the cursor: after the last white space.
    let start = before
        .char_indices()
        .rfind(|(_, c)| c.is_whitespace())
        .map_or(0, |(i, c)| i + c.len_utf8());
    let word = &before[start..];
    // `@` starts the word, or follows an opening bracket (`(@notes.md`).
    let at = match word.find('@')? {
        0 => 0,
        1 if word.starts_with(['(', '[', '{']) => 1,
        _ => return None,
    };
    let query = &word[at + 1..];
    if query.starts_with('"') {
        return None;
    }
    Some(Word {
        kind: PopupKind::Files,
        anchor: (row, before[..start + at].chars().count()),
        query: query.to_string(),
    })
}

/// The command name being typed (`/mo`), or the value after a command that offers values
/// (`/model de`).
fn command_word(before: &str) -> Option<Word> {
    let rest = &before[1..];
    let Some((name, value)) = rest.split_once(' ') else {
        return (!rest.contains(char::is_whitespace)).then(|| Word {
            kind: PopupKind::Commands,
            anchor: (0, 0),
            query: rest.to_string(),
        });
    };
    let command = commands::find(name)?;
    if command.values == commands::Values::None || value.contains(char::is_whitespace) {
        return None;
    }
    Some(Word {
        kind: PopupKind::Values(command.name),
        anchor: (0, name.chars().count() + 2),
        query: value.to_string(),
    })
}
