//! Key handling and state changes as pure functions: tables of (context, key) -> action, and
//! (state, action/event) -> state and effects.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent, TurnOutcome};
use crate::llm::Preset;
use crate::tui::keymap::{Action, KeyContext, map_key, map_mouse, map_paste};
use crate::tui::state::{EntryKind, Focus, Overlay, OverlayKind, Pane};
use crate::tui::update::{self, Effect, key_context};
use crossterm::event::{KeyCode, KeyEvent, MouseEvent, MouseEventKind};

fn ctx() -> KeyContext {
    KeyContext {
        focus: Focus::Input,
        overlay: OverlayKind::None,
        busy: false,
        input_empty: true,
        on_first_line: true,
        on_last_line: true,
        quit_armed: false,
        queued: false,
        picker_confirming: false,
        typing_reason: false,
        editing_prefix: false,
        popup: false,
        answer_fresh: false,
        plan_draft: false,
        searching: false,
        finding: false,
    }
}

#[test]
fn key_table() {
    let busy = KeyContext {
        busy: true,
        ..ctx()
    };
    let typed = KeyContext {
        input_empty: false,
        on_first_line: false,
        on_last_line: false,
        ..ctx()
    };
    let timeline = KeyContext {
        focus: Focus::Timeline,
        ..ctx()
    };
    let conv = KeyContext {
        focus: Focus::Conversation,
        ..ctx()
    };

    let help = KeyContext {
        overlay: OverlayKind::Help,
        ..ctx()
    };
    let confirm = KeyContext {
        overlay: OverlayKind::ConfirmClear,
        ..ctx()
    };
    let armed = KeyContext {
        quit_armed: true,
        ..ctx()
    };
    let table: Vec<(KeyContext, KeyEvent, Action)> = vec![
        (ctx(), k(KeyCode::Enter, NONE), Action::Send),
        (ctx(), k(KeyCode::Enter, ALT), Action::Newline),
        (ctx(), k(KeyCode::Char('j'), CTRL), Action::Newline),
        (ctx(), k(KeyCode::Up, NONE), Action::HistoryPrev),
        (ctx(), k(KeyCode::Down, NONE), Action::HistoryNext),
        (
            typed,
            k(KeyCode::Up, NONE),
            Action::Edit(k(KeyCode::Up, NONE)),
        ),
        (
            typed,
            k(KeyCode::Char('d'), CTRL),
            Action::Edit(k(KeyCode::Char('d'), CTRL)),
        ),
        (ctx(), k(KeyCode::Char('d'), CTRL), Action::Quit),
        (ctx(), k(KeyCode::F(1), NONE), Action::ShowHelp),
        (ctx(), k(KeyCode::F(2), NONE), Action::TogglePreset),
        (ctx(), k(KeyCode::Char('l'), CTRL), Action::AskClear),
        (ctx(), k(KeyCode::Char('o'), CTRL), Action::ToggleAllSteps),
        (ctx(), k(KeyCode::Char('t'), CTRL), Action::ToggleReasoning),
        (ctx(), k(KeyCode::Char('y'), CTRL), Action::Copy),
        (ctx(), k(KeyCode::PageUp, NONE), Action::ScrollPage(-1)),
        (ctx(), k(KeyCode::PageDown, NONE), Action::ScrollPage(1)),
        (ctx(), k(KeyCode::Up, SHIFT), Action::ScrollLine(-1)),
        (ctx(), k(KeyCode::Down, SHIFT), Action::ScrollLine(1)),
        (ctx(), k(KeyCode::Tab, NONE), Action::FocusNext),
        (ctx(), k(KeyCode::BackTab, SHIFT), Action::CycleApproval),
        (
            typed,
            k(KeyCode::Home, NONE),
            Action::Edit(k(KeyCode::Home, NONE)),
        ),
        (ctx(), k(KeyCode::Home, NONE), Action::ScrollTop),
        (ctx(), k(KeyCode::End, NONE), Action::ScrollBottom),
        (typed, k(KeyCode::End, CTRL), Action::ScrollBottom),
        (typed, k(KeyCode::Home, CTRL), Action::ScrollTop),
        (conv, k(KeyCode::Home, NONE), Action::ScrollTop),
        (conv, k(KeyCode::End, NONE), Action::ScrollBottom),
        (conv, k(KeyCode::Esc, NONE), Action::FocusInput),
        (
            conv,
            k(KeyCode::Char('a'), NONE),
            Action::Edit(k(KeyCode::Char('a'), NONE)),
        ),
        (timeline, k(KeyCode::Up, NONE), Action::SelectPrev),
        (timeline, k(KeyCode::Down, NONE), Action::SelectNext),
        (timeline, k(KeyCode::Enter, NONE), Action::ToggleStep),
        (timeline, k(KeyCode::Char(' '), NONE), Action::ToggleStep),
        (busy, k(KeyCode::Esc, NONE), Action::Interrupt),
        (busy, k(KeyCode::Char('c'), CTRL), Action::Interrupt),
        (ctx(), k(KeyCode::Char('c'), CTRL), Action::ClearInput),
        (armed, k(KeyCode::Char('c'), CTRL), Action::Quit),
        (ctx(), k(KeyCode::Esc, NONE), Action::None),
        (help, k(KeyCode::Esc, NONE), Action::CloseOverlay),
        (help, k(KeyCode::Char('x'), NONE), Action::None),
        (confirm, k(KeyCode::Char('y'), NONE), Action::ConfirmYes),
        (confirm, k(KeyCode::Char('n'), NONE), Action::ConfirmNo),
        (confirm, k(KeyCode::Enter, NONE), Action::ConfirmNo),
    ];
    for (i, (c, key, want)) in table.into_iter().enumerate() {
        assert_eq!(map_key(&c, key), want, "row {i}: {key:?} in {c:?}");
    }
}

