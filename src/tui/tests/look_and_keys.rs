//! Issue 22's keys and reports as the screen has them: Ctrl+R's reverse search through earlier
//! prompts, the newline key each terminal can send, `/status`, and what quitting prints.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::events::{McpServerStatus, McpState, SessionSummary};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::EntryKind;
use crate::tui::status_report::farewell;
use crate::tui::update::{self, Effect, key_context};
use crossterm::event::KeyCode;

/// A state whose session sent `prompts` (oldest first).
fn with_prompts(prompts: &[&str]) -> crate::tui::state::State {
    let mut s = state();
    s.composer.prompt_history = prompts.iter().map(|p| p.to_string()).collect();
    s
}

/// Presses `key` as the event loop would: mapped in the context of the moment, then applied.
fn press(s: &mut crate::tui::state::State, key: crossterm::event::KeyEvent) -> Vec<Effect> {
    let now = Instant::now();
    let action = map_key(&key_context(s, now), key);
    update::apply(s, action, now)
}

fn type_text(s: &mut crate::tui::state::State, text: &str) {
    for c in text.chars() {
        press(s, k(KeyCode::Char(c), NONE));
    }
}

/// An archived session listed with its prompts (last first, as the archive gives them).
fn archived(id: &str, prompts: &[&str]) -> SessionSummary {
    SessionSummary {
        id: id.into(),
        title: prompts.last().copied().unwrap_or("").into(),
        updated_at: None,
        turns: prompts.len(),
        first_prompt: prompts.last().copied().unwrap_or("").into(),
        prompts: prompts.iter().map(|p| p.to_string()).collect(),
        problem: None,
    }
}

#[test]
fn ctrl_r_is_the_reverse_search_and_no_longer_the_editors_redo() {
    let s = state();
    let ctx = key_context(&s, Instant::now());
    assert_eq!(
        map_key(&ctx, k(KeyCode::Char('r'), CTRL)),
        Action::SearchPrompts
    );
    let searching = crate::tui::keymap::KeyContext {
        searching: true,
        ..ctx
    };
    let table = [
        (k(KeyCode::Char('r'), CTRL), Action::SearchPrompts),
        (k(KeyCode::Char('x'), NONE), Action::SearchType('x')),
        (k(KeyCode::Char('X'), SHIFT), Action::SearchType('X')),
        (k(KeyCode::Backspace, NONE), Action::SearchBackspace),
        (k(KeyCode::Enter, NONE), Action::SearchAccept),
        (k(KeyCode::Right, NONE), Action::SearchAccept),
        (k(KeyCode::Esc, NONE), Action::SearchCancel),
        (k(KeyCode::Char('g'), CTRL), Action::SearchCancel),
        (k(KeyCode::Up, NONE), Action::None),
        (k(KeyCode::Char('c'), CTRL), Action::ClearInput),
    ];
    for (key, want) in table {
        assert_eq!(map_key(&searching, key), want, "{key:?}");
    }
}

#[test]
fn typing_narrows_ctrl_r_goes_older_enter_takes_it_to_edit() {
    let mut s = with_prompts(&["fix the parser", "write docs", "fix the lexer"]);
    s.composer.set_input("half typed");
    let effects = press(&mut s, k(KeyCode::Char('r'), CTRL));
    assert_eq!(effects, vec![Effect::Command(AgentCommand::ListSessions)]);
    // The archived sessions' prompts arrive with the list, after this session's.
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::Sessions(vec![archived(
            "a1",
            &["fix the build", "old"],
        )])],
    );
    type_text(&mut s, "fix");
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("(reverse-i-search)`fix': fix the lexer"),
        "newest first:\n{shown}"
    );
    assert!(shown.contains("1 of 3"), "{shown}");
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(shown.contains("`fix': fix the parser"), "{shown}");
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("`fix': fix the build"),
        "the archived one:\n{shown}"
    );
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("(failing reverse-i-search)`fix': fix the build"),
        "nothing older: the match stays, the line says so:\n{shown}"
    );
    press(&mut s, k(KeyCode::Enter, NONE));
    assert!(s.composer.search.is_none());
    assert_eq!(
        s.composer.input_text(),
        "fix the build",
        "in the editor, not sent"
    );
    assert!(s.status.phase == crate::tui::state::TurnStatus::new(10).phase);
    // Typing edits it now.
    type_text(&mut s, "!");
    assert_eq!(s.composer.input_text(), "fix the build!");
}

