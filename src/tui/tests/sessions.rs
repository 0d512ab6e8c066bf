//! Sessions in the UI: `/new`, `/resume` and its picker, `/rename`, the model picker, and a
//! reopened session shown through the same reducer as live turns.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::events::SessionSummary;
use crate::llm::Preset;
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::{EntryKind, Overlay, PickerKind, State};
use crate::tui::update::{self, Effect, key_context};

fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    let now = Instant::now();
    let action = map_key(&key_context(s, now), k(code, NONE));
    update::apply(s, action, now)
}

fn typed(s: &mut State, text: &str) {
    for c in text.chars() {
        press(s, KeyCode::Char(c));
    }
}

fn summary(id: &str, title: &str, day: u32, turns: usize) -> SessionSummary {
    use chrono::TimeZone;
    SessionSummary {
        id: id.into(),
        title: title.into(),
        updated_at: Some(
            chrono::Utc
                .with_ymd_and_hms(2026, 11, day, 9, 30, 0)
                .unwrap(),
        ),
        turns,
        first_prompt: format!("{title}, please"),
        prompts: vec![format!("{title}, please")],
        problem: None,
    }
}

fn listed() -> Vec<SessionSummary> {
    vec![
        summary("aaaa1111", "Fix the parser", 28, 3),
        summary("bbbb2222", "Write the README", 20, 1),
        SessionSummary {
            id: "cccc3333".into(),
            title: "cccc3333.json".into(),
            updated_at: None,
            turns: 0,
            first_prompt: String::new(),
            prompts: Vec::new(),
            problem: Some("is not a session (expected value at line 1 column 2)".into()),
        },
    ]
}

#[test]
fn resume_opens_a_picker_that_filters_and_reopens_the_chosen_session() {
    let mut s = state();
    let effects = send(&mut s, Instant::now(), "/resume");
    assert_eq!(effects, vec![Effect::Command(AgentCommand::ListSessions)]);
    assert!(matches!(s.overlay, Overlay::Picker(_)));
    assert!(s.overlay.picker().unwrap().loading);
    feed(&mut s, Instant::now(), vec![AgentEvent::Sessions(listed())]);
    let picker = s.overlay.picker().unwrap();
    assert_eq!(picker.kind, PickerKind::Sessions);
    assert_eq!(picker.visible().len(), 3);
    typed(&mut s, "readme");
    assert_eq!(s.overlay.picker().unwrap().visible(), vec![1]);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Command(AgentCommand::Resume("bbbb2222".into()))]
    );
    assert_eq!(s.overlay, Overlay::None);
    assert!(s.overlay.picker().is_none());
}

#[test]
fn an_unreadable_session_is_reported_not_opened_and_deleting_asks_first() {
    let mut s = state();
    send(&mut s, Instant::now(), "/resume");
    feed(&mut s, Instant::now(), vec![AgentEvent::Sessions(listed())]);
    press(&mut s, KeyCode::Down);
    press(&mut s, KeyCode::Down);
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    let said = &s.view.entries.last().unwrap().text;
    assert!(
        said.contains("cannot be opened") && said.contains("not a session"),
        "{said}"
    );
    assert!(
        matches!(s.overlay, Overlay::Picker(_)),
        "the picker stays open"
    );
    // Ctrl+D asks; a key other than y keeps the session.
    press(&mut s, KeyCode::Up);
    let action = map_key(
        &key_context(&s, Instant::now()),
        k(KeyCode::Char('d'), CTRL),
    );
    assert_eq!(action, Action::PickerDelete);
    update::apply(&mut s, action, Instant::now());
    assert!(s.overlay.picker().unwrap().confirm_delete);
    assert!(press(&mut s, KeyCode::Char('n')).is_empty());
    assert!(!s.overlay.picker().unwrap().confirm_delete);
    press(&mut s, KeyCode::Delete);
    let effects = press(&mut s, KeyCode::Char('y'));
    assert_eq!(
        effects,
        vec![Effect::Command(AgentCommand::DeleteSession(
            "bbbb2222".into()
        ))]
    );
    press(&mut s, KeyCode::Esc);
    assert_eq!(s.overlay, Overlay::None);
}