#[test]
fn mouse_wheel_and_paste() {
    let m = |kind| MouseEvent {
        kind,
        column: 5,
        row: 7,
        modifiers: NONE,
    };
    assert_eq!(
        map_mouse(&ctx(), m(MouseEventKind::ScrollUp)),
        Action::ScrollAt {
            column: 5,
            row: 7,
            delta: -3
        }
    );
    assert_eq!(map_mouse(&ctx(), m(MouseEventKind::Moved)), Action::None);
    assert_eq!(
        map_paste(&ctx(), "a\nb".into()),
        Action::Paste("a\nb".into())
    );
}

#[test]
fn paste_inserts_newlines_without_sending() {
    let mut s = state();
    let fx = update::apply(
        &mut s,
        Action::Paste("line one\r\nline two".into()),
        Instant::now(),
    );
    assert!(fx.is_empty());
    assert_eq!(s.composer.input_text(), "line one\nline two");
    assert!(s.view.entries.is_empty());
}

#[test]
fn enter_sends_the_prompt_and_empties_the_input() {
    let t0 = Instant::now();
    let mut s = state();
    let fx = send(&mut s, t0, "hello\nworld");
    assert_eq!(
        fx,
        vec![Effect::Command(AgentCommand::Prompt("hello\nworld".into()))]
    );
    assert!(s.composer.input_empty());
    assert_eq!(s.view.entries[0].kind, EntryKind::User);
    assert!(s.busy());
    // A second prompt while busy is queued, with a hint in the status line, not lost.
    let fx = send(&mut s, t0, "again");
    assert!(fx.is_empty());
    assert_eq!(s.view.entries.last().unwrap().kind, EntryKind::User);
    assert!(s.flash.as_ref().unwrap().0.contains("Queued"));
    assert_eq!(s.composer.queued, ["again"]);
    let screen = render(&mut s, 120, 20, t0);
    assert!(
        screen.contains("Queued: it is sent when this turn ends"),
        "{screen}"
    );
    // The hint goes away by itself.
    let later = render(&mut s, 120, 20, t0 + Duration::from_secs(3));
    assert!(!later.contains("Queued: it is sent"), "{later}");
}

