//! The approval dialog: what it shows (the tool, its arguments, the coloured diff, "k of n"),
//! its keys (y, a, n or Esc then a reason, Ctrl+C), and the mode (Shift+Tab, /approval).

use std::time::{Duration, Instant};

use crossterm::event::KeyCode;

use super::common::*;
use crate::agent::AgentEvent;
use crate::approval::{ApprovalMode, ApprovalRequest, Decision};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::{Overlay, State};
use crate::tui::update::{self, Effect, key_context};

/// A key pressed well after the dialog appeared (past the answer grace): each press a second
/// after the one before, as the next dialog has a grace of its own.
fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    static SECONDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let later = SECONDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let now = Instant::now() + Duration::from_secs(later);
    let action = map_key(&key_context(s, now), k(code, NONE));
    update::apply(s, action, now)
}

fn request(id: &str, position: usize, of: usize) -> ApprovalRequest {
    ApprovalRequest {
        id: id.into(),
        name: "write_text_file".into(),
        arguments: r#"{"relative_path":"hello.txt","content":"new text\n"}"#.into(),
        diff: Some(crate::diff::unified(
            "hello.txt",
            Some("keep\nold text\n"),
            Some("keep\nnew text\n"),
        )),
        position,
        of,
        configuration: false,
        command: None,
    }
}

fn asking(s: &mut State, requests: Vec<ApprovalRequest>) {
    send(s, Instant::now(), "write it");
    let events = requests
        .into_iter()
        .map(AgentEvent::ApprovalRequested)
        .collect();
    feed(s, Instant::now(), events);
}

#[test]
fn the_dialog_shows_the_call_and_its_coloured_diff() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 2), request("c2", 2, 2)]);
    assert_eq!(s.overlay, Overlay::Approval);
    let screen = render(&mut s, 90, 24, Instant::now());
    insta::assert_snapshot!(screen);
    let backend = render_backend(&mut s, 90, 24, Instant::now());
    let buffer = backend.buffer();
    let row_of = |text: &str| {
        (0..buffer.area.height)
            .find(|&y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .contains(text)
            })
            .unwrap()
    };
    let colour = |text: &str| {
        let y = row_of(text);
        let x = (0..buffer.area.width)
            .find(|&x| buffer[(x, y)].symbol() == text.chars().next().unwrap().to_string())
            .unwrap();
        buffer[(x, y)].fg
    };
    assert_eq!(colour("+new text"), s.theme.success.fg.unwrap());
    assert_eq!(colour("-old text"), s.theme.error.fg.unwrap());
}

#[test]
fn yes_yes_to_the_tool_and_no_with_a_reason_answer_in_turn() {
    let mut s = state();
    asking(
        &mut s,
        vec![
            request("c1", 1, 3),
            request("c2", 2, 3),
            request("c3", 3, 3),
        ],
    );
    assert_eq!(
        press(&mut s, KeyCode::Char('y')),
        vec![Effect::Answer("c1".into(), Decision::Approve)]
    );
    assert_eq!(
        press(&mut s, KeyCode::Char('a')),
        vec![Effect::Answer("c2".into(), Decision::ApproveTool)]
    );
    assert!(
        press(&mut s, KeyCode::Char('n')).is_empty(),
        "a reason may follow"
    );
    for c in "not now".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    assert!(
        render(&mut s, 90, 24, Instant::now())
            .contains("Why not? (Enter sends, may be empty) not now")
    );
    assert_eq!(
        press(&mut s, KeyCode::Enter),
        vec![Effect::Answer(
            "c3".into(),
            Decision::Deny("not now".into())
        )]
    );
    assert_eq!(s.overlay, Overlay::None);
    assert!(s.approvals.is_empty());
}

