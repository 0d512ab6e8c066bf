//! The conversation's commands and contents: slash commands, thoughts and call lines, earlier
//! sessions shown again, long pastes and prompts, `/copy N`.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent, TurnOutcome};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::{EntryKind, Focus, Overlay};
use crate::tui::update::{self, Effect, key_context};
use crossterm::event::KeyCode;

#[test]
fn copy_and_tools_and_unknown_commands() {
    let t0 = Instant::now();
    let mut s = state();
    assert!(update::apply(&mut s, Action::Copy, t0).is_empty());
    send(&mut s, t0, "hi");
    feed(&mut s, t0, whole_turn("the answer"));
    assert_eq!(
        send(&mut s, t0, "/copy"),
        vec![Effect::Copy("the answer".into())]
    );
    send(&mut s, t0, "/tools");
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("read_text_file [built-in]")
    );
    send(&mut s, t0, "/nope");
    assert_eq!(s.view.entries.last().unwrap().kind, EntryKind::Error);
    send(&mut s, t0, "/help");
    assert!(matches!(s.overlay, Overlay::Help { .. }));
    s.overlay = Overlay::None;
    assert_eq!(
        send(&mut s, t0, "/init"),
        vec![Effect::Command(AgentCommand::Init)]
    );
    assert!(s.busy(), "the init turn runs like a prompt");
    assert_eq!(send(&mut s, t0, "/quit"), vec![]);
    assert!(s.quit);
}

#[test]
fn thought_text_moves_to_the_timeline_and_nested_events_show_under_the_call() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "delegate");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ContentDelta("Let me ask a helper.".into()),
            AgentEvent::StepFinished(crate::events::StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: "p".into(),
                name: "delegate".into(),
                arguments: "{\"task\":\"count\"}".into(),
            },
            AgentEvent::Nested {
                parent_id: "p".into(),
                event: Box::new(AgentEvent::StepStarted { step: 1, max: 4 }),
            },
            AgentEvent::Nested {
                parent_id: "p".into(),
                event: Box::new(AgentEvent::ToolCallStarted {
                    id: "n".into(),
                    name: "list_files".into(),
                    arguments: "{}".into(),
                }),
            },
        ],
    );
    // The thought is not an answer: it stays in the conversation, dimmed, with its call under it.
    let kinds: Vec<EntryKind> = s.view.entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [EntryKind::User, EntryKind::Thought, EntryKind::Call]
    );
    assert_eq!(s.view.entries[1].text, "Let me ask a helper.");
    assert_eq!(
        s.view.transcript.steps[0].thought(),
        Some("Let me ask a helper.")
    );
    let sub = s.view.transcript.steps[0].calls[0].sub.as_deref().unwrap();
    assert_eq!(
        crate::tui::calls::sub_agent_lines(sub),
        vec!["↳ step 1".to_string(), "↳ list_files()".to_string()]
    );
    // While it runs, the call line spins (the frame moves with time).
    let busy = s.status.since().unwrap();
    let first = render(&mut s, 100, 20, busy);
    assert!(first.contains("◇ Let me ask a helper."), "{first}");
    assert!(first.contains("⚙ delegate(count) ⠋"), "{first}");
    // Its helper's steps show under it while it runs.
    assert!(first.contains("↳ list_files()"), "{first}");
    let later = render(
        &mut s,
        100,
        20,
        busy + std::time::Duration::from_millis(450),
    );
    assert!(later.contains("⚙ delegate(count) ⠼"), "{later}");
    feed(
        &mut s,
        t0,
        vec![AgentEvent::ToolFinished {
            id: "p".into(),
            name: "delegate".into(),
            result: serde_json::json!({"ok": false, "tool": "delegate", "error": "no such file: x\nmore"}).into(),
            outcome: crate::events::CallOutcome::Failed {
                error: "no such file: x\nmore".into(),
            },
            approved: false,
            duration: Some(std::time::Duration::from_millis(3)),
        }],
    );
    let done = render(&mut s, 100, 20, busy);
    assert!(
        done.contains("⚙ delegate(count) ✗ no such file: x"),
        "{done}"
    );
}

