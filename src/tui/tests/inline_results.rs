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
    // A command that exited 0 says nothing of it: its output comes first.
    assert!(!below.contains("exit"), "{screen}");
    assert!(below.contains("│ file1.txt"), "{screen}");
    assert!(below.contains("file3.txt"), "{screen}");
    assert!(!below.contains("file4.txt"), "{screen}");
    assert!(below.contains("… 6 more lines"), "{screen}");
    // Enter on the conversation expands the previews in view, and folds them again.
    s.focus = Focus::Conversation;
    update::apply(&mut s, Action::ToggleFold, t0);
    let whole = conversation(&render(&mut s, 80, 60, t0));
    assert!(whole.contains("file9.txt"), "{whole}");
    assert!(!whole.contains("more lines"), "{whole}");
    update::apply(&mut s, Action::ToggleFold, t0);
    let again = conversation(&render(&mut s, 80, 24, t0));
    assert!(again.contains("… 6 more lines"), "{again}");
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

/// A write of `hello.txt` that replaced its three lines with one, as the agent tells it: the
/// change (made where the old content was known) just before the call's end.
fn overwrite(before: &str, after: &str) -> Vec<crate::agent::AgentEvent> {
    let mut events = tool_step(
        1,
        "w1",
        "write_text_file",
        json!({"relative_path": "hello.txt", "content": after}),
        json!({"ok": true, "tool": "write_text_file", "path": "hello.txt", "bytes_written": after.len()}),
        1,
    );
    let end = events.pop().expect("the call's end");
    events.push(crate::agent::AgentEvent::FileEdited {
        id: "w1".into(),
        diff: crate::diff::FileDiff::new("hello.txt", Some(before), Some(after)),
    });
    events.push(end);
    events
}

#[test]
fn a_file_change_shows_as_a_coloured_diff_under_its_call_line() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    feed(&mut s, t0, overwrite("one\ntwo\nthree\n", "hello\n"));
    let backend = render_backend(&mut s, 80, 24, t0);
    let screen = conversation(&backend.to_string());
    assert!(screen.contains("│ hello.txt: +1 \u{2212}3"), "{screen}");
    assert!(screen.contains("│ - one"), "{screen}");
    assert!(screen.contains("│ - three"), "{screen}");
    assert!(screen.contains("│ + hello"), "{screen}");
    // Not the result's fields: the diff says it.
    assert!(!screen.contains("bytes_written"), "{screen}");
    // Added green, removed red.
    let buffer = backend.buffer();
    // The colour of the cell where `needle` begins (one cell per character here).
    let style_of = |needle: &str| {
        let area = buffer.area;
        let spells = |x: u16, y: u16| {
            needle.chars().enumerate().all(|(i, c)| {
                x + (i as u16) < area.width && buffer[(x + i as u16, y)].symbol() == c.to_string()
            })
        };
        let (x, y) = (0..area.height)
            .flat_map(|y| (0..area.width).map(move |x| (x, y)))
            .find(|&(x, y)| spells(x, y))
            .expect("drawn");
        buffer[(x, y)].fg
    };
    assert_eq!(style_of("+ hello"), s.theme.success.fg.unwrap());
    assert_eq!(style_of("- two"), s.theme.error.fg.unwrap());
}

#[test]
fn a_long_change_is_folded_and_enter_shows_it_all() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    let after: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    feed(&mut s, t0, overwrite("old\n", &after));
    let screen = conversation(&render(&mut s, 80, 30, t0));
    assert!(screen.contains("hello.txt: +20 \u{2212}1"), "{screen}");
    assert!(screen.contains("+ line 5"), "{screen}");
    assert!(!screen.contains("+ line 6"), "{screen}");
    assert!(
        screen.contains("… 15 more lines (Enter shows all)"),
        "{screen}"
    );
    s.focus = Focus::Conversation;
    update::apply(&mut s, Action::ToggleFold, t0);
    let whole = conversation(&render(&mut s, 80, 40, t0));
    assert!(whole.contains("+ line 20"), "{whole}");
    assert!(!whole.contains("more lines"), "{whole}");
}
