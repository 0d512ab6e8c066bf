//! What a finished call returned, shown under its call line in the conversation (at 80×24 the
//! side panes are hidden, so this is the only place it can be seen).

use std::time::Instant;

use super::common::*;
use crate::tui::keymap::Action;
use crate::tui::state::Focus;
use crate::tui::update;
use serde_json::json;

/// The conversation pane of a rendered screen (its first block, up to its bottom border, light
/// or heavy when focused; the side panes follow it).
fn conversation(screen: &str) -> String {
    let end = screen.find(['╰', '┗']).unwrap_or(screen.len());
    screen[..end].to_string()
}

fn shell(stdout: &str) -> Vec<crate::agent::AgentEvent> {
    tool_step(
        1,
        "c1",
        "run_shell_command",
        json!({"command": "ls"}),
        json!({"ok": true, "tool": "run_shell_command", "exit_code": 0, "stdout": stdout}),
        6,
    )
}

#[test]
fn a_shell_calls_first_lines_appear_under_its_call_line_and_enter_shows_all() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "list");
    let out: String = (1..=9).map(|i| format!("file{i}.txt\n")).collect();
    feed(&mut s, t0, shell(&out));
    let screen = conversation(&render(&mut s, 80, 24, t0));
    let lines: Vec<&str> = screen.lines().collect();
    let at = lines
        .iter()
        .position(|l| l.contains("run_shell_command"))
        .expect("call line");
    let below = lines[at + 1..].join("\n");
    assert!(below.contains("exit_code: 0"), "{screen}");
    assert!(below.contains("file2.txt"), "{screen}");
    assert!(!below.contains("file3.txt"), "{screen}");
    assert!(below.contains("… 7 more lines"), "{screen}");
    // Enter on the conversation expands the previews in view, and folds them again.
    s.focus = Focus::Conversation;
    update::apply(&mut s, Action::ToggleFold, t0);
    let whole = conversation(&render(&mut s, 80, 60, t0));
    assert!(whole.contains("file9.txt"), "{whole}");
    assert!(!whole.contains("more lines"), "{whole}");
    update::apply(&mut s, Action::ToggleFold, t0);
    let again = conversation(&render(&mut s, 80, 24, t0));
    assert!(again.contains("… 7 more lines"), "{again}");
    assert!(!again.contains("file9.txt"), "{again}");
}

#[test]
fn a_failed_call_shows_its_reason_only() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "read");
    feed(
        &mut s,
        t0,
        tool_step(
            1,
            "c1",
            "read_text_file",
            json!({"path": "nope.txt"}),
            json!({"ok": false, "tool": "read_text_file", "error": "no such file", "detail": "SECRET-DETAIL"}),
            2,
        ),
    );
    let screen = conversation(&render(&mut s, 80, 24, t0));
    assert!(screen.contains("✗ no such file"), "{screen}");
    assert!(!screen.contains("SECRET-DETAIL"), "{screen}");
    assert!(!screen.contains("more line"), "{screen}");
}

#[test]
fn escapes_in_tool_output_are_cleaned() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "cat");
    feed(
        &mut s,
        t0,
        shell("\u{1b}[31mred\u{1b}[0m\u{1b}]0;title\u{7}\n"),
    );
    let screen = conversation(&render(&mut s, 80, 24, t0));
    assert!(screen.contains("│ red"), "{screen}");
    assert!(!screen.contains("[31m"), "{screen}");
    assert!(!screen.contains('\u{1b}'), "{screen}");
    assert!(!screen.contains("title"), "{screen}");
}
