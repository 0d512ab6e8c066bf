//! The completion popups: workspace files after `@` (listed off the loop, matched as the person
//! types) and slash commands after `/` with their argument values; their keys, and how they
//! are drawn.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyModifiers};

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::llm::Preset;
use crate::tui::keymap::{Action, KeyContext, map_key};
use crate::tui::state::{EntryKind, FileBatch, Focus, PopupKind, State};
use crate::tui::update::{self, Effect, key_context, on_files};

fn press_with(s: &mut State, code: KeyCode, m: KeyModifiers, now: Instant) -> Vec<Effect> {
    let action = map_key(&key_context(s, now), k(code, m));
    update::apply(s, action, now)
}

fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    press_with(s, code, NONE, Instant::now())
}

fn typed(s: &mut State, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| press(s, KeyCode::Char(c)))
        .collect()
}

fn files(generation: u64, paths: &[&str], done: bool) -> FileBatch {
    FileBatch {
        generation,
        paths: paths.iter().map(|p| p.to_string()).collect(),
        done,
    }
}

const TREE: [&str; 6] = [
    "Cargo.toml",
    "README.md",
    "src/main.rs",
    "src/tui/mod.rs",
    "docs/my notes.md",
    "benches/main_loop.rs",
];

/// The labels of the popup's rows.
fn rows(s: &State) -> Vec<String> {
    s.composer
        .popup
        .iter()
        .flat_map(|p| p.rows.iter().map(|r| r.choice.label.clone()))
        .collect()
}

#[test]
fn popup_key_table() {
    // From a fresh state's context, so fields added later keep their defaults.
    let popup = KeyContext {
        input_empty: false,
        popup: true,
        ..key_context(&state(), Instant::now())
    };
    let busy = KeyContext {
        busy: true,
        ..popup
    };
    let closed = KeyContext {
        popup: false,
        ..popup
    };
    let elsewhere = KeyContext {
        focus: Focus::Conversation,
        ..popup
    };
    let table = vec![
        (popup, k(KeyCode::Up, NONE), Action::PopupMove(-1)),
        (popup, k(KeyCode::Down, NONE), Action::PopupMove(1)),
        (popup, k(KeyCode::Tab, NONE), Action::PopupComplete),
        (popup, k(KeyCode::Enter, NONE), Action::PopupChoose),
        (popup, k(KeyCode::Esc, NONE), Action::PopupClose),
        (busy, k(KeyCode::Esc, NONE), Action::PopupClose),
        (busy, k(KeyCode::Char('c'), CTRL), Action::Interrupt),
        (popup, k(KeyCode::Enter, ALT), Action::Newline),
        (popup, k(KeyCode::Up, SHIFT), Action::ScrollLine(-1)),
        (popup, k(KeyCode::BackTab, SHIFT), Action::CycleApproval),
        (
            popup,
            k(KeyCode::Char('m'), NONE),
            Action::Edit(k(KeyCode::Char('m'), NONE)),
        ),
        (popup, k(KeyCode::F(1), NONE), Action::ShowHelp),
        // Closed, the keys do what they always did.
        (closed, k(KeyCode::Up, NONE), Action::HistoryPrev),
        (closed, k(KeyCode::Down, NONE), Action::HistoryNext),
        (closed, k(KeyCode::Enter, NONE), Action::Send),
        (closed, k(KeyCode::Tab, NONE), Action::FocusNext),
        (
            KeyContext {
                busy: true,
                ..closed
            },
            k(KeyCode::Esc, NONE),
            Action::Interrupt,
        ),
        (elsewhere, k(KeyCode::Tab, NONE), Action::FocusNext),
        (elsewhere, k(KeyCode::Up, NONE), Action::ScrollLine(-1)),
    ];
    for (i, (c, key, want)) in table.into_iter().enumerate() {
        assert_eq!(map_key(&c, key), want, "row {i}: {key:?} in {c:?}");
    }
}