#[test]
fn esc_or_ctrl_g_cancels_and_gives_back_what_was_typed() {
    for cancel in [k(KeyCode::Esc, NONE), k(KeyCode::Char('g'), CTRL)] {
        let mut s = with_prompts(&["fix the parser"]);
        s.composer.set_input("my draft");
        press(&mut s, k(KeyCode::Char('r'), CTRL));
        type_text(&mut s, "fix");
        press(&mut s, cancel);
        assert!(s.composer.search.is_none());
        assert_eq!(s.composer.input_text(), "my draft");
    }
    // Enter with no match keeps the draft too.
    let mut s = with_prompts(&["fix the parser"]);
    s.composer.set_input("my draft");
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    type_text(&mut s, "zzz");
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("(failing reverse-i-search)`zzz': "),
        "{shown}"
    );
    press(&mut s, k(KeyCode::Enter, NONE));
    assert_eq!(s.composer.input_text(), "my draft");
}

#[test]
fn the_search_is_smartcase_and_backspace_widens_it() {
    let mut s = with_prompts(&["Deploy now", "deploy later"]);
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    type_text(&mut s, "Dep");
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("`Dep': Deploy now") && shown.contains("1 of 1"),
        "{shown}"
    );
    press(&mut s, k(KeyCode::Backspace, NONE));
    press(&mut s, k(KeyCode::Backspace, NONE));
    press(&mut s, k(KeyCode::Backspace, NONE));
    type_text(&mut s, "dep");
    let shown = render(&mut s, 100, 30, Instant::now());
    assert!(
        shown.contains("`dep': deploy later") && shown.contains("1 of 2"),
        "{shown}"
    );
}

#[test]
fn a_planted_prompt_in_an_archived_session_is_shown_and_edited_clean() {
    let mut s = state();
    press(&mut s, k(KeyCode::Char('r'), CTRL));
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::Sessions(vec![archived(
            "evil",
            &["pwn \x1b]2;owned\x07\x1b[2Jme\u{9b}31m now\r"],
        )])],
    );
    type_text(&mut s, "pwn");
    let backend = render_backend(&mut s, 100, 30, Instant::now());
    let cells: String = backend
        .buffer()
        .content()
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        !cells.contains('\x1b') && !cells.contains('\u{9b}') && !cells.contains('\x07'),
        "{cells:?}"
    );
    assert!(
        backend.to_string().contains("`pwn': pwn me now"),
        "{backend}"
    );
    press(&mut s, k(KeyCode::Enter, NONE));
    let text = s.composer.input_text();
    assert!(text.chars().all(|c| !c.is_control()), "{text:?}");
}