#[test]
fn earlier_history_is_shown_and_recallable() {
    let mut session = crate::agent::Session::new();
    session.push(crate::agent::Message::user("old question"));
    session.push(crate::agent::Message::assistant("old answer", None, vec![]));
    let mut s = state();
    crate::tui::update::show_session(&mut s, &session, std::time::Instant::now());
    assert_eq!(s.view.entries.len(), 2);
    assert_eq!(s.composer.prompt_history, vec!["old question".to_string()]);
    assert!(s.view.entries[1].done);
}

#[test]
fn step_labels_name_the_main_argument() {
    use crate::tui::calls::call_label;
    let args = r#"{"content":"x","relative_path":"hello.txt"}"#;
    assert_eq!(
        call_label("write_text_file", args),
        "write_text_file(hello.txt)"
    );
    assert_eq!(call_label("list_files", "{}"), "list_files()");
    assert_eq!(call_label("calc", "not json"), "calc()");
}

#[test]
fn a_long_history_opens_with_only_the_bottom_rendered_and_the_rest_on_the_way_up() {
    use crate::agent::{Message, Session};
    let t0 = Instant::now();
    let mut session = Session::new();
    for i in 0..1_000 {
        session.push(Message::user(format!("question number {i}")));
        session.push(Message::assistant(
            format!("## Answer {i}\n\nSome **markdown** with `code` and a list:\n\n- one\n- two\n"),
            None,
            vec![],
        ));
    }
    let mut s = state();
    crate::tui::update::show_session(&mut s, &session, std::time::Instant::now());
    let bottom = render(&mut s, 100, 30, t0);
    assert!(bottom.contains("Answer 999"), "{bottom}");
    let rendered = s
        .view
        .entries
        .iter()
        .filter(|e| e.cache.estimated.is_none())
        .count();
    assert!(
        rendered < 100,
        "only the entries near the view are rendered at start ({rendered})"
    );

    // Scrolled to the top, the first entries are rendered and shown.
    update::apply(&mut s, Action::ScrollTop, t0);
    let top = render(&mut s, 100, 30, t0);
    assert!(top.contains("question number 0"), "{top}");
    assert!(top.contains("Answer 0"), "{top}");
    // And back at the bottom, the newest answer is still where it was.
    update::apply(&mut s, Action::ScrollBottom, t0);
    let again = render(&mut s, 100, 30, t0);
    assert!(again.contains("Answer 999"), "{again}");
}

#[test]
fn earlier_history_comes_back_as_a_live_turn_left_it() {
    use crate::agent::{Message, Session};
    use crate::llm::{FunctionCall, ToolCall};
    let mut session = Session::new();
    session.push(Message::user("write hello.txt"));
    session.push(Message::assistant(
        "Let me write it.",
        Some("thinking about it".into()),
        vec![ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "write_text_file".into(),
                arguments: r#"{"relative_path":"hello.txt","content":"hi"}"#.into(),
            },
        }],
    ));
    session.push(Message::tool(
        "c1",
        r#"{"ok":true,"tool":"write_text_file"}"#,
    ));
    session.push(Message::assistant(
        "Done: **hello.txt** written.",
        None,
        vec![],
    ));
    let mut s = state();
    crate::tui::update::show_session(&mut s, &session, std::time::Instant::now());
    let kinds: Vec<EntryKind> = s.view.entries.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            EntryKind::User,
            EntryKind::Reasoning,
            EntryKind::Thought,
            EntryKind::Call,
            EntryKind::Assistant
        ],
        "the thought is not an answer"
    );
    assert_eq!(s.view.entries[1].text, "thinking about it");
    assert_eq!(s.view.entries[2].text, "Let me write it.");
    assert_eq!(s.view.entries[4].text, "Done: **hello.txt** written.");
    assert_eq!(s.view.transcript.steps.len(), 2);
    assert_eq!(
        s.view.transcript.steps[0].thought(),
        Some("Let me write it.")
    );
    assert_eq!(s.view.transcript.steps[0].reasoning, "thinking about it");
    assert!(
        s.view.transcript.steps[0].calls[0]
            .outcome()
            .unwrap()
            .is_ok()
    );
    assert_eq!(
        (
            s.view.transcript.steps[1].turn,
            s.view.transcript.steps[1].number
        ),
        (0, 2)
    );
    let screen = render(&mut s, 110, 24, Instant::now());
    assert!(
        screen.contains("▸ Step 1  write_text_file(hello.txt)  ✓"),
        "{screen}"
    );
    assert!(screen.contains("◇ Let me write it."), "{screen}");
    assert!(
        screen.contains("⚙ write_text_file(hello.txt) ✓"),
        "{screen}"
    );
}

