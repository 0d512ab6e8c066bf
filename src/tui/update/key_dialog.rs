//! The API key dialog's keys and results: typing (masked), Enter to check the key, y / n to
//! save it or use it for this run only. Pure: the check and the save are effects, and what they
//! found comes back as a [`KeyReport`].

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::effect::{Effect, flash};
use crate::llm::KeyCheck;
use crate::secrets::Secret;
use crate::secrets::key_file::{KEY_VAR, MAX_KEY_CHARS, is_key_char};
use crate::tui::state::{EntryKind, KeyDialog, KeyStage, Overlay, State};

/// What the event loop found out for the dialog.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyReport {
    /// The check of `key` ended.
    Checked {
        /// The key checked (a result for a key no longer in the dialog is dropped).
        key: Secret,
        /// What the server said.
        check: KeyCheck,
    },
    /// Saving the key ended (`Err`: why it failed, naming the file).
    Saved(Result<(), String>),
}

/// Opens the dialog, empty.
pub fn open(state: &mut State) {
    state.overlay = Overlay::Key(KeyDialog::default());
}

/// Opens the dialog unless another overlay is open.
pub(super) fn open_if_no_overlay(state: &mut State) {
    if state.overlay.is_none() {
        open(state);
    }
}

/// Esc: the dialog goes, forgetting what was typed; without a key a hint says how to come back.
pub(super) fn dismiss(state: &mut State, now: Instant) {
    state.overlay = Overlay::None;
    if !state.key_set {
        let text = format!(
            "No API key yet: /key opens the dialog again, or set {KEY_VAR} in {}",
            state.key_file
        );
        flash(state, now, &text);
    }
}

/// A key pressed in the dialog.
pub(super) fn key(state: &mut State, key: KeyEvent, effects: &mut Vec<Effect>) {
    let Some(dialog) = state.overlay.key_dialog() else {
        return;
    };
    match dialog.stage {
        KeyStage::Entry => entry_key(state, key, effects),
        KeyStage::Confirm { .. } => confirm_key(state, key, effects),
        // Waiting for the check or the save: only Esc (handled by the keymap) does anything.
        KeyStage::Checking | KeyStage::Saving => {}
    }
}

fn entry_key(state: &mut State, key: KeyEvent, effects: &mut Vec<Effect>) {
    let Some(dialog) = state.overlay.key_dialog_mut() else {
        return;
    };
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    match key.code {
        KeyCode::Char('u') if ctrl => {
            dialog.typed = Secret::default();
            dialog.note = None;
        }
        KeyCode::Char(c) if !ctrl && !alt => match refusal(c, dialog.typed.chars()) {
            Some(why) => dialog.note = Some(typing_note(why)),
            None => {
                dialog.typed.push(c);
                dialog.note = None;
            }
        },
        KeyCode::Backspace => {
            dialog.typed.pop();
            dialog.note = None;
        }
        KeyCode::Enter if dialog.typed.is_empty() => {
            dialog.note = Some("Type or paste the key first (Esc closes).".into());
        }
        KeyCode::Enter => {
            dialog.stage = KeyStage::Checking;
            dialog.note = None;
            effects.push(Effect::CheckKey(dialog.typed.clone()));
        }
        _ => {}
    }
}

/// Why a character cannot be added to a key.
enum Refusal {
    /// The key is as long as a key may be.
    TooLong,
    /// No key has this character.
    Char(char),
}

/// Why `c` cannot be added to a key of `len` characters, if it cannot.
fn refusal(c: char, len: usize) -> Option<Refusal> {
    if len >= MAX_KEY_CHARS {
        Some(Refusal::TooLong)
    } else if is_key_char(c) {
        None
    } else {
        Some(Refusal::Char(c))
    }
}

/// The character as a sentence names it ("a space", "“$”").
fn char_name(c: char) -> String {
    match c {
        ' ' => "a space".into(),
        c if c.is_whitespace() => "a blank".into(),
        c if c.is_control() => "a control character".into(),
        c => format!("“{c}”"),
    }
}

/// The note for a typed character that was left out.
fn typing_note(why: Refusal) -> String {
    match why {
        Refusal::TooLong => format!("A key has at most {MAX_KEY_CHARS} characters."),
        Refusal::Char(c) => format!("Left out {}: no key has it.", char_name(c)),
    }
}