#[test]
fn a_key_pressed_as_the_dialog_appears_does_not_answer_it_nor_does_it_cover_another_dialog() {
    let mut s = state();
    send(&mut s, Instant::now(), "write it");
    // The person is typing a follow-up when the call arrives: "and" must not approve it.
    let t0 = Instant::now();
    feed(
        &mut s,
        t0,
        vec![AgentEvent::ApprovalRequested(request("c1", 1, 1))],
    );
    for c in ['a', 'n', 'd', 'y'] {
        let action = map_key(&key_context(&s, t0), k(KeyCode::Char(c), NONE));
        assert_eq!(action, Action::None, "{c} answered a dialog just shown");
    }
    assert_eq!(s.approvals.len(), 1);
    // Another dialog open (here the key dialog) is not taken over; the call waits for it.
    let mut s = state();
    send(&mut s, t0, "write it");
    send(&mut s, t0, "/key");
    assert!(matches!(s.overlay, Overlay::Key(_)));
    feed(
        &mut s,
        t0,
        vec![AgentEvent::ApprovalRequested(request("c1", 1, 1))],
    );
    assert!(matches!(s.overlay, Overlay::Key(_)));
    update::apply(&mut s, Action::CloseOverlay, t0);
    assert_eq!(
        s.overlay,
        Overlay::Approval,
        "shown once the other dialog closed"
    );
}

#[test]
fn the_turn_ending_takes_its_waiting_calls_away() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 2), request("c2", 2, 2)]);
    let ended = AgentEvent::TurnFinished {
        outcome: crate::agent::TurnOutcome::Interrupted,
        usage: None,
        last_usage: None,
    };
    feed(&mut s, Instant::now(), vec![ended]);
    assert!(s.approvals.is_empty());
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn a_long_argument_is_wrapped_whole_not_cut() {
    let mut s = state();
    let url = format!(
        "https://docs.example/{}?q=the-end-of-the-url",
        "x".repeat(150)
    );
    let mut r = request("c1", 1, 1);
    r.name = "fetch_web_page".into();
    r.arguments = serde_json::json!({ "url": url }).to_string();
    r.diff = None;
    asking(&mut s, vec![r]);
    let screen = render(&mut s, 90, 24, Instant::now());
    assert!(screen.contains("the-end-of-the-url"), "{screen}");
}

#[test]
fn esc_denies_without_a_reason_and_ctrl_c_denies_all_and_interrupts() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 2), request("c2", 2, 2)]);
    press(&mut s, KeyCode::Esc);
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        vec![Effect::Answer("c1".into(), Decision::Deny(String::new()))]
    );
    let now = Instant::now() + Duration::from_secs(3600);
    let action = map_key(&key_context(&s, now), k(KeyCode::Char('c'), CTRL));
    assert_eq!(action, Action::Interrupt);
    assert_eq!(update::apply(&mut s, action, now), vec![Effect::Interrupt]);
    assert!(s.approvals.is_empty());
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn shift_tab_and_slash_approval_change_the_mode_shown_in_the_status_line() {
    let mut s = state();
    assert!(!render(&mut s, 100, 20, Instant::now()).contains("approval:"));
    let now = Instant::now();
    let action = map_key(&key_context(&s, now), k(KeyCode::BackTab, SHIFT));
    assert_eq!(
        update::apply(&mut s, action, now),
        vec![Effect::SetApproval(ApprovalMode::Ask, s.folder.clone())]
    );
    let screen = render(&mut s, 100, 20, now);
    // Said once: the status line's mode, and the flash only says what it does.
    assert_eq!(screen.matches("approval: ask").count(), 1, "{screen}");
    assert!(
        screen.contains("changes, commands and the web ask first"),
        "{screen}"
    );
    assert_eq!(
        send(&mut s, now, "/approval read-only"),
        vec![Effect::SetApproval(
            ApprovalMode::ReadOnly,
            s.folder.clone()
        )]
    );
    let screen = render(&mut s, 100, 20, now);
    assert_eq!(screen.matches("approval: read-only").count(), 1, "{screen}");
    assert!(send(&mut s, now, "/approval sometimes").is_empty());
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("the modes are auto, ask and read-only")
    );
}

