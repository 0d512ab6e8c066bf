//! End to end: what the screen shows of a turn at 80×24, where the side panes are hidden — the
//! real `miniclaw-tui` in a pseudo-terminal against the local scripted model server: a step's
//! reasoning as one line in the conversation that counts its seconds while it streams, says how
//! long it took after, and shows its text on Enter.

use crate::pty::{ENTER, Launch, Pty};
use crate::support;

use std::path::Path;

use support::{Gate, MockServer, SseBuilder};

/// The program in `dir` at 80×24.
fn start(dir: &Path, base_url: &str) -> Pty {
    Launch::ui(dir, base_url)
        .key("sk-screen")
        .size(24, 80)
        .start()
}

/// The conversation pane of the screen: up to its bottom border (the side panes below it show
/// the reasoning too, in a pane of their own).
fn conversation(screen: &str) -> String {
    screen
        .lines()
        .take_while(|l| !l.starts_with(['╰', '┗']))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn reasoning_is_a_line_that_counts_while_it_streams_and_enter_shows_it() {
    let gate = Gate::new();
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .reasoning(&[
                "First I weigh **the-bold-idea**.\n\n",
                "Then-a-second-thought.",
            ])
            .until(gate.until("the test to see the reasoning line count"))
            .content(&["reasoned-answer-done."])
            .finish("stop")
            .done()
            .build(),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("Ask anything");
    p.submit("think first");
    // While it reasons: one collapsed line, its seconds moving with the frame timer.
    p.wait_for("✻ Thinking… 0 s");
    p.wait_for("✻ Thinking… 1 s");
    let shown = conversation(&p.screen());
    assert!(
        !shown.contains("the-bold-idea"),
        "the reasoning is folded: {shown}"
    );
    gate.open();
    p.wait_for("reasoned-answer-done.");
    p.wait_until("the line saying how long it thought", |s| {
        s.contains("✻ Thought for ") && !s.contains("Thinking…")
    });
    p.wait_for("│ idle │");
    // Tab to the conversation (the side panes are hidden at 80 columns), Enter shows the text,
    // as markdown.
    p.send("\t");
    p.wait_until("the conversation focused", |s| s.contains("┏ Conversation"));
    p.send(ENTER);
    p.wait_until("the reasoning shown in the conversation", |s| {
        conversation(s).contains("Then-a-second-thought.")
    });
    let shown = conversation(&p.screen());
    assert!(shown.contains("First I weigh the-bold-idea."), "{shown}");
    assert!(!shown.contains("**"), "{shown}");
}

#[test]
fn a_resized_terminal_is_drawn_again_at_its_new_size() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let pty = start(dir.path(), &server.url());
    // The status line is the last row.
    let last_row = |rows: usize| {
        move |s: &str| {
            let lines: Vec<&str> = s.lines().collect();
            lines.len() == rows && lines[rows - 1].contains("F1 help")
        }
    };
    pty.wait_until("the status line on row 24 of 24", last_row(24));
    pty.resize(30, 100);
    // The panes are laid out again for the new width: the top border reaches its right edge.
    let top_border = |cols: usize| {
        move |s: &str| {
            s.lines()
                .next()
                .is_some_and(|top| top.chars().count() == cols && top.ends_with(['╮', '┓']))
        }
    };
    pty.wait_until("the status line on row 30 of 30", last_row(30));
    pty.wait_until("a top border 100 columns wide", top_border(100));
    pty.resize(20, 70);
    pty.wait_until("the status line on row 20 of 20", last_row(20));
    pty.wait_until("a top border 70 columns wide", top_border(70));
}