#[test]
fn up_and_down_recall_earlier_prompts() {
    let t0 = Instant::now();
    let mut s = state();
    for p in ["first", "second"] {
        send(&mut s, t0, p);
        let _ = update::on_event(&mut s, turn_over(), t0);
    }
    s.composer.set_input("draft");
    update::apply(&mut s, Action::HistoryPrev, t0);
    assert_eq!(s.composer.input_text(), "second");
    update::apply(&mut s, Action::HistoryPrev, t0);
    assert_eq!(s.composer.input_text(), "first");
    update::apply(&mut s, Action::HistoryPrev, t0);
    assert_eq!(s.composer.input_text(), "first");
    update::apply(&mut s, Action::HistoryNext, t0);
    update::apply(&mut s, Action::HistoryNext, t0);
    assert_eq!(s.composer.input_text(), "draft");
}

#[test]
fn f2_and_model_command_switch_the_preset_at_once() {
    let t0 = Instant::now();
    let mut s = state();
    let fx = update::apply(&mut s, Action::TogglePreset, t0);
    assert_eq!(s.preset, Preset::Pro);
    assert_eq!(fx, vec![Effect::SetPreset(Preset::Pro)]);
    let fx = send(&mut s, t0, "/model deepseek-v4-flash");
    assert_eq!(fx, vec![Effect::SetPreset(Preset::Flash)]);
    assert_eq!(s.preset, Preset::Flash);
    // Any model name, as --model takes, sent as it is.
    let fx = send(&mut s, t0, "/model qwen2.5-coder");
    assert_eq!(
        fx,
        vec![Effect::SetPreset(Preset::Custom("qwen2.5-coder".into()))]
    );
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("sent as it is")
    );
    send(&mut s, t0, "/model");
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("deepseek-flash")
    );
}

#[test]
fn steps_command_sets_the_limit_for_the_rest_of_the_session() {
    let t0 = Instant::now();
    let mut s = state();
    let fx = send(&mut s, t0, "/steps 12");
    assert_eq!(fx, vec![Effect::Command(AgentCommand::SetMaxSteps(12))]);
    assert_eq!(s.status.max_steps, 12);
    for bad in ["/steps 0", "/steps 101", "/steps many"] {
        assert!(send(&mut s, t0, bad).is_empty(), "{bad}");
        assert_eq!(
            s.view.entries.last().unwrap().kind,
            EntryKind::Error,
            "{bad}"
        );
    }
    assert_eq!(s.status.max_steps, 12);
    send(&mut s, t0, "/steps");
    assert!(s.view.entries.last().unwrap().text.contains("at most 12"));
}

#[test]
fn the_step_limit_is_said_once_as_a_notice() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "loop");
    let before = s.view.entries.len();
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepLimitReached { max: 6 },
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::StepLimit,
                usage: None,
                last_usage: None,
            },
        ],
    );
    let added: Vec<_> = s.view.entries[before..].iter().collect();
    let notices = added
        .iter()
        .filter(|e| e.text.contains("step limit"))
        .count();
    assert_eq!(notices, 1, "{added:?}");
    assert!(added.iter().all(|e| e.kind != EntryKind::Error));
    assert!(
        added
            .iter()
            .any(|e| e.text.contains("Press Enter to go on for another 6 steps")),
        "{added:?}"
    );
    // Enter on the empty input goes on for another round; only once.
    let effects = press_send(&mut s, t0);
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Command(AgentCommand::Prompt(p)) if p == "continue")),
        "{effects:?}"
    );
}

