//! The API key dialog: its keys as pure (context, key) -> action rows and (state, action) ->
//! state and effects, what the check and the save report, and how it is drawn (masked).

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentEvent, TurnOutcome};
use crate::llm::KeyCheck;
use crate::secrets::Secret;
use crate::tui::keymap::{Action, KeyContext, map_key, map_paste};
use crate::tui::state::{EntryKind, Focus, KeyStage, Overlay, OverlayKind, State};
use crate::tui::update::{self, Effect, KeyReport};
use crossterm::event::KeyCode;

const PATH: &str = "/home/me/.config/miniclaw/.env";
const KEY: &str = "sk-0123456789abcdef4242";

/// A state without a key, the dialog open as at start.
fn no_key() -> State {
    let mut s = state();
    s.key_file = PATH.into();
    s.key_set = false;
    update::open_key_dialog(&mut s);
    s
}

/// Presses `code` in the dialog, returning the effects.
fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    let action = map_key(&update::key_context(s, Instant::now()), k(code, NONE));
    update::apply(s, action, Instant::now())
}

/// Types `text` a key at a time.
fn type_text(s: &mut State, text: &str) {
    for c in text.chars() {
        assert!(press(s, KeyCode::Char(c)).is_empty());
    }
}

/// Types `KEY` and presses Enter: the check is asked for.
fn typed_and_checking() -> State {
    let mut s = no_key();
    type_text(&mut s, KEY);
    let fx = press(&mut s, KeyCode::Enter);
    assert_eq!(fx, vec![Effect::CheckKey(Secret::new(KEY))]);
    assert_eq!(s.overlay.key_dialog().unwrap().stage, KeyStage::Checking);
    s
}

fn report_check(s: &mut State, key: &str, check: KeyCheck) {
    update::on_key_report(
        s,
        KeyReport::Checked {
            key: Secret::new(key),
            check,
        },
    );
}

/// No entry, notice, prompt, flash or input anywhere holds the key.
fn assert_key_nowhere(s: &State) {
    for e in &s.view.entries {
        assert!(!e.text.contains(KEY), "an entry shows the key: {}", e.text);
    }
    assert!(s.composer.prompt_history.iter().all(|p| !p.contains(KEY)));
    assert!(!s.composer.input_text().contains(KEY));
    assert!(s.flash.as_ref().is_none_or(|(t, _)| !t.contains(KEY)));
}

#[test]
fn the_dialog_takes_every_key_but_esc_and_ctrl_c() {
    let c = KeyContext {
        overlay: OverlayKind::Key,
        ..update::key_context(&state(), Instant::now())
    };
    let rows = [
        (k(KeyCode::Esc, NONE), Action::CloseOverlay),
        (k(KeyCode::Char('c'), CTRL), Action::ClearInput),
        (
            k(KeyCode::Char('a'), NONE),
            Action::KeyDialog(k(KeyCode::Char('a'), NONE)),
        ),
        (
            k(KeyCode::Enter, NONE),
            Action::KeyDialog(k(KeyCode::Enter, NONE)),
        ),
        (
            k(KeyCode::F(2), NONE),
            Action::KeyDialog(k(KeyCode::F(2), NONE)),
        ),
        (
            k(KeyCode::Char('y'), NONE),
            Action::KeyDialog(k(KeyCode::Char('y'), NONE)),
        ),
    ];
    for (key, want) in rows {
        assert_eq!(map_key(&c, key), want, "{key:?}");
    }
    assert_eq!(
        map_paste(&c, "sk-1".into()),
        Action::KeyDialogPaste(Secret::new("sk-1"))
    );
}

#[test]
fn typing_backspace_and_ctrl_u_edit_the_key_but_never_the_input() {
    let mut s = no_key();
    type_text(&mut s, "sk-ab");
    assert_eq!(s.overlay.key_dialog().unwrap().typed.expose(), "sk-ab");
    press(&mut s, KeyCode::Backspace);
    assert_eq!(s.overlay.key_dialog().unwrap().typed.expose(), "sk-a");
    // A space is no part of a key: left out, with a note.
    press(&mut s, KeyCode::Char(' '));
    assert_eq!(s.overlay.key_dialog().unwrap().typed.expose(), "sk-a");
    assert!(
        s.overlay
            .key_dialog()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("a space")
    );
    press(&mut s, KeyCode::Char('b'));
    assert_eq!(
        s.overlay.key_dialog().unwrap().note,
        None,
        "the next good key clears the note"
    );
    let action = map_key(
        &update::key_context(&s, Instant::now()),
        k(KeyCode::Char('u'), CTRL),
    );
    update::apply(&mut s, action, Instant::now());
    assert!(s.overlay.key_dialog().unwrap().typed.is_empty());
    assert!(
        s.composer.input_empty(),
        "nothing went to the prompt editor"
    );
    assert_eq!(s.focus, Focus::Input);
}

