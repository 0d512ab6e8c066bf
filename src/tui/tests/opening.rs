//! A long session opens from its glimpse (its last turns, read from the end of the history)
//! while the whole history is read; the whole session then takes its place.

use std::time::Instant;

use super::common::*;
use crate::agent::history::{glimpse, load, save};
use crate::agent::{AgentEvent, Message, Session};
use crate::llm::{FunctionCall, ToolCall};
use crate::tui::state::EntryKind;
use crate::tui::update;

/// A session of `turns` turns, each a prompt, a call with its result and an answer.
fn long_session(turns: usize) -> Session {
    let mut s = Session::new();
    for t in 0..turns {
        s.push(Message::user(format!("question {t}")));
        let call = ToolCall {
            id: format!("c{t}"),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!("{{\"path\":\"src/f{t}.rs\"}}"),
            },
        };
        s.push(Message::assistant("", None, vec![call]));
        let text = format!("line of file {t}\n").repeat(60);
        let result =
            serde_json::json!({"ok": true, "path": format!("src/f{t}.rs"), "content": text});
        s.push(Message::tool(format!("c{t}"), result.to_string()));
        s.push(Message::assistant(format!("answer {t}"), None, vec![]));
    }
    s
}

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
    let session = long_session(1000);
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
