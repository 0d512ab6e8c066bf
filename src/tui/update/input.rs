//! The prompt editor: sending, long pastes as markers, recalling earlier prompts, clearing.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent};

use super::effect::{Effect, flash};
use super::slash;
use crate::agent::AgentCommand;
use crate::tui::keymap::LineEdit;
use crate::tui::paste;
use crate::tui::state::{Focus, State};

pub(super) fn send(state: &mut State, now: Instant, effects: &mut Vec<Effect>) {
    let mut text = state.composer.input_expanded();
    // After a turn stopped at its step limit, Enter alone goes on for another round.
    if text.trim().is_empty() && state.status.go_on && !state.busy() {
        text = "continue".to_string();
    }
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    state.status.go_on = false;
    if state.view.plans.draft() && !trimmed.starts_with('/') && !state.busy() {
        return super::plan::run(state, &text, now, effects);
    }
    if let Some(command) = trimmed.strip_prefix('/') {
        let command = command.to_string();
        // A command that cannot run during a turn stays in the input for later.
        if state.busy() && slash::waits_for_the_turn(state, &command) {
            flash(
                state,
                now,
                "That command runs when the turn ends: it stays here, press Enter then",
            );
            return;
        }
        state.composer.reset_input();
        // Another command takes the input's place: a plan waiting there is set aside.
        super::plan::set_aside(state);
        slash::slash(state, &command, now, effects);
        return;
    }
    if state.busy() {
        // Sent when the turn ends, in order; shown as pending meanwhile.
        state.composer.prompt_history.push(text.clone());
        state.composer.history_pos = None;
        state.composer.reset_input();
        state.composer.queued.push(text);
        flash(
            state,
            now,
            "Queued: it is sent when this turn ends (Up edits it, Esc removes it)",
        );
        return;
    }
    state.composer.prompt_history.push(text.clone());
    state.composer.history_pos = None;
    state.composer.reset_input();
    // The prompt shows when the agent starts its turn (`TurnStarted`, within a moment); the
    // state is busy from now on, so a second Enter is not a second prompt.
    state.status.sent(now);
    effects.push(Effect::Command(AgentCommand::Prompt(text)));
}

/// Ctrl+C while idle: clears the input (Up brings it back) and arms the second press to quit.
pub(super) fn clear(state: &mut State, now: Instant) {
    if state.composer.input_empty() {
        flash(state, now, "Press Ctrl+C again within 2 s to quit");
    } else {
        // The cleared text can be recalled with Up, like a sent prompt.
        let text = state.composer.input_expanded();
        state.composer.prompt_history.push(text);
        super::plan::set_aside(state);
        flash(
            state,
            now,
            "Input cleared (Up brings it back) · Ctrl+C again quits",
        );
    }
    state.composer.reset_input();
    state.composer.history_pos = None;
    state.composer.last_ctrl_c = Some(now);
}

/// A key typed into the input (a paste marker is deleted whole).
pub(super) fn edit(state: &mut State, key: KeyEvent) {
    state.focus = Focus::Input;
    state.composer.history_pos = None;
    if !delete_paste(state, key) {
        state.composer.input.input(key);
    }
}

/// A readline edit of the input; undo and redo are the editor's own.
pub(super) fn line_edit(state: &mut State, edit: LineEdit) {
    state.focus = Focus::Input;
    state.composer.history_pos = None;
    super::line_edit::apply(&mut state.composer.input, edit);
}

/// Inserts a paste; more than [`paste::FOLD_LINES`] lines stand in the input as one marker.
pub(super) fn paste(state: &mut State, text: &str) {
    state.focus = Focus::Input;
    state.composer.history_pos = None;
    // Terminals send pasted newlines as CR.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines = text.trim_end_matches('\n').split('\n').count();
    if lines <= paste::FOLD_LINES {
        state.composer.input.insert_str(text);
        return;
    }
    let marker = paste::marker(lines, &state.composer.pastes);
    state.composer.input.insert_str(&marker);
    state.composer.pastes.push(paste::Paste { marker, text });
}

/// Backspace just after a paste marker, or Delete just before one, removes the whole marker
/// and its paste. Returns whether it did.
fn delete_paste(state: &mut State, key: KeyEvent) -> bool {
    if state.composer.pastes.is_empty() || !key.modifiers.is_empty() {
        return false;
    }
    let ratatui_textarea::DataCursor(row, col) = state.composer.input.cursor();
    let line = state
        .composer
        .input
        .lines()
        .get(row)
        .cloned()
        .unwrap_or_default();
    let found = match key.code {
        KeyCode::Backspace => paste::ending_at(&line, col, &state.composer.pastes),
        KeyCode::Delete => paste::starting_at(&line, col, &state.composer.pastes),
        _ => None,
    };
    let Some(i) = found else {
        return false;
    };
    let removed = state.composer.pastes.remove(i);
    let chars = removed.marker.chars().count();
    if key.code == KeyCode::Backspace {
        for _ in 0..chars {
            state
                .composer
                .input
                .move_cursor(ratatui_textarea::CursorMove::Back);
        }
    }
    state.composer.input.delete_str(chars);
    true
}

pub(super) fn recall(state: &mut State, direction: isize) {
    if state.composer.prompt_history.is_empty() {
        return;
    }
    let len = state.composer.prompt_history.len() as isize;
    let current = match state.composer.history_pos {
        Some(p) => p as isize,
        None => {
            if direction > 0 {
                return;
            }
            state.composer.draft = state.composer.input_text();
            len
        }
    };
    let next = current + direction;
    if next < 0 {
        return;
    }
    if next >= len {
        state.composer.history_pos = None;
        let draft = std::mem::take(&mut state.composer.draft);
        state.composer.set_input(&draft);
        return;
    }
    state.composer.history_pos = Some(next as usize);
    let text = state.composer.prompt_history[next as usize].clone();
    state.composer.set_input(&text);
}

/// Up on an empty input while messages wait: the last one comes back to be edited.
pub(super) fn edit_queued(state: &mut State) {
    if let Some(text) = state.composer.queued.pop() {
        state.composer.set_input(&text);
        state.focus = Focus::Input;
    }
}

/// Esc while messages wait: the last one is removed.
pub(super) fn drop_queued(state: &mut State, now: Instant) {
    if state.composer.queued.pop().is_some() {
        flash(
            state,
            now,
            "Queued message removed (Esc again interrupts the turn)",
        );
    }
}
