//! The approval dialog: what it shows (the tool, its arguments, the coloured diff, "k of n"),
//! its keys (y, a, n or Esc then a reason, Ctrl+C), and the mode (Shift+Tab, /approval).

use std::time::Instant;

use crossterm::event::KeyCode;

use super::common::*;
use crate::agent::AgentEvent;
use crate::approval::{ApprovalMode, ApprovalRequest, Decision};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::{Overlay, State};
use crate::tui::update::{self, Effect, key_context};

fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    let now = Instant::now();
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
fn esc_denies_without_a_reason_and_ctrl_c_denies_all_and_interrupts() {
    let mut s = state();
    asking(&mut s, vec![request("c1", 1, 2), request("c2", 2, 2)]);
    press(&mut s, KeyCode::Esc);
    assert_eq!(
        press(&mut s, KeyCode::Esc),
        vec![Effect::Answer("c1".into(), Decision::Deny(String::new()))]
    );
    let now = Instant::now();
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
        vec![Effect::SetApproval(ApprovalMode::Ask)]
    );
    assert!(render(&mut s, 100, 20, now).contains("approval: ask"));
    assert_eq!(
        send(&mut s, now, "/approval read-only"),
        vec![Effect::SetApproval(ApprovalMode::ReadOnly)]
    );
    assert!(render(&mut s, 100, 20, now).contains("approval: read-only"));
    assert!(send(&mut s, now, "/approval sometimes").is_empty());
    assert!(
        s.entries
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
                result,
                duration: Some(std::time::Duration::from_millis(4)),
            },
        ],
    );
    assert!(render(&mut s, 100, 20, Instant::now()).contains("✓ approved · 4 ms"));
}
