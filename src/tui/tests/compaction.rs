//! Compaction on the screen: the context gauge warns before it comes (amber from 70%, red from
//! 90%, saying where it is), `/compact` runs like a turn, and a compaction is one folded line
//! whose summary Enter shows.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::events::Compaction;
use crate::tui::panes::status;
use crate::tui::state::Focus;
use crate::tui::update::{self, Effect};

fn usage(used: usize, compact_at: Option<usize>) -> AgentEvent {
    AgentEvent::ContextUsage {
        used,
        budget: 100_000,
        compact_at,
    }
}

/// The gauge's text and style as the status line draws it.
fn gauge(s: &crate::tui::state::State) -> (String, ratatui::style::Style) {
    let line = status::line(s, Instant::now(), 200);
    let span = line
        .spans
        .iter()
        .find(|span| span.content.starts_with("context "))
        .expect("the gauge is on the line");
    (span.content.to_string(), span.style)
}

#[test]
fn the_gauge_is_quiet_below_70_then_amber_then_red_and_says_where_compaction_is() {
    let t0 = Instant::now();
    let mut s = state();
    feed(&mut s, t0, vec![usage(45_000, Some(80_000))]);
    let (text, style) = gauge(&s);
    assert_eq!(text, "context 45%");
    assert_ne!(style, s.theme.warning);
    feed(&mut s, t0, vec![usage(72_000, Some(80_000))]);
    assert_eq!(
        gauge(&s),
        ("context 72% · compacts at 80%".into(), s.theme.warning)
    );
    feed(&mut s, t0, vec![usage(93_000, Some(80_000))]);
    assert_eq!(
        gauge(&s),
        ("context 93% · compacts at 80%".into(), s.theme.error)
    );
    // Compaction turned off: the way to free it is said instead.
    feed(&mut s, t0, vec![usage(93_000, None)]);
    assert_eq!(gauge(&s).0, "context 93% · /compact frees it");
    // A narrow line keeps the warning before the token counts.
    let narrow = status::line(&s, t0, 60).to_string();
    assert!(narrow.contains("context 93%"), "{narrow}");
}

fn compacted(turns: usize, automatic: bool) -> AgentEvent {
    AgentEvent::Compacted(Compaction {
        turns,
        automatic,
        summary: "# Earlier in this session (compacted)\n\n## Summary\n\n- **split** the parser"
            .into(),
        summary_tokens: 321,
        usage: None,
    })
}

#[test]
fn slash_compact_is_busy_until_its_summary_comes_and_then_one_folded_line_shows_it() {
    let t0 = Instant::now();
    let mut s = state();
    let effects = send(&mut s, t0, "/compact the test names");
    assert!(
        effects.contains(&Effect::Command(AgentCommand::Compact(Some(
            "the test names".into()
        ))))
    );
    assert!(s.busy());
    feed(
        &mut s,
        t0,
        vec![AgentEvent::Compacting {
            turns: 126,
            automatic: false,
        }],
    );
    let line = status::line(&s, t0, 120).to_string();
    assert!(line.contains("compacting 126 turns"), "{line}");
    feed(&mut s, t0, vec![compacted(126, false)]);
    assert!(!s.busy(), "the request is over");
    let screen = render(&mut s, 100, 30, t0);
    assert!(
        screen.contains("⇣ Compacted 126 turns · Enter shows the summary"),
        "{screen}"
    );
    assert!(!screen.contains("split"), "folded: {screen}");
    // Enter in the conversation shows the summary as markdown, with its size.
    s.focus = Focus::Conversation;
    update::apply(&mut s, crate::tui::keymap::Action::ToggleFold, t0);
    let screen = render(&mut s, 100, 30, t0);
    assert!(screen.contains("split the parser"), "{screen}");
    assert!(screen.contains("A summary of 321 tokens"), "{screen}");
    assert!(!screen.contains("**"), "rendered, not raw: {screen}");
}