#[test]
fn clearing_asks_first() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hi");
    feed(&mut s, t0, whole_turn("hello"));
    update::apply(&mut s, Action::AskClear, t0);
    assert_eq!(s.overlay, Overlay::ConfirmClear);
    assert!(update::apply(&mut s, Action::ConfirmNo, t0).is_empty());
    assert_eq!(s.overlay, Overlay::None);
    assert!(!s.view.entries.is_empty());
    send(&mut s, t0, "/clear");
    assert_eq!(s.overlay, Overlay::ConfirmClear);
    let fx = update::apply(&mut s, Action::ConfirmYes, t0);
    assert_eq!(fx, vec![Effect::Command(AgentCommand::ClearHistory)]);
    assert!(s.view.entries.is_empty() && s.view.transcript.steps.is_empty());
}

#[test]
fn clearing_is_refused_while_a_turn_runs() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "a long one");
    assert!(s.busy());
    assert!(update::apply(&mut s, Action::AskClear, t0).is_empty());
    assert_eq!(s.overlay, Overlay::None);
    assert!(
        s.flash
            .as_ref()
            .unwrap()
            .0
            .contains("press Esc to interrupt it")
    );
}

#[test]
fn ctrl_c_clears_then_quits_within_two_seconds() {
    let t0 = Instant::now();
    let mut s = state();
    s.composer.set_input("some text");
    let c = k(KeyCode::Char('c'), CTRL);
    let a = map_key(&key_context(&s, t0), c);
    assert_eq!(a, Action::ClearInput);
    update::apply(&mut s, a, t0);
    assert!(s.composer.input_empty());
    // Too late: it only clears again.
    let late = t0 + Duration::from_secs(3);
    assert_eq!(map_key(&key_context(&s, late), c), Action::ClearInput);
    update::apply(&mut s, Action::ClearInput, late);
    let soon = late + Duration::from_millis(500);
    let a = map_key(&key_context(&s, soon), c);
    assert_eq!(a, Action::Quit);
    assert!(update::apply(&mut s, a, soon).is_empty());
    assert!(s.quit);
}

#[test]
fn interrupt_only_while_busy_and_the_partial_answer_stays() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(update::apply(&mut s, Action::Interrupt, t0).is_empty());
    send(&mut s, t0, "story");
    assert_eq!(
        update::apply(&mut s, Action::Interrupt, t0),
        vec![Effect::Interrupt]
    );
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ContentDelta("Once".into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Interrupted,
                usage: None,
                last_usage: None,
            },
        ],
    );
    let last = s.view.entries.last().unwrap();
    assert_eq!(last.text, "Once");
    assert!(last.interrupted && !s.busy());
}

#[test]
fn scrolled_up_view_stays_put_until_end_or_send() {
    let t0 = Instant::now();
    let mut s = state();
    for i in 0..20 {
        s.view.push(EntryKind::Notice, format!("notice {i}"));
    }
    render(&mut s, 80, 16, t0);
    update::apply(&mut s, Action::ScrollPage(-1), t0);
    let top = s.scroll[Pane::Conversation].effective_top();
    assert!(!s.scroll[Pane::Conversation].follow);
    feed(&mut s, t0, vec![AgentEvent::Notice("new output".into())]);
    render(&mut s, 80, 16, t0);
    assert_eq!(s.scroll[Pane::Conversation].effective_top(), top);
    assert!(s.scroll[Pane::Conversation].more_below());
    update::apply(&mut s, Action::ScrollBottom, t0);
    assert!(s.scroll[Pane::Conversation].follow);
    update::apply(&mut s, Action::ScrollTop, t0);
    send(&mut s, t0, "hi");
    assert!(s.scroll[Pane::Conversation].follow);
}