#[test]
fn an_approved_call_is_marked_in_the_conversation() {
    let mut s = state();
    send(&mut s, Instant::now(), "go");
    let result =
        serde_json::json!({"ok": true, "tool": "write_text_file", "approved_by_user": true});
    feed(
        &mut s,
        Instant::now(),
        vec![
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "write_text_file".into(),
                arguments: r#"{"relative_path":"a.txt","content":"x"}"#.into(),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "write_text_file".into(),
                result: result.into(),
                outcome: crate::events::CallOutcome::Ok,
                approved: true,
                duration: Some(std::time::Duration::from_millis(4)),
            },
        ],
    );
    assert!(render(&mut s, 100, 20, Instant::now()).contains("✓ approved · 4 ms"));
}

#[test]
fn slash_approval_with_no_value_chosen_shows_the_mode_and_changes_nothing() {
    let mut s = state();
    s.approval_mode = ApprovalMode::Ask;
    for c in "/approval ".chars() {
        press(&mut s, KeyCode::Char(c));
    }
    assert!(s.composer.popup.is_some(), "the modes are offered");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(
        !effects.iter().any(|e| matches!(e, Effect::SetApproval(..))),
        "{effects:?}"
    );
    assert_eq!(s.approval_mode, ApprovalMode::Ask);
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .starts_with("Approval: ask")
    );
}

#[test]
fn the_title_names_the_action_and_the_path() {
    let titled = |name: &str, arguments: &str| {
        let mut s = state();
        let mut r = request("c1", 1, 1);
        r.name = name.into();
        r.arguments = arguments.into();
        if !name.contains("file") {
            r.diff = None;
        }
        asking(&mut s, vec![r]);
        render(&mut s, 90, 24, Instant::now())
    };
    let write = titled(
        "write_text_file",
        r#"{"relative_path":"big0.txt","content":"x"}"#,
    );
    assert!(write.contains("╔ Write big0.txt? ═"), "{write}");
    let edit = titled(
        "replace_text_in_file",
        r#"{"relative_path":"src/a.rs","old_text":"a","new_text":"b"}"#,
    );
    assert!(edit.contains("╔ Edit src/a.rs? ═"), "{edit}");
    let shell = titled("run_shell_command", r#"{"command":"ls"}"#);
    assert!(shell.contains("╔ Run run_shell_command? ═"), "{shell}");
    // A command's arguments are what it does: they are shown, and no key folds them.
    assert!(shell.contains("\"command\": \"ls\""), "{shell}");
    assert!(!shell.contains("v shows"), "{shell}");
}

#[test]
fn a_file_tools_diff_comes_first_and_its_arguments_fold_away_until_v() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 1)]);
    let screen = render(&mut s, 90, 24, Instant::now());
    let diff_at = screen.find("+new text").expect("the diff");
    let folded_at = screen
        .find("▸ arguments: 4 lines (v shows them)")
        .expect("folded");
    assert!(diff_at < folded_at, "{screen}");
    assert!(!screen.contains("\"content\""), "{screen}");
    assert!(screen.contains("v shows the arguments"), "{screen}");
    assert!(
        press(&mut s, KeyCode::Char('v')).is_empty(),
        "v answers nothing"
    );
    let shown = render(&mut s, 90, 30, Instant::now());
    assert!(shown.contains("\"content\": \"new text\\n\""), "{shown}");
    assert!(shown.contains("v hides the arguments"), "{shown}");
    assert_eq!(s.overlay, Overlay::Approval);
    press(&mut s, KeyCode::Char('v'));
    assert!(!render(&mut s, 90, 30, Instant::now()).contains("\"content\""));
}

#[test]
fn the_key_hints_wrap_on_a_narrow_screen() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 1)]);
    let screen = render(&mut s, 60, 20, Instant::now());
    // Every hint is there, none cut with an ellipsis.
    for hint in [
        "y yes",
        "a yes to this tool for the session",
        "n or Esc no, then a reason",
        "v shows the arguments",
        "Ctrl+C stop",
    ] {
        let flat: String = screen
            .lines()
            .map(|l| l.trim_matches(|c| c == '"' || c == '║' || c == '│' || c == ' '))
            .collect::<Vec<_>>()
            .join(" ");
        assert!(flat.contains(hint), "{hint} in\n{screen}");
    }
    assert!(!screen.contains("…\u{2551}"), "{screen}");
    insta::assert_snapshot!(screen);
}
