//! A long session opens from its glimpse (its last turns, read from the end of the history)
//! while the whole history is read; the whole session then takes its place.

use std::time::Instant;

use super::common::*;
use crate::agent::history::{glimpse, load, save};
use crate::agent::{AgentEvent, Message, Session};
use crate::llm::{FunctionCall, ToolCall};
use crate::tui::state::EntryKind;
use crate::tui::update;

/// The lines of the conversation pane (the left `cols` columns of each row).
fn left(screen: &str, cols: usize) -> String {
    screen
        .lines()
        .map(|l| l.chars().take(cols).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_glimpse_shows_the_last_page_and_the_whole_session_takes_its_place_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let session = long_session(1000, 1000);
    save(&path, &session).unwrap();
    let t0 = Instant::now();
    // As the UI starts: the glimpse, then the start's notices.
    let g = glimpse(&path).expect("a glimpse");
    assert!(g.session.messages.len() < session.messages.len() / 4);
    let mut opening = state();
    update::show_glimpse(&mut opening, Some(&g), t0);
    opening
        .view
        .push(EntryKind::Notice, "a notice from the start");
    // As it started before: the whole session, then the notices.
    let mut whole = state();
    let loaded = load(&path).unwrap().session;
    update::show_session(&mut whole, &loaded, t0);
    whole.session_id = Some(loaded.id.clone());
    whole
        .view
        .push(EntryKind::Notice, "a notice from the start");
    let first = render(&mut opening, 140, 40, t0);
    let before = render(&mut whole, 140, 40, t0);
    assert!(
        first.contains("answer 999") && first.contains("a notice from the start"),
        "{first}"
    );
    assert!(first.contains("Reading the session…"), "{first}");
    assert!(
        !first.contains("turn 1 "),
        "the glimpse's steps are not numbered: {first}"
    );
    // The conversation's last page is the one the whole session shows.
    assert_eq!(left(&first, 80), left(&before, 80));
    // Something typed meanwhile stays after it.
    opening.view.push(EntryKind::Notice, "shown while reading");
    whole.view.push(EntryKind::Notice, "shown while reading");
    feed(
        &mut opening,
        t0,
        vec![AgentEvent::SessionLoaded {
            id: loaded.id.clone(),
            title: loaded.title(),
            replay: crate::agent::replay::replay(&loaded, whole.status.max_steps),
            prompts: loaded.prompts().map(str::to_string).collect(),
            notices: Vec::new(),
        }],
    );
    assert!(opening.view.opening.is_none());
    assert_eq!(opening.session_id, whole.session_id);
    assert_eq!(
        opening.composer.prompt_history,
        whole.composer.prompt_history
    );
    let after = render(&mut opening, 140, 40, t0);
    assert_eq!(after, render(&mut whole, 140, 40, t0));
    assert!(
        after.contains("Timeline (2000)") && after.contains("turn 1000"),
        "{after}"
    );
}

#[test]
fn without_a_glimpse_the_session_comes_when_read_and_an_unreadable_one_ends_the_ui() {
    let t0 = Instant::now();
    let mut s = state();
    update::show_glimpse(&mut s, None, t0);
    let first = render(&mut s, 120, 30, t0);
    assert!(first.contains("Reading the session…"), "{first}");
    let mut session = Session::new();
    session.push(Message::user("old question"));
    session.push(Message::assistant("old answer", None, vec![]));
    feed(
        &mut s,
        t0,
        vec![AgentEvent::SessionLoaded {
            id: session.id.clone(),
            title: session.title(),
            replay: crate::agent::replay::replay(&session, 6),
            prompts: vec!["old question".into()],
            notices: vec!["The history file was damaged; it was kept aside.".into()],
        }],
    );
    let shown = render(&mut s, 120, 30, t0);
    assert!(
        shown.contains("old answer") && shown.contains("kept aside"),
        "{shown}"
    );
    assert!(!shown.contains("Reading the session"), "{shown}");
    assert_eq!(s.composer.prompt_history, vec!["old question".to_string()]);
    feed(
        &mut s,
        t0,
        vec![AgentEvent::SessionUnavailable(
            "history file x: Permission denied".into(),
        )],
    );
    assert_eq!(
        s.unavailable.as_deref(),
        Some("history file x: Permission denied")
    );
}

/// A session of `turns` turns, each a prompt, a call with its result and an answer, all of one
/// shape: every label, text and result the same length, so the glimpse's steps and the whole
/// session's at the same index look alike to a cache that keys on sizes.
fn long_session(turns: usize, result_bytes: usize) -> Session {
    let mut s = Session::new();
    for t in 0..turns {
        s.push(Message::user(format!("question {t:03}")));
        let call = ToolCall {
            id: format!("c{t:03}"),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!("{{\"path\":\"src/f{t:03}.rs\"}}"),
            },
        };
        s.push(Message::assistant("", None, vec![call]));
        let result = serde_json::json!({"ok": true, "content": "z".repeat(result_bytes)});
        s.push(Message::tool(format!("c{t:03}"), result.to_string()));
        s.push(Message::assistant(format!("answer {t:03}"), None, vec![]));
    }
    s
}