#[test]
fn enter_on_nothing_asks_for_the_key_and_checks_nothing() {
    let mut s = no_key();
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert_eq!(s.overlay.key_dialog().unwrap().stage, KeyStage::Entry);
    assert!(
        s.overlay
            .key_dialog()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("Type or paste")
    );
}

#[test]
fn a_paste_takes_the_key_from_a_line_of_a_env_file() {
    let mut s = no_key();
    update::apply(
        &mut s,
        Action::KeyDialogPaste(Secret::new(format!(
            "  export DEEPSEEK_API_KEY=\"{KEY}\"\n"
        ))),
        Instant::now(),
    );
    assert_eq!(s.overlay.key_dialog().unwrap().typed.expose(), KEY);
    // A paste with a character no key has adds nothing.
    let mut s = no_key();
    update::apply(
        &mut s,
        Action::KeyDialogPaste(Secret::new("sk-1 sk-2")),
        Instant::now(),
    );
    assert!(s.overlay.key_dialog().unwrap().typed.is_empty());
    assert!(
        s.overlay
            .key_dialog()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("Nothing was pasted")
    );
}

#[test]
fn while_checking_keys_wait_and_esc_walks_away() {
    let mut s = typed_and_checking();
    type_text(&mut s, "xyz");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert_eq!(s.overlay.key_dialog().unwrap().typed.expose(), KEY);
    let t0 = Instant::now();
    update::apply(&mut s, Action::CloseOverlay, t0);
    assert_eq!(s.overlay, Overlay::None);
    assert!(
        s.overlay.key_dialog().is_none(),
        "the typed key goes with the dialog"
    );
    let (hint, _) = s.flash.clone().unwrap();
    assert!(hint.contains("/key") && hint.contains(PATH), "{hint}");
    // The answer to the abandoned check changes nothing.
    report_check(&mut s, KEY, KeyCheck::Accepted);
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn a_refused_key_is_typed_again() {
    let mut s = typed_and_checking();
    report_check(&mut s, "sk-another", KeyCheck::Accepted);
    assert_eq!(
        s.overlay.key_dialog().unwrap().stage,
        KeyStage::Checking,
        "not this key's answer"
    );
    report_check(&mut s, KEY, KeyCheck::Refused { status: 401 });
    assert_eq!(s.overlay.key_dialog().unwrap().stage, KeyStage::Entry);
    assert!(s.overlay.key_dialog().unwrap().typed.is_empty());
    assert!(
        s.overlay
            .key_dialog()
            .unwrap()
            .note
            .as_deref()
            .unwrap()
            .contains("refused")
    );
    assert!(matches!(s.overlay, Overlay::Key(_)));
}

#[test]
fn an_accepted_key_is_saved_with_y() {
    let mut s = typed_and_checking();
    report_check(&mut s, KEY, KeyCheck::Accepted);
    assert!(matches!(
        s.overlay.key_dialog().unwrap().stage,
        KeyStage::Confirm { .. }
    ));
    // Only y and n answer.
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    let fx = press(&mut s, KeyCode::Char('y'));
    assert_eq!(
        fx,
        vec![Effect::UseKey {
            key: Secret::new(KEY),
            save: true
        }]
    );
    assert_eq!(s.overlay.key_dialog().unwrap().stage, KeyStage::Saving);
    update::on_key_report(&mut s, KeyReport::Saved(Ok(())));
    assert_eq!(s.overlay, Overlay::None);
    assert!(s.key_set);
    let last = s.view.entries.last().unwrap();
    assert_eq!(last.kind, EntryKind::Notice);
    assert!(last.text.contains(PATH), "{}", last.text);
    assert_key_nowhere(&s);
}

#[test]
fn a_failed_save_says_so_and_the_key_holds_for_this_run() {
    let mut s = typed_and_checking();
    report_check(
        &mut s,
        KEY,
        KeyCheck::Unchecked {
            reason: "could not connect to http://127.0.0.1:9".into(),
        },
    );
    press(&mut s, KeyCode::Char('Y'));
    update::on_key_report(
        &mut s,
        KeyReport::Saved(Err(format!(
            "could not write {PATH}: Read-only file system"
        ))),
    );
    assert_eq!(s.overlay, Overlay::None);
    let last = s.view.entries.last().unwrap();
    assert_eq!(last.kind, EntryKind::Error);
    assert!(last.text.contains("this run only") && last.text.contains(PATH));
    assert_key_nowhere(&s);
}

#[test]
fn n_uses_the_key_for_this_run_only() {
    let mut s = typed_and_checking();
    report_check(&mut s, KEY, KeyCheck::Accepted);
    let fx = press(&mut s, KeyCode::Char('n'));
    assert_eq!(
        fx,
        vec![Effect::UseKey {
            key: Secret::new(KEY),
            save: false
        }]
    );
    assert_eq!(s.overlay, Overlay::None);
    assert!(s.key_set);
    let last = s.view.entries.last().unwrap();
    assert!(last.text.contains("this run only") && last.text.contains(PATH));
    assert_key_nowhere(&s);
}

#[test]
fn slash_key_opens_the_dialog_and_is_listed() {
    let mut s = state();
    let t0 = Instant::now();
    assert!(send(&mut s, t0, "/key").is_empty());
    assert!(matches!(s.overlay, Overlay::Key(_)));
    let mut s = state();
    send(&mut s, t0, "/nope");
    assert!(s.view.entries.last().unwrap().text.contains("/key"));
}

#[test]
fn a_turn_that_failed_for_want_of_a_key_opens_the_dialog_again() {
    let t0 = Instant::now();
    let mut s = no_key();
    update::apply(&mut s, Action::CloseOverlay, t0);
    send(&mut s, t0, "hello");
    let failed = |s: &mut State| {
        feed(
            s,
            t0,
            vec![
                AgentEvent::Error {
                    message: crate::secrets::missing_key_message(),
                },
                AgentEvent::TurnFinished {
                    outcome: TurnOutcome::Failed(crate::events::FailCause::MissingKey),
                    usage: None,
                    last_usage: None,
                },
            ],
        )
    };
    failed(&mut s);
    assert!(matches!(s.overlay, Overlay::Key(_)));
    // A replayed session's failed turn (never busy) opens nothing.
    let mut s = no_key();
    update::apply(&mut s, Action::CloseOverlay, t0);
    failed(&mut s);
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn the_key_is_drawn_masked_and_a_checked_one_shows_its_last_four() {
    let t0 = Instant::now();
    let mut s = no_key();
    type_text(&mut s, KEY);
    let screen = render(&mut s, 100, 24, t0);
    assert!(!screen.contains("sk-"), "{screen}");
    assert!(screen.contains(&"•".repeat(KEY.len())), "{screen}");
    assert!(
        screen.contains("no API key: /key"),
        "the status line says so"
    );
    press(&mut s, KeyCode::Enter);
    report_check(&mut s, KEY, KeyCheck::Accepted);
    let screen = render(&mut s, 100, 24, t0);
    assert!(!screen.contains("sk-") && !screen.contains("abcdef"));
    assert!(screen.contains(&format!("{}4242", "•".repeat(KEY.len() - 4))));
    // A short key never shows any of itself.
    let mut s = no_key();
    type_text(&mut s, "sk-short");
    press(&mut s, KeyCode::Enter);
    report_check(&mut s, "sk-short", KeyCheck::Accepted);
    let screen = render(&mut s, 100, 24, t0);
    assert!(!screen.contains("short") && screen.contains("••••••••"));
    // In a narrow terminal the mask is cut at the front.
    let mut s = no_key();
    type_text(&mut s, &"a".repeat(200));
    let screen = render(&mut s, 40, 24, t0);
    assert!(screen.contains("…•"), "{screen}");
}

#[test]
fn dialog_asking_for_the_key() {
    let mut s = no_key();
    s.view.entries.clear();
    s.view.push(
        EntryKind::Notice,
        format!("No DeepSeek API key: set DEEPSEEK_API_KEY in {PATH} (the recommended place)."),
    );
    type_text(&mut s, "sk-12345");
    press(&mut s, KeyCode::Char('$'));
    insta::assert_snapshot!(render(&mut s, 100, 24, Instant::now()));
}

#[test]
fn dialog_offering_to_save_an_unchecked_key() {
    let mut s = typed_and_checking();
    report_check(
        &mut s,
        KEY,
        KeyCheck::Unchecked {
            reason: "network error: could not connect to https://api.deepseek.com".into(),
        },
    );
    insta::assert_snapshot!(render(&mut s, 100, 24, Instant::now()));
}

#[test]
fn the_dialog_says_where_a_key_comes_from() {
    let mut s = no_key();
    let screen = render(&mut s, 100, 30, Instant::now());
    assert!(
        screen.contains("platform.deepseek.com/api_keys"),
        "{screen}"
    );
}

#[test]
fn the_missing_key_notice_and_error_go_once_the_key_is_saved() {
    let t0 = Instant::now();
    let mut s = no_key();
    let missing = crate::secrets::missing_key_message();
    // As at start: the notice; then a turn that failed for want of the key.
    s.view.push(EntryKind::Notice, missing.clone());
    s.view.push(
        EntryKind::Notice,
        "Read project instructions from AGENTS.md",
    );
    update::apply(&mut s, Action::CloseOverlay, t0);
    send(&mut s, t0, "hello");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::Error {
                message: missing.clone(),
            },
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Failed(crate::events::FailCause::MissingKey),
                usage: None,
                last_usage: None,
            },
        ],
    );
    let before = render(&mut s, 120, 30, t0);
    assert!(before.contains("No DeepSeek API key"), "{before}");
    update::on_key_report(&mut s, KeyReport::Saved(Ok(())));
    let after = render(&mut s, 120, 30, t0);
    assert!(!after.contains("No DeepSeek API key"), "{after}");
    assert!(after.contains("Saved the key to"), "{after}");
    // What else was said stays.
    assert!(after.contains("Read project instructions"), "{after}");
    assert!(after.contains("hello"), "{after}");
}