#[test]
fn interrupted_and_failed_steps_are_marked_live_and_after_a_restart() {
    use crate::agent::{Message, Session};
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "q1");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ReasoningDelta("hmm".into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Interrupted,
                usage: None,
                last_usage: None,
            },
        ],
    );
    let live = render(&mut s, 110, 20, t0);
    assert!(live.contains("Step 1  ⏸ interrupted"), "{live}");
    assert!(
        live.contains("interrupted before the answer began"),
        "{live}"
    );

    let mut session = Session::new();
    session.push(Message::user("q1"));
    let mut cut = Message::assistant("", Some("hmm".into()), vec![]);
    cut.incomplete = Some(crate::agent::session::Incomplete::Interrupted);
    session.push(cut);
    session.push(Message::user("q2"));
    let mut failed = Message::assistant("half", None, vec![]);
    failed.incomplete = Some(crate::agent::session::Incomplete::Failed(
        "the stream closed".into(),
    ));
    session.push(failed);
    let mut restarted = state();
    crate::tui::update::show_session(&mut restarted, &session, std::time::Instant::now());
    let screen = render(&mut restarted, 110, 24, t0);
    assert!(
        screen.contains("interrupted before the answer began"),
        "{screen}"
    );
    assert!(screen.contains("Step 1  ⏸ interrupted"), "{screen}");
    assert!(screen.contains("Step 1  ✗ failed"), "{screen}");
}

#[test]
fn a_new_turn_brings_the_side_panes_back_to_the_live_step() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "first");
    feed(&mut s, t0, whole_turn("one"));
    // The person opens step 1 of turn 1 in the timeline.
    s.focus = Focus::Timeline;
    update::apply(&mut s, Action::SelectPrev, t0);
    assert!(s.view.selected.is_some());
    assert_eq!(s.view.detail_step().unwrap().turn, 0);
    s.focus = Focus::Input;
    send(&mut s, t0, "second");
    assert_eq!(s.view.selected, None, "the new turn is followed");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ReasoningDelta("thinking about turn two".into()),
        ],
    );
    let live = s.view.detail_step().unwrap();
    assert_eq!((live.turn, live.number), (1, 1));
    assert_eq!(live.reasoning, "thinking about turn two");
    // Browsing stops following; End in the pane resumes it.
    s.focus = Focus::Timeline;
    update::apply(&mut s, Action::SelectPrev, t0);
    assert!(s.view.selected.is_some());
    update::apply(&mut s, Action::ScrollBottom, t0);
    assert_eq!(s.view.selected, None);
}

#[test]
fn a_long_paste_is_one_marker_deleted_as_a_unit_and_sent_whole() {
    let t0 = Instant::now();
    let mut s = state();
    let big: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    update::apply(&mut s, Action::Edit(k(KeyCode::Char('x'), NONE)), t0);
    update::apply(&mut s, Action::Paste(big.replace('\n', "\r\n")), t0);
    assert_eq!(s.composer.input_text(), "x[pasted 5,000 lines]");
    // A short paste goes in as it is.
    update::apply(&mut s, Action::Paste("a\nb".into()), t0);
    assert_eq!(s.composer.input_text(), "x[pasted 5,000 lines]a\nb");
    // Backspace right after the marker removes it whole; so does Delete right before it.
    let mut t = state();
    update::apply(&mut t, Action::Paste(big.clone()), t0);
    update::apply(&mut t, Action::Edit(k(KeyCode::Backspace, NONE)), t0);
    assert_eq!(t.composer.input_text(), "");
    assert!(t.composer.pastes.is_empty());
    update::apply(&mut t, Action::Paste(big.clone()), t0);
    t.composer
        .input
        .move_cursor(ratatui_textarea::CursorMove::Head);
    update::apply(&mut t, Action::Edit(k(KeyCode::Delete, NONE)), t0);
    assert_eq!(t.composer.input_text(), "");
    // Sent, the marker is replaced by the whole paste.
    let effects = press_send(&mut s, t0);
    let expected = format!("x{big}a\nb");
    assert_eq!(
        effects,
        vec![Effect::Command(AgentCommand::Prompt(expected.clone()))]
    );
    assert!(s.composer.pastes.is_empty());
    assert_eq!(s.view.entries.last().unwrap().text, expected);
}