#[test]
fn a_failed_compaction_and_a_trimmed_request_are_said_in_the_conversation() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "go on");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::CompactionFailed {
                reason: "the summary request failed: server error 500".into(),
                automatic: true,
            },
            AgentEvent::ContextTrimmed {
                dropped_turns: 3,
                shortened: 2,
            },
        ],
    );
    assert!(s.busy(), "an automatic one is part of the turn");
    let screen = render(&mut s, 120, 30, t0);
    assert!(screen.contains("Could not compact the session"), "{screen}");
    assert!(
        screen.contains("trimmed to fit the context window instead"),
        "{screen}"
    );
    assert!(screen.contains("left out 3 earlier turn(s)"), "{screen}");
    assert!(screen.contains("shortened 2 tool output(s)"), "{screen}");
}

#[test]
fn a_reopened_session_shows_its_compaction_where_it_happened() {
    use crate::agent::session::{CompactionMark, Message, Session};
    let mut session = Session::new();
    session.push(Message::user("first"));
    session.push(Message::assistant("one", None, vec![]));
    session.push(Message::compaction(
        "SUMMARY TEXT",
        CompactionMark {
            turns: 1,
            automatic: false,
            kept_from: None,
        },
    ));
    session.push(Message::user("second"));
    session.push(Message::assistant("two", None, vec![]));
    let t0 = Instant::now();
    let mut s = state();
    feed(
        &mut s,
        t0,
        vec![AgentEvent::SessionOpened {
            id: "s".into(),
            title: None,
            notice: "Reopened.".into(),
            replay: crate::agent::replay::replay(&session, 6),
        }],
    );
    let screen = render(&mut s, 100, 30, t0);
    let (one, line, two) = (
        screen.find("one").unwrap(),
        screen.find("Compacted 1 turn ·").expect("the line"),
        screen.find("two").unwrap(),
    );
    assert!(one < line && line < two, "{screen}");
}

#[test]
fn a_summary_with_escapes_is_drawn_clean() {
    let t0 = Instant::now();
    let mut s = state();
    feed(
        &mut s,
        t0,
        vec![AgentEvent::Compacted(Compaction {
            turns: 2,
            automatic: true,
            summary: "## Summary\n\nclip\u{1b}]52;c;ZXZpbA==\u{7} title\u{1b}]0;owned\u{7} done"
                .into(),
            summary_tokens: 20,
            usage: None,
        })],
    );
    render(&mut s, 100, 30, t0);
    s.focus = Focus::Conversation;
    update::apply(&mut s, crate::tui::keymap::Action::ToggleFold, t0);
    let backend = render_backend(&mut s, 100, 30, t0);
    let screen = backend.to_string();
    assert!(screen.contains("done"), "{screen}");
    assert!(
        !screen.contains('\u{1b}') && !screen.contains("52;"),
        "{screen}"
    );
    assert!(!screen.contains("owned"), "{screen}");
}

#[test]
fn interrupting_slash_compact_is_a_plain_notice_and_nothing_else_changes() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "/compact");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::Compacting {
                turns: 4,
                automatic: false,
            },
            AgentEvent::CompactionInterrupted,
        ],
    );
    assert!(!s.busy(), "the request is over");
    let screen = render(&mut s, 100, 30, t0);
    assert!(
        screen.contains("Compaction interrupted; nothing changed."),
        "{screen}"
    );
    assert!(!screen.contains("Could not compact"), "{screen}");
    assert!(!status::line(&s, t0, 120).to_string().contains("compacting"));
    let kinds: Vec<_> = s.view.entries.iter().map(|e| e.kind).collect();
    assert!(
        !kinds.contains(&crate::tui::state::EntryKind::Error),
        "{kinds:?}"
    );
}

#[test]
fn after_a_compaction_the_gauge_shows_the_estimate_it_is_told_not_the_red_one_before() {
    let t0 = Instant::now();
    let mut s = state();
    feed(&mut s, t0, vec![usage(92_000, Some(80_000))]);
    assert_eq!(gauge(&s).1, s.theme.error);
    feed(
        &mut s,
        t0,
        vec![compacted(126, true), usage(6_000, Some(80_000))],
    );
    let (text, style) = gauge(&s);
    assert_eq!(text, "context 6%");
    assert_ne!(style, s.theme.error);
}