#[test]
fn the_session_picker_as_drawn() {
    let mut s = state();
    send(&mut s, Instant::now(), "/resume");
    let mut list = listed();
    // A fixed local rendering of the dates, whatever the machine's time zone.
    for item in &mut list {
        item.updated_at = None;
    }
    feed(&mut s, Instant::now(), vec![AgentEvent::Sessions(list)]);
    press(&mut s, KeyCode::Down);
    insta::assert_snapshot!(render(&mut s, 90, 20, Instant::now()));
    press(&mut s, KeyCode::Delete);
    let confirming = render(&mut s, 90, 20, Instant::now());
    assert!(confirming.contains("Delete “Write the README” for good? y deletes it"));
}

#[test]
fn the_model_picker_offers_presets_and_recent_names_and_takes_a_typed_one() {
    let mut s = state();
    s.recent_models = vec!["qwen2.5-coder".into(), "deepseek-v4-pro".into()];
    send(&mut s, Instant::now(), "/model");
    assert!(matches!(s.overlay, Overlay::Picker(_)));
    insta::assert_snapshot!(render(&mut s, 80, 16, Instant::now()));
    press(&mut s, KeyCode::Down);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::SetPreset(Preset::Pro)]);
    assert_eq!(s.recent_models[0], "deepseek-v4-pro");
    // A name no row matches is taken as it is.
    send(&mut s, Instant::now(), "/model");
    typed(&mut s, "llama3.2");
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::SetPreset(Preset::Custom("llama3.2".into()))]
    );
    assert_eq!(s.recent_models[0], "llama3.2");
    assert_eq!(s.recent_models.len(), 3);
}

#[test]
fn new_rename_and_a_reopened_session_replace_the_view() {
    let mut s = state();
    send(&mut s, Instant::now(), "hello\nwith a second line");
    feed(&mut s, Instant::now(), whole_turn("first answer"));
    assert_eq!(s.view.session_title.as_deref(), Some("hello"));
    assert_eq!(
        send(&mut s, Instant::now(), "/rename Parser work"),
        vec![Effect::Command(AgentCommand::Rename("Parser work".into()))]
    );
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::SessionRenamed("Parser work".into())],
    );
    assert!(render(&mut s, 90, 20, Instant::now()).contains("Conversation · Parser work"));
    assert_eq!(
        send(&mut s, Instant::now(), "/new"),
        vec![Effect::Command(AgentCommand::NewSession)]
    );
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::SessionOpened {
            id: "dddd4444".into(),
            title: None,
            notice: "Archived “Parser work”. A new session started.".into(),
            replay: vec![],
        }],
    );
    assert_eq!(s.view.session_title, None);
    assert_eq!(
        s.view.entries.len(),
        1,
        "only the notice: {:?}",
        s.view.entries
    );
    let mut replay = vec![AgentEvent::TurnStarted {
        prompt: "old question".into(),
    }];
    replay.extend(whole_turn("old answer").into_iter().skip(1));
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::SessionOpened {
            id: "dddd4444".into(),
            title: Some("Old one".into()),
            notice: "Reopened “Old one”.".into(),
            replay,
        }],
    );
    let kinds: Vec<EntryKind> = s.view.entries.iter().map(|e| e.kind).collect();
    assert!(kinds.contains(&EntryKind::User) && kinds.contains(&EntryKind::Assistant));
    assert_eq!(s.view.last_answer(), Some("old answer"));
    assert_eq!(s.view.session_title.as_deref(), Some("Old one"));
    assert!(!s.busy());
}

#[test]
fn ctrl_l_offers_archiving_and_session_switches_wait_for_the_turn() {
    let mut s = state();
    let action = map_key(
        &key_context(&s, Instant::now()),
        k(KeyCode::Char('l'), CTRL),
    );
    update::apply(&mut s, action, Instant::now());
    assert_eq!(s.overlay, Overlay::ConfirmClear);
    assert_eq!(
        press(&mut s, KeyCode::Char('a')),
        vec![Effect::Command(AgentCommand::NewSession)]
    );
    assert_eq!(s.overlay, Overlay::None);
    send(&mut s, Instant::now(), "a long question");
    assert!(s.busy());
    for command in ["/new", "/resume"] {
        let effects = send(&mut s, Instant::now(), command);
        assert!(effects.is_empty(), "{command} ran during a turn");
        assert_eq!(s.composer.input_text(), command, "kept in the input");
    }
    assert_eq!(s.overlay, Overlay::None);
}