#[test]
fn a_long_prompt_is_folded_and_enter_in_the_conversation_shows_it_whole() {
    let t0 = Instant::now();
    let mut s = state();
    let big: String = (1..=40).map(|i| format!("row {i}\n")).collect();
    update::apply(&mut s, Action::Paste(big), t0);
    press_send(&mut s, t0);
    let folded = render(&mut s, 100, 30, t0);
    assert!(folded.contains("row 6"), "{folded}");
    assert!(!folded.contains("row 7 "), "{folded}");
    assert!(folded.contains("⋯ 34 more lines"), "{folded}");
    // Enter with the conversation focused shows it whole; again folds it.
    s.focus = Focus::Conversation;
    let ctx = key_context(&s, t0);
    let action = map_key(&ctx, k(KeyCode::Enter, NONE));
    assert_eq!(action, Action::ToggleFold);
    update::apply(&mut s, action, t0);
    update::apply(&mut s, Action::ScrollTop, t0);
    let whole = render(&mut s, 100, 60, t0);
    assert!(whole.contains("row 40"), "{whole}");
    assert!(!whole.contains("more lines"), "{whole}");
    update::apply(&mut s, Action::ToggleFold, t0);
    let again = render(&mut s, 100, 30, t0);
    assert!(again.contains("⋯ 34 more lines"), "{again}");
}

#[test]
fn copy_n_copies_the_numbered_code_block_of_the_last_answer() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hi");
    let answer = "First:\n\n```rust\nfn main() {}\n```\n\nThen:\n\n```\nplain\ntext\n```\n";
    feed(&mut s, t0, whole_turn(answer));
    // The headers carry the numbers that /copy takes.
    let screen = render(&mut s, 110, 30, t0);
    assert!(
        screen
            .lines()
            .any(|l| l.contains("╭─ rust") && l.contains(" 1 ─")),
        "{screen}"
    );
    assert!(screen.lines().any(|l| l.contains(" 2 ─")), "{screen}");
    assert_eq!(
        send(&mut s, t0, "/copy 2"),
        vec![Effect::Copy("plain\ntext\n".into())]
    );
    assert!(
        s.view
            .entries
            .last()
            .unwrap()
            .text
            .contains("code block 2 (2 lines)")
    );
    assert_eq!(
        send(&mut s, t0, "/copy 1"),
        vec![Effect::Copy("fn main() {}\n".into())]
    );
    for bad in ["/copy 3", "/copy 0", "/copy x"] {
        assert!(send(&mut s, t0, bad).is_empty(), "{bad}");
        let last = s.view.entries.last().unwrap();
        assert_eq!(last.kind, EntryKind::Error);
        assert!(last.text.contains("has 2 code blocks"), "{}", last.text);
    }
}

#[test]
fn a_message_sent_during_a_turn_waits_and_starts_when_the_turn_ends() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "first");
    assert!(s.busy());
    // Enter during the turn queues it: no command now, the input is free again.
    assert!(send(&mut s, t0, "second").is_empty());
    assert!(send(&mut s, t0, "third").is_empty());
    assert_eq!(s.composer.queued, ["second", "third"]);
    assert!(s.composer.input_empty());
    let screen = render(&mut s, 120, 20, t0);
    assert!(
        screen.contains("2 queued: second (Up edits · Esc removes)"),
        "{screen}"
    );
    // Up on the empty input takes the last one back to edit; Esc removes one.
    let ctx = key_context(&s, t0);
    assert_eq!(map_key(&ctx, k(KeyCode::Up, NONE)), Action::EditQueued);
    update::apply(&mut s, Action::EditQueued, t0);
    assert_eq!(s.composer.input_text(), "third");
    assert_eq!(s.composer.queued, ["second"]);
    s.composer.reset_input();
    let ctx = key_context(&s, t0);
    assert_eq!(map_key(&ctx, k(KeyCode::Esc, NONE)), Action::DropQueued);
    send(&mut s, t0, "fourth");
    update::apply(&mut s, Action::DropQueued, t0);
    assert_eq!(s.composer.queued, ["second"]);
    // A command that cannot run during a turn stays in the input.
    s.composer.set_input("/clear");
    assert!(press_send(&mut s, t0).is_empty());
    assert_eq!(s.composer.input_text(), "/clear");
    s.composer.reset_input();
    // Nothing starts while the turn runs; when its end is applied, the oldest message does.
    let mut turn = whole_turn("done");
    let end = turn.pop().unwrap();
    assert!(feed(&mut s, t0, turn).is_empty());
    assert_eq!(
        feed(&mut s, t0, vec![end]),
        vec![Effect::Command(AgentCommand::Prompt("second".into()))]
    );
    assert!(s.busy() && s.composer.queued.is_empty());
}