fn loaded_event(s: &Session, max_steps: usize) -> AgentEvent {
    AgentEvent::SessionLoaded {
        id: s.id.clone(),
        title: s.title(),
        replay: crate::agent::replay::replay(s, max_steps),
        prompts: s.prompts().map(str::to_string).collect(),
        notices: Vec::new(),
    }
}

/// A state showing the glimpse of a saved session of `turns` turns with 8 KB results (so that
/// it holds fewer than half of them); the session as loaded, and how many prompts the glimpse
/// holds.
fn glimpsed(turns: usize) -> (crate::tui::state::State, Session, usize) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    save(&path, &long_session(turns, 8000)).unwrap();
    let g = glimpse(&path).expect("a glimpse");
    let mut s = state();
    update::show_glimpse(&mut s, Some(&g), Instant::now());
    (s, load(&path).unwrap().session, g.session.prompts().count())
}

#[test]
fn clearing_waits_for_the_session_and_a_recalled_prompt_stays_the_one_shown() {
    use crate::tui::keymap::Action;
    let t0 = Instant::now();
    let (mut s, loaded, n) = glimpsed(100);
    assert!(n < 100, "only the end: {n}");
    // Clearing now would be answered after the session read meanwhile, showing it again.
    let effects = update::apply(&mut s, Action::AskClear, t0);
    assert!(effects.is_empty());
    assert!(matches!(s.overlay, crate::tui::state::Overlay::None));
    let flash = s.flash.as_ref().map(|f| f.0.as_str()).unwrap_or_default();
    assert!(flash.contains("still being read"), "{flash}");
    // Up twice: the prompt before the last; after the swap Down gives the last.
    update::apply(&mut s, Action::HistoryPrev, t0);
    update::apply(&mut s, Action::HistoryPrev, t0);
    assert_eq!(s.composer.input_text(), "question 098");
    // `/steps 9` meanwhile: the replay's limit does not put the old one back.
    s.status.max_steps = 9;
    feed(&mut s, t0, vec![loaded_event(&loaded, 6)]);
    assert_eq!(s.composer.prompt_history.len(), 100);
    assert_eq!(s.status.max_steps, 9);
    update::apply(&mut s, Action::HistoryNext, t0);
    assert_eq!(s.composer.input_text(), "question 099");
    update::apply(&mut s, Action::HistoryPrev, t0);
    update::apply(&mut s, Action::HistoryPrev, t0);
    assert_eq!(s.composer.input_text(), "question 097");
    // Now it may be cleared.
    update::apply(&mut s, Action::AskClear, t0);
    assert!(matches!(
        s.overlay,
        crate::tui::state::Overlay::ConfirmClear
    ));
}

#[test]
fn the_timeline_keeps_none_of_the_glimpses_lines_for_the_whole_sessions_steps() {
    use crate::tui::state::Pane;
    let t0 = Instant::now();
    let (mut s, loaded, n) = glimpsed(100);
    // The glimpse's steps then sit where the session's first turns do, not its glimpsed ones.
    assert!(n < 50, "{n}");
    let first_glimpsed = 100 - n;
    assert!(render(&mut s, 200, 60, t0).contains("Reading the session"));
    feed(&mut s, t0, vec![loaded_event(&loaded, 6)]);
    render(&mut s, 200, 60, t0);
    // Where the glimpse's steps were drawn (the same indices, at the session's start): each
    // turn is a label and two steps.
    let scroll = &mut s.scroll[Pane::Timeline];
    scroll.follow = false;
    scroll.top = (3 * n).saturating_sub(40).min(scroll.max_top());
    let screen = render(&mut s, 200, 60, t0);
    let stale: Vec<&str> = screen
        .lines()
        .filter(|l| (first_glimpsed..100).any(|t| l.contains(&format!("f{t:03}.rs"))))
        .collect();
    assert!(
        stale.is_empty(),
        "the glimpse's lines: {stale:#?}\n{screen}"
    );
    assert!(
        (0..first_glimpsed).any(|t| screen.contains(&format!("f{t:03}.rs"))),
        "the session's own steps there: {screen}"
    );
}

#[test]
fn another_session_of_the_same_shape_never_shows_the_last_ones_timeline_lines() {
    let t0 = Instant::now();
    let first = long_session(30, 100);
    let mut s = state();
    update::show_session(&mut s, &first, t0);
    assert!(render(&mut s, 200, 60, t0).contains("f029.rs"));
    // The same shape with other files (as `/resume` or a clear and a new turn bring).
    let mut second = long_session(30, 100);
    for m in &mut second.messages {
        for call in &mut m.tool_calls {
            call.function.arguments = call.function.arguments.replace("src/f", "lib/g");
        }
    }
    s.clear_conversation();
    update::show_session(&mut s, &second, t0);
    let screen = render(&mut s, 200, 60, t0);
    assert!(screen.contains("lib/g029.rs"), "{screen}");
    assert!(
        !screen.contains("src/f0"),
        "the last session's lines: {screen}"
    );
}