#[test]
fn at_opens_the_file_popup_which_lists_off_the_loop_and_filters_as_typed() {
    let t0 = Instant::now();
    let mut s = state();
    let effects = typed(&mut s, "see @");
    assert_eq!(
        effects,
        vec![Effect::ListFiles(1)],
        "one listing per opening"
    );
    assert_eq!(s.composer.popup.as_ref().unwrap().kind, PopupKind::Files);
    assert!(rows(&s).is_empty(), "nothing until the list comes");
    on_files(&mut s, files(1, &TREE[..3], false), t0);
    assert_eq!(rows(&s), TREE[..3], "the first batch shows at once");
    on_files(&mut s, files(1, &TREE[3..], true), t0);
    assert_eq!(rows(&s).len(), TREE.len());
    typed(&mut s, "mai");
    assert_eq!(rows(&s), ["src/main.rs", "benches/main_loop.rs"]);
    let first = &s.composer.popup.as_ref().unwrap().rows[0];
    assert_eq!(
        first.matched,
        vec![4, 5, 6],
        "the matched letters of src/main.rs"
    );
    // Down moves in the popup, not through the prompt history; Tab inserts.
    s.composer.prompt_history.push("an earlier prompt".into());
    press(&mut s, KeyCode::Down);
    assert_eq!(s.composer.popup.as_ref().unwrap().selected, 1);
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.composer.input_text(), "see @benches/main_loop.rs ");
    assert!(s.composer.popup.is_none());
    // A batch of an older listing changes nothing.
    on_files(&mut s, files(0, &["stale.txt"], true), t0);
    assert_eq!(s.composer.files.paths.len(), TREE.len());
}

#[test]
fn enter_inserts_a_quoted_path_and_esc_closes_the_popup_for_that_word() {
    let t0 = Instant::now();
    let mut s = state();
    typed(&mut s, "@");
    on_files(&mut s, files(1, &TREE, true), t0);
    typed(&mut s, "notes");
    let effects = press(&mut s, KeyCode::Enter);
    assert!(
        effects.is_empty(),
        "Enter inserted the path, it sent nothing"
    );
    assert_eq!(s.composer.input_text(), "@\"docs/my notes.md\" ");
    // Esc closes it; typing on in the same word keeps it closed, a new word opens it again.
    typed(&mut s, "and @ma");
    assert!(s.composer.popup.is_some());
    assert!(
        press(&mut s, KeyCode::Esc).is_empty(),
        "Esc interrupts nothing"
    );
    assert!(s.composer.popup.is_none());
    typed(&mut s, "in");
    assert!(s.composer.popup.is_none());
    typed(&mut s, " (@");
    assert!(s.composer.popup.is_some(), "after a bracket too");
    // With the popup closed, Enter sends the prompt as typed.
    press(&mut s, KeyCode::Esc);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(
        effects,
        vec![Effect::Command(AgentCommand::Prompt(
            "@\"docs/my notes.md\" and @main (@".into()
        ))]
    );
}

#[test]
fn the_file_list_is_reused_for_a_while_then_listed_again() {
    let t0 = Instant::now();
    let mut s = state();
    typed(&mut s, "@");
    on_files(&mut s, files(1, &TREE, true), t0);
    press_with(&mut s, KeyCode::Char(' '), NONE, t0);
    let again = press_with(
        &mut s,
        KeyCode::Char('@'),
        NONE,
        t0 + Duration::from_secs(2),
    );
    assert!(again.is_empty(), "a fresh list is used again");
    assert_eq!(rows(&s).len(), TREE.len());
    press_with(&mut s, KeyCode::Char(' '), NONE, t0);
    let later = press_with(
        &mut s,
        KeyCode::Char('@'),
        NONE,
        t0 + Duration::from_secs(60),
    );
    assert_eq!(later, vec![Effect::ListFiles(2)]);
    // Up in a popup with nothing listed yet does not recall a prompt either.
    s.composer.prompt_history.push("earlier".into());
    press(&mut s, KeyCode::Up);
    assert_eq!(s.composer.input_text(), "@ @ @");
}