#[test]
fn a_running_call_shows_its_latest_output_lines() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "build");
    let mut events = vec![
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ToolCallStarted {
            id: "c".into(),
            name: "mcp__ci__build".into(),
            arguments: "{}".into(),
        },
    ];
    for i in 1..=5 {
        events.push(AgentEvent::ToolOutputDelta {
            id: "c".into(),
            text: format!("[{i}/5] \x1b[31mstep {i}\x1b[0m\n"),
        });
    }
    feed(&mut s, t0, events);
    let busy = s.status.since().unwrap();
    let screen = render(&mut s, 100, 20, busy);
    // The conversation pane, without the side panes beside it.
    let conversation: String = screen
        .lines()
        .map(|l| l.chars().take(60).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(conversation.contains("[5/5] step 5"), "{screen}");
    assert!(conversation.contains("[3/5] step 3"), "{screen}");
    assert!(
        !conversation.contains("[2/5]"),
        "only the latest lines: {screen}"
    );
    assert!(!screen.contains("[31m"), "{screen}");
}

/// A long session opens by making only what is on screen: the calls far above the view keep
/// their saved text unparsed, the last ones are drawn with their output, and scrolling to the
/// top draws the first call's output too.
#[test]
fn a_long_session_parses_only_the_calls_it_shows() {
    use crate::agent::session::Message;
    use crate::events::CallOutcome;
    use crate::llm::{FunctionCall, ToolCall};
    let mut session = crate::agent::Session::new();
    for n in 0..300 {
        session.push(Message::user(format!("question {n}")));
        session.push(Message::assistant(
            "",
            None,
            vec![ToolCall {
                id: format!("c{n}"),
                kind: "function".into(),
                function: FunctionCall {
                    name: "read_text_file".into(),
                    arguments: format!(r#"{{"relative_path":"f{n}.txt"}}"#),
                },
            }],
        ));
        session.push(Message::tool_result(
            format!("c{n}"),
            format!(r#"{{"ok":true,"tool":"read_text_file","content":"body of file {n}\nline two\nline three\nline four\nline five"}}"#),
            (CallOutcome::Ok, false),
        ));
        session.push(Message::assistant(format!("answer {n}"), None, vec![]));
    }
    let t0 = std::time::Instant::now();
    let mut s = state();
    crate::tui::update::show_session(&mut s, &session, t0);
    let screen = render(&mut s, 120, 40, t0);
    assert!(screen.contains("body of file 299"), "{screen}");
    let parsed = |s: &crate::tui::state::State| {
        s.view
            .transcript
            .steps
            .iter()
            .flat_map(|step| &step.calls)
            .filter(|c| {
                c.finished
                    .as_ref()
                    .is_some_and(|f| f.result.parsed_or_text().is_ok())
            })
            .count()
    };
    let shown = parsed(&s);
    assert!(
        (1..30).contains(&shown),
        "{shown} of 300 observations parsed to open the session"
    );
    // Home in the conversation: its first call is drawn with its output.
    update::apply(&mut s, Action::ScrollTop, t0);
    let top = render(&mut s, 120, 40, t0);
    assert!(top.contains("body of file 0"), "{top}");
    assert!(
        parsed(&s) < 60,
        "{} parsed after scrolling to the top",
        parsed(&s)
    );
}