#[test]
fn the_input_title_and_the_help_name_the_newline_key_the_terminal_can_send() {
    let mut s = state();
    let plain = render(&mut s, 120, 30, Instant::now());
    assert!(
        plain.contains("Message · Enter sends · Alt+Enter / Ctrl+J newline"),
        "{plain}"
    );
    s.overlay = crate::tui::state::Overlay::Help { scroll: 0 };
    let help = render(&mut s, 120, 60, Instant::now());
    assert!(help.contains("Alt+Enter / Ctrl+J"), "{help}");
    assert!(!help.contains("Shift+Enter"), "{help}");
    // The kitty keyboard protocol tells Shift+Enter apart: then it is named.
    let mut s = state();
    s.keyboard_enhanced = true;
    let kitty = render(&mut s, 120, 30, Instant::now());
    assert!(
        kitty.contains("Message · Enter sends · Shift+Enter newline"),
        "{kitty}"
    );
    s.overlay = crate::tui::state::Overlay::Help { scroll: 0 };
    let help = render(&mut s, 120, 60, Instant::now());
    assert!(help.contains("Alt+Enter / Shift+Enter /"), "{help}");
    assert!(help.contains("Ctrl+Enter / Ctrl+J"), "{help}");
    // And the key does insert a newline.
    let mut s = state();
    s.composer.set_input("a");
    press(&mut s, k(KeyCode::Enter, SHIFT));
    assert_eq!(s.composer.input_text(), "a\n");
}

#[test]
fn slash_status_tells_model_approval_workspace_session_tokens_context_and_servers() {
    let mut s = state();
    s.session_id = Some("0123abcd-session".into());
    s.approval_source = crate::approval::ApprovalSource::Flag;
    let now = Instant::now();
    send(&mut s, now, "hello there");
    feed(&mut s, now, whole_turn("Done."));
    feed(
        &mut s,
        now,
        vec![
            AgentEvent::ContextUsage {
                used: 32_000,
                budget: 128_000,
                compact_at: Some(102_400),
            },
            AgentEvent::McpServers(vec![McpServerStatus {
                name: "notes".into(),
                source: "miniclaw.toml".into(),
                state: McpState::Ready,
                tools: vec![("notes_find".into(), "finds".into())],
                last_error: None,
            }]),
        ],
    );
    send(&mut s, now, "/status");
    let block = &s.view.entries.last().unwrap();
    assert_eq!(block.kind, EntryKind::Notice);
    let shown = render(&mut s, 120, 40, now);
    for want in [
        "Model       deepseek-flash (provider deepseek)",
        "Approval    auto (--approval, for this run)",
        "Workspace   /home/me/project",
        "Session     “hello there” · id 0123abcd-session",
        "Tokens      1,200 in · 80 out over 1 turn",
        "Context     32,000 of 128,000 tokens (25%)",
        "MCP         notes — ready, 1 tool(s)",
    ] {
        assert!(shown.contains(want), "{want:?} missing:\n{shown}");
    }
}

#[test]
fn quitting_says_how_to_resume_and_what_it_cost_but_not_for_an_empty_session() {
    let mut s = state();
    s.session_id = Some("0123abcd".into());
    assert_eq!(farewell(&s), None, "an empty session");
    let now = Instant::now();
    send(&mut s, now, "it's \x1b[31m$HOME\x07");
    feed(&mut s, now, whole_turn("Done."));
    let text = farewell(&s).unwrap();
    assert!(
        text.starts_with("To continue this session: miniclaw-tui --resume \"0123abcd\""),
        "{text}"
    );
    assert!(
        text.contains("Tokens used: 1,200 in · 80 out over 1 turn"),
        "{text}"
    );
    assert!(
        text.chars().all(|c| c == '\n' || !c.is_control()),
        "the title is cleaned: {text:?}"
    );
    // A planted history's id with escapes is cleaned before it reaches the terminal.
    s.session_id = Some("x\x1b]52;c;b3duZWQ=\x07y".into());
    let text = farewell(&s).unwrap();
    assert!(!text.contains('\x1b') && !text.contains('\x07'), "{text:?}");
    // Without the id (the history was cleared since) the title, quoted for the shell.
    s.session_id = None;
    let text = farewell(&s).unwrap();
    assert!(text.contains("--resume 'it'\\''s $HOME'"), "{text}");
}