#[test]
fn slash_offers_the_commands_and_their_values() {
    let mut s = state();
    s.recent_models = vec!["qwen2.5-coder".into()];
    typed(&mut s, "/");
    assert_eq!(rows(&s).len(), crate::tui::commands::COMMANDS.len());
    typed(&mut s, "mo");
    assert_eq!(rows(&s)[0], "/model");
    // Tab completes the name and offers the values of its argument.
    press(&mut s, KeyCode::Tab);
    assert_eq!(s.composer.input_text(), "/model ");
    assert_eq!(
        s.composer.popup.as_ref().unwrap().kind,
        PopupKind::Values("model")
    );
    assert_eq!(
        rows(&s),
        ["deepseek-flash", "deepseek-v4-pro", "qwen2.5-coder"]
    );
    typed(&mut s, "pro");
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::SetPreset(Preset::Pro)]);
    assert!(s.composer.input_empty() && s.composer.popup.is_none());
    // Enter runs a command without an argument at once ...
    typed(&mut s, "/ste");
    press(&mut s, KeyCode::Enter);
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .starts_with("Steps per turn: at most 10")
    );
    // ... completes one that needs its argument ...
    typed(&mut s, "/ren");
    assert!(press(&mut s, KeyCode::Enter).is_empty());
    assert_eq!(s.composer.input_text(), "/rename ");
    assert!(s.composer.popup.is_none(), "a title has no values to offer");
    s.composer.reset_input();
    // ... and sends what matches nothing as typed.
    typed(&mut s, "/zzz");
    assert!(rows(&s).is_empty());
    press(&mut s, KeyCode::Enter);
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("Unknown command `/zzz`")
    );
    // The approval modes, the current one marked.
    typed(&mut s, "/appr");
    press(&mut s, KeyCode::Tab);
    assert_eq!(rows(&s), ["auto", "ask", "read-only"]);
    assert!(
        s.composer.popup.as_ref().unwrap().rows[0]
            .choice
            .detail
            .ends_with("current")
    );
    s.composer.reset_input();
    // Steps offer a few limits, the current one marked.
    typed(&mut s, "/steps ");
    let popup = s.composer.popup.as_ref().unwrap();
    assert!(
        popup
            .rows
            .iter()
            .any(|r| r.choice.label == "10" && r.choice.detail.ends_with("current"))
    );
}

#[test]
fn copy_offers_the_code_blocks_of_the_last_answer() {
    let mut s = state();
    send(&mut s, Instant::now(), "code please");
    feed(
        &mut s,
        Instant::now(),
        whole_turn("```rust\nfn a() {}\n```\n\n```sh\nls -la\npwd\n```"),
    );
    typed(&mut s, "/copy ");
    assert_eq!(rows(&s), ["1", "2"]);
    let details: Vec<&str> = s
        .composer
        .popup
        .as_ref()
        .unwrap()
        .rows
        .iter()
        .map(|r| r.choice.detail.as_str())
        .collect();
    assert_eq!(details, ["1 line · fn a() {}", "2 lines · ls -la"]);
    press(&mut s, KeyCode::Down);
    let effects = press(&mut s, KeyCode::Enter);
    assert_eq!(effects, vec![Effect::Copy("ls -la\npwd\n".into())]);
}

#[test]
fn recalling_a_prompt_opens_no_popup_and_an_overlay_closes_it() {
    let mut s = state();
    s.composer.prompt_history = vec!["/model".into(), "see @notes.md".into()];
    press(&mut s, KeyCode::Up);
    assert_eq!(s.composer.input_text(), "see @notes.md");
    assert!(
        s.composer.popup.is_none(),
        "Up again recalls, not moves in a popup"
    );
    press(&mut s, KeyCode::Up);
    assert_eq!(s.composer.input_text(), "/model");
    assert!(s.composer.popup.is_none());
    s.composer.reset_input();
    typed(&mut s, "@");
    assert!(s.composer.popup.is_some());
    press(&mut s, KeyCode::F(1));
    assert!(s.composer.popup.is_none());
}

#[test]
fn the_file_popup_as_drawn() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hello");
    feed(&mut s, t0, whole_turn("Hi."));
    typed(&mut s, "look at @");
    on_files(&mut s, files(1, &TREE, true), t0);
    typed(&mut s, "mrs");
    let backend = render_backend(&mut s, 80, 24, t0);
    insta::assert_snapshot!(backend.to_string());
    // The matched letters are drawn in the accent colour.
    let buffer = backend.buffer();
    let accent = s.theme.accent.fg.unwrap();
    let lit_in = |label: &str| -> String {
        let width = label.chars().count();
        for y in 0..24 {
            let cells: Vec<&ratatui::buffer::Cell> = (0..80).map(|x| &buffer[(x, y)]).collect();
            for x in 0..=80 - width {
                let text: String = cells[x..x + width].iter().map(|c| c.symbol()).collect();
                if text == label && cells[x - 2].symbol() != "@" {
                    return cells[x..x + width]
                        .iter()
                        .filter(|c| c.fg == accent)
                        .map(|c| c.symbol())
                        .collect();
                }
            }
        }
        panic!("{label} is not on the screen");
    };
    assert_eq!(lit_in("src/main.rs"), "mrs", "m of main, r and s of .rs");
    assert_eq!(lit_in("benches/main_loop.rs"), "mrs");
}