/// A paste: the key, with surrounding blanks and quotes and a `DEEPSEEK_API_KEY=` before it taken
/// off. Nothing is added when any character of it cannot be part of a key.
pub(super) fn paste(state: &mut State, text: &Secret) {
    let Some(dialog) = state.overlay.key_dialog_mut() else {
        return;
    };
    if dialog.stage != KeyStage::Entry {
        return;
    }
    let text = text.expose().trim();
    let text = text
        .strip_prefix("export ")
        .map_or(text, str::trim_start)
        .strip_prefix(KEY_VAR)
        .and_then(|rest| rest.trim_start().strip_prefix('='))
        .unwrap_or(text)
        .trim()
        .trim_matches(['"', '\'']);
    let mut typed = dialog.typed.clone();
    for c in text.chars() {
        if let Some(why) = refusal(c, typed.chars()) {
            dialog.note = Some(match why {
                Refusal::TooLong => {
                    format!("Nothing was pasted: a key has at most {MAX_KEY_CHARS} characters.")
                }
                Refusal::Char(c) => {
                    format!(
                        "Nothing was pasted: it holds {}, which no key has.",
                        char_name(c)
                    )
                }
            });
            return;
        }
        typed.push(c);
    }
    dialog.typed = typed;
    dialog.note = None;
}

fn confirm_key(state: &mut State, key: KeyEvent, effects: &mut Vec<Effect>) {
    let KeyCode::Char(c) = key.code else {
        return;
    };
    let Some(dialog) = state.overlay.key_dialog_mut() else {
        return;
    };
    let typed = dialog.typed.clone();
    match c.to_ascii_lowercase() {
        'y' => {
            dialog.stage = KeyStage::Saving;
            effects.push(Effect::UseKey {
                key: typed,
                save: true,
            });
        }
        'n' => {
            effects.push(Effect::UseKey {
                key: typed,
                save: false,
            });
            let text = format!(
                "The key is used for this run only. To keep it, set {KEY_VAR} in {} (or save it with /key).",
                state.key_file
            );
            close(state);
            state.key_set = true;
            state.view.push(EntryKind::Notice, text);
        }
        _ => {}
    }
}

/// Closes the dialog, forgetting what was typed.
fn close(state: &mut State) {
    state.overlay = Overlay::None;
}

/// Applies what the event loop found out.
pub fn on_report(state: &mut State, report: KeyReport) {
    match report {
        KeyReport::Checked { key, check } => checked(state, &key, check),
        KeyReport::Saved(result) => {
            let path = state.key_file.clone();
            if state
                .overlay
                .key_dialog()
                .is_some_and(|d| d.stage == KeyStage::Saving)
            {
                close(state);
            }
            // The key is in use either way (the event loop set it before saving): what said
            // it was missing (the start's notice, a turn's error) goes.
            state.key_set = true;
            let missing = crate::secrets::missing_key_message();
            state.view.remove_entries(|e| {
                matches!(e.kind, EntryKind::Notice | EntryKind::Error) && e.text == missing
            });
            match result {
                Ok(()) => state.view.push(
                    EntryKind::Notice,
                    format!(
                        "Saved the key to {path} (readable only by you). It is used from now on, and at every start."
                    ),
                ),
                Err(e) => state.view.push(
                    EntryKind::Error,
                    format!("The key was not saved: {e}. It is used for this run only."),
                ),
            };
        }
    }
}

fn checked(state: &mut State, key: &Secret, check: KeyCheck) {
    // A late answer to a check the person walked away from changes nothing.
    let Some(dialog) = state
        .overlay
        .key_dialog_mut()
        .filter(|d| d.stage == KeyStage::Checking && d.typed == *key)
    else {
        return;
    };
    match check {
        KeyCheck::Refused { status } => {
            dialog.stage = KeyStage::Entry;
            dialog.typed = Secret::default();
            dialog.note = Some(format!(
                "The model server refused this key ({status}). Type or paste it again."
            ));
        }
        check => dialog.stage = KeyStage::Confirm { check },
    }
}