#[test]
fn focus_cycles_through_shown_panes_and_timeline_selects() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "go");
    feed(&mut s, t0, whole_turn("done"));
    render(&mut s, 120, 30, t0);
    update::apply(&mut s, Action::FocusNext, t0);
    assert_eq!(s.focus, Focus::Conversation);
    update::apply(&mut s, Action::FocusNext, t0);
    assert_eq!(s.focus, Focus::Timeline);
    assert_eq!(s.view.selected, Some(1));
    update::apply(&mut s, Action::SelectPrev, t0);
    update::apply(&mut s, Action::ToggleStep, t0);
    assert!(s.view.expanded.contains(&0) && !s.view.expanded.contains(&1));
    // Home selects the first step, End follows the live one again.
    update::apply(&mut s, Action::SelectNext, t0);
    update::apply(&mut s, Action::ScrollTop, t0);
    assert_eq!(s.view.selected, Some(0));
    update::apply(&mut s, Action::ScrollBottom, t0);
    assert_eq!(s.view.selected, None);
    // Round the panes back to the input.
    while s.focus != Focus::Input {
        update::apply(&mut s, Action::FocusNext, t0);
    }
    update::apply(&mut s, Action::FocusNext, t0);
    assert_eq!(s.focus, Focus::Conversation);
}

#[test]
fn the_help_scrolls_in_a_short_terminal() {
    let t0 = Instant::now();
    let mut s = state();
    update::apply(&mut s, Action::ShowHelp, t0);
    let first = render(&mut s, 80, 24, t0);
    assert!(first.contains("↓ more"), "{first}");
    assert!(!first.contains("closes this help"), "{first}");
    let help = KeyContext {
        overlay: OverlayKind::Help,
        ..ctx()
    };
    let down = map_key(&help, k(KeyCode::PageDown, NONE));
    assert_eq!(down, Action::ScrollHelp(10));
    let mut pages = 0;
    while !render(&mut s, 80, 24, t0).contains("closes this help") {
        assert!(pages < 30, "the end of the help is never reached");
        update::apply(&mut s, down.clone(), t0);
        pages += 1;
    }
    let end = render(&mut s, 80, 24, t0);
    assert!(end.contains("Esc, F1 or q closes this help"), "{end}");
    assert!(end.contains("/quit"), "{end}");
    // It stops at the end: one line up already shows more below.
    let last = s.overlay.clone();
    update::apply(&mut s, down, t0);
    assert_eq!(s.overlay, last);
    update::apply(&mut s, map_key(&help, k(KeyCode::Up, NONE)), t0);
    assert!(!render(&mut s, 80, 24, t0).contains("closes this help"));
}

/// The key, mapped in the state's context and applied: what pressing it does.
fn press(s: &mut crate::tui::state::State, key: KeyEvent, now: Instant) {
    let action = map_key(&key_context(s, now), key);
    update::apply(s, action, now);
}

#[test]
fn ctrl_u_k_w_edit_as_readline_and_undo_moves_to_ctrl_z() {
    use crossterm::event::KeyModifiers as M;
    let now = Instant::now();
    let ctrl = |c| KeyEvent::new(KeyCode::Char(c), M::CONTROL);
    let mut s = state();
    s.composer.set_input("one two three");
    // The cursor at the end: Ctrl+W takes the word before it.
    s.composer
        .input
        .move_cursor(ratatui_textarea::CursorMove::End);
    press(&mut s, ctrl('w'), now);
    assert_eq!(s.composer.input_expanded(), "one two ");
    // Ctrl+Z undoes it; Alt+Z redoes it.
    press(&mut s, ctrl('z'), now);
    assert_eq!(s.composer.input_expanded(), "one two three");
    press(&mut s, KeyEvent::new(KeyCode::Char('z'), M::ALT), now);
    assert_eq!(s.composer.input_expanded(), "one two ");
    // From the line's middle: Ctrl+K deletes to its end, Ctrl+U to its start.
    s.composer.set_input("head tail");
    s.composer
        .input
        .move_cursor(ratatui_textarea::CursorMove::Jump(0, 4));
    press(&mut s, ctrl('k'), now);
    assert_eq!(s.composer.input_expanded(), "head");
    press(&mut s, ctrl('u'), now);
    assert_eq!(s.composer.input_expanded(), "");
}