#[test]
fn ctrl_f_finds_in_the_conversation_marks_the_matches_and_steps_through_them() {
    let mut s = state();
    let now = Instant::now();
    for i in 0..12 {
        send(&mut s, now, &format!("question {i}"));
        feed(
            &mut s,
            now,
            whole_turn(&format!("Answer {i}: the Parser is fine.")),
        );
    }
    // Ctrl+F from the input, then typing.
    press(&mut s, k(KeyCode::Char('f'), CTRL));
    assert!(s.find.is_some());
    type_text(&mut s, "parser");
    let shown = render(&mut s, 100, 30, now);
    assert!(
        shown.contains("find: parser  12/12"),
        "smartcase, newest first:\n{shown}"
    );
    assert!(shown.contains("Answer 11: the Parser is fine."), "{shown}");
    // The matches are marked in the drawn buffer: the current one bold and underlined.
    let backend = render_backend(&mut s, 100, 30, now);
    let buffer = backend.buffer();
    let marked: Vec<(u16, u16, bool)> = buffer
        .content()
        .iter()
        .enumerate()
        .filter(|(_, c)| c.modifier.contains(ratatui::style::Modifier::REVERSED))
        .map(|(i, c)| {
            let (x, y) = buffer.pos_of(i);
            (
                x,
                y,
                c.modifier.contains(ratatui::style::Modifier::UNDERLINED),
            )
        })
        .collect();
    let current: String = marked
        .iter()
        .filter(|m| m.2)
        .map(|&(x, y, _)| buffer[(x, y)].symbol().to_string())
        .collect();
    assert_eq!(current, "Parser", "{marked:?}");
    // Up / Enter go to older matches, scrolling them into view; Down comes back.
    for _ in 0..11 {
        press(&mut s, k(KeyCode::Enter, NONE));
    }
    let shown = render(&mut s, 100, 30, now);
    assert!(
        shown.contains("1/12") && shown.contains("Answer 0: the Parser"),
        "{shown}"
    );
    assert!(!shown.contains("Answer 11:"), "scrolled up to it:\n{shown}");
    press(&mut s, k(KeyCode::Char('n'), CTRL));
    assert!(render(&mut s, 100, 30, now).contains("2/12"));
    press(&mut s, k(KeyCode::Up, NONE));
    press(&mut s, k(KeyCode::Up, NONE));
    assert!(
        render(&mut s, 100, 30, now).contains("12/12"),
        "wraps around"
    );
    // A capital matches only itself: "Parser" in the answers, not "parser" in no prompt.
    type_text(&mut s, "X");
    assert!(render(&mut s, 100, 30, now).contains("find: parserX  0/0"));
    press(&mut s, k(KeyCode::Esc, NONE));
    assert!(s.find.is_none());
    let shown = render(&mut s, 100, 30, now);
    assert!(!shown.contains("find:"), "{shown}");
}

#[test]
fn slash_find_opens_the_find_with_its_text_and_finds_expanded_previews_too() {
    let mut s = state();
    let now = Instant::now();
    send(&mut s, now, "list it");
    feed(&mut s, now, whole_turn("Done."));
    send(&mut s, now, "/find hello.txt");
    let shown = render(&mut s, 100, 30, now);
    assert!(shown.contains("find: hello.txt"), "{shown}");
    let f = s.find.as_ref().unwrap();
    assert!(!f.hits.is_empty(), "the call line names the file: {shown}");
}

#[test]
fn a_notice_too_long_for_the_status_line_ends_in_an_ellipsis_not_mid_word() {
    let now = Instant::now();
    let mut s = state();
    s.flash = Some((
        "Queued: it is sent when this turn ends (Up edits it, Esc removes it)".into(),
        now + std::time::Duration::from_secs(5),
    ));
    for width in [30usize, 50, 80] {
        let line = crate::tui::panes::status::line(&s, now, width);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert!(crate::tui::wrap::width(&text) <= width, "{width}: {text:?}");
        assert!(text.contains("Q"), "{width}: {text:?}");
        assert!(
            width < 50 || text.contains("Queued: it is"),
            "{width}: {text:?}"
        );
        assert!(text.contains('…'), "{width}: {text:?}");
    }
}