#[test]
fn the_command_popup_as_drawn() {
    let mut s = state();
    typed(&mut s, "/c");
    insta::assert_snapshot!(render(&mut s, 90, 20, Instant::now()));
}

#[test]
fn an_attached_mention_is_a_chip_live_and_when_replayed() {
    use crate::agent::Session;
    use crate::agent::mentions::{Attached, Expanded};
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "sum up @notes.md please");
    feed(
        &mut s,
        t0,
        vec![AgentEvent::FilesAttached(vec!["notes.md".into()])],
    );
    let user = s
        .view
        .entries
        .iter()
        .rposition(|e| e.kind == EntryKind::User)
        .unwrap();
    assert_eq!(s.view.entries[user].mentions, ["notes.md"]);
    let backend = render_backend(&mut s, 80, 16, t0);
    let chip = crate::tui::panes::chips::chip_style(&s.theme);
    let buffer = backend.buffer();
    let lit: String = buffer
        .content
        .iter()
        .filter(|c| c.bg == chip.bg.unwrap() && c.fg == chip.fg.unwrap())
        .map(|c| c.symbol().to_string())
        .collect();
    assert_eq!(lit, "@notes.md");

    let mut session = Session::new();
    session.push(crate::agent::Message::prompt(Expanded {
        content: "sum up @notes.md please\n\n<attached_files>…</attached_files>".into(),
        attached: Some(Attached {
            typed: "sum up @notes.md please".into(),
            mentions: vec!["notes.md".into()],
        }),
        notes: vec![],
    }));
    let mut again = state();
    update::show_session(&mut again, &session, t0);
    let entry = &again.view.entries[0];
    assert_eq!(
        (entry.text.as_str(), entry.mentions.as_slice()),
        ("sum up @notes.md please", &["notes.md".to_string()][..])
    );
    assert_eq!(again.composer.prompt_history, ["sum up @notes.md please"]);
}

/// Every cell of `area`'s border in `buffer`, as drawn.
fn border_cells(buffer: &ratatui::buffer::Buffer, area: ratatui::layout::Rect) -> String {
    let mut out = String::new();
    for x in area.left()..area.right() {
        out.push_str(buffer[(x, area.top())].symbol());
        out.push_str(buffer[(x, area.bottom() - 1)].symbol());
    }
    for y in area.top()..area.bottom() {
        out.push_str(buffer[(area.left(), y)].symbol());
        out.push_str(buffer[(area.right() - 1, y)].symbol());
    }
    out
}

#[test]
fn popups_and_pickers_stay_inside_the_conversation_pane() {
    let t0 = Instant::now();
    for (width, height) in [(80, 30), (120, 30)] {
        let mut s = state();
        send(&mut s, t0, "hello");
        feed(&mut s, t0, whole_turn("Hi."));
        // Drawn once without the popup: the side panes' borders as they should stay.
        let before = render_backend(&mut s, width, height, t0);
        let timeline = s.areas.timeline.expect("the timeline is shown");
        let conversation = s.areas.conversation;
        typed(&mut s, "look at @");
        on_files(&mut s, files(1, &TREE, true), t0);
        let with_popup = render_backend(&mut s, width, height, t0);
        assert_eq!(
            border_cells(with_popup.buffer(), timeline),
            border_cells(before.buffer(), timeline),
            "{width}×{height}: the popup drew over the timeline:\n{}",
            with_popup
        );
        assert_eq!(
            border_cells(with_popup.buffer(), conversation),
            border_cells(before.buffer(), conversation),
            "{width}×{height}: the popup drew over the conversation's border:\n{}",
            with_popup
        );
        assert!(with_popup.to_string().contains("Files · "), "{with_popup}");
        // A picker, too, opens over the conversation.
        s.composer.reset_input();
        s.composer.popup = None;
        update::apply(&mut s, Action::ToggleFold, t0);
        send(&mut s, t0, "/model");
        assert!(s.overlay.picker().is_some());
        let picker = render_backend(&mut s, width, height, t0);
        assert_eq!(
            border_cells(picker.buffer(), timeline),
            border_cells(before.buffer(), timeline),
            "{width}×{height}: the picker drew over the timeline:\n{}",
            picker
        );
        assert!(picker.to_string().contains("Choose a model"), "{picker}");
    }
}
