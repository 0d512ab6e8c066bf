//! Every pane rendered with TestBackend in the states that matter, as insta snapshots. Time is
//! injected, so the spinner and elapsed seconds are fixed.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::{AgentEvent, AgentState, TurnOutcome};
use crate::llm::Preset;
use crate::tui::keymap::Action;
use crate::tui::state::Focus;
use crate::tui::update;
use serde_json::json;

fn later(t0: Instant) -> Instant {
    t0 + Duration::from_secs(3)
}

#[test]
fn empty_screen() {
    let t0 = Instant::now();
    let mut s = state();
    insta::assert_snapshot!(render(&mut s, 100, 24, t0));
}

#[test]
fn notices_at_start() {
    let mut o = options();
    o.notices = vec![
        "No API key: set DEEPSEEK_API_KEY in the environment or in .env, then restart.".into(),
    ];
    let mut s = crate::tui::state::State::new(&o);
    insta::assert_snapshot!(render(&mut s, 100, 16, Instant::now()));
}

#[test]
fn streaming_answer_with_half_a_table() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Compare them in a table");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::State(AgentState::Thinking),
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ContentDelta(
                "## Result\n\n| name | size |\n|---|---|\n| a.txt | 3 |\n| b.t".into(),
            ),
        ],
    );
    insta::assert_snapshot!(render(&mut s, 100, 24, later(t0)));
}

#[test]
fn collapsed_steps_after_a_turn() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Write hello.txt");
    feed(
        &mut s,
        t0,
        whole_turn("Done: I wrote **hello.txt**.\n\n- 2 bytes\n- `hi`"),
    );
    insta::assert_snapshot!(render(&mut s, 110, 24, later(t0)));
}

#[test]
fn expanded_steps() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Write hello.txt");
    feed(&mut s, t0, whole_turn("Done."));
    update::apply(&mut s, Action::ToggleAllSteps, t0);
    s.focus = Focus::Timeline;
    insta::assert_snapshot!(render(&mut s, 110, 34, later(t0)));
}

#[test]
fn reasoning_of_the_pro_preset() {
    let t0 = Instant::now();
    let mut s = state();
    update::apply(&mut s, Action::TogglePreset, t0);
    assert_eq!(s.preset, Preset::Pro);
    send(&mut s, t0, "What is 2+2?");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::State(AgentState::Thinking),
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ReasoningDelta("The person asks for 2+2. ".into()),
            AgentEvent::ReasoningDelta("That is 4; no tool is needed.".into()),
        ],
    );
    insta::assert_snapshot!(render(&mut s, 100, 24, later(t0)));
}

#[test]
fn failed_tool_and_live_output() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Read missing.txt and list the folder");
    let mut events = tool_step(
        1,
        "c1",
        "read_text_file",
        json!({"path": "missing.txt"}),
        json!({"ok": false, "tool": "read_text_file", "error": "no such file: missing.txt"}),
        3,
    );
    events.extend([
        AgentEvent::StepStarted { step: 2, max: 10 },
        AgentEvent::ToolCallStarted {
            id: "c2".into(),
            name: "list_files".into(),
            arguments: "{\"path\":\".\"}".into(),
        },
        AgentEvent::ToolOutputDelta {
            id: "c2".into(),
            text: "a.txt\nb.txt\n".into(),
        },
    ]);
    feed(&mut s, t0, events);
    insta::assert_snapshot!(render(&mut s, 110, 26, later(t0)));
}

#[test]
fn error_line_and_retry_status() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hello");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::State(AgentState::Thinking),
            AgentEvent::Retrying {
                attempt: 2,
                max_attempts: 5,
                delay: Duration::from_secs(4),
                reason: "503".into(),
                cause: crate::llm::RetryCause::ServerError(503),
                restarts: false,
            },
        ],
    );
    let retrying = render(&mut s, 120, 12, t0 + Duration::from_millis(1500));
    insta::assert_snapshot!("retrying", retrying);
    feed(&mut s, t0, vec![
        AgentEvent::Error { message: "The API key was rejected (401). Check DEEPSEEK_API_KEY and send the prompt again.".into() },
        AgentEvent::TurnFinished { outcome: TurnOutcome::Failed(crate::events::FailCause::RefusedKey), usage: None, last_usage: None },
    ]);
    insta::assert_snapshot!("error_line", render(&mut s, 100, 14, later(t0)));
}

#[test]
fn interrupted_answer_stays_marked() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Tell me a long story");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ContentDelta("Once upon a time".into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Interrupted,
                usage: None,
                last_usage: None,
            },
        ],
    );
    insta::assert_snapshot!(render(&mut s, 80, 14, later(t0)));
}

#[test]
fn narrow_terminal_stacks_the_panes() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "Write hello.txt");
    feed(&mut s, t0, whole_turn("Done."));
    insta::assert_snapshot!(render(&mut s, 60, 28, later(t0)));
}

#[test]
fn chinese_text_and_emoji_wrap() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "你好！请用中文介绍一下你自己 🙂");
    feed(&mut s, t0, vec![
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ContentDelta("我是 MiniClaw，一个终端里的助手。我可以读写工作区里的文件、搜索文本、计算表达式。🦀🚀".into()),
        AgentEvent::TurnFinished { outcome: TurnOutcome::Answered, usage: None, last_usage: None },
    ]);
    insta::assert_snapshot!(render(&mut s, 44, 20, later(t0)));
}

#[test]
fn help_overlay() {
    let mut s = state();
    update::apply(&mut s, Action::ShowHelp, Instant::now());
    insta::assert_snapshot!(render(&mut s, 100, 32, Instant::now()));
}

#[test]
fn confirm_dialog() {
    let mut s = state();
    send(&mut s, Instant::now(), "/clear");
    insta::assert_snapshot!(render(&mut s, 80, 16, Instant::now()));
}

#[test]
fn terminal_too_small() {
    let mut s = state();
    insta::assert_snapshot!(render(&mut s, 24, 6, Instant::now()));
}

#[test]
fn scrolled_up_shows_more_below_marker() {
    let t0 = Instant::now();
    let mut s = state();
    for i in 0..30 {
        send(&mut s, t0, &format!("prompt {i}"));
        feed(
            &mut s,
            t0,
            vec![
                AgentEvent::ContentDelta(format!("answer {i}")),
                AgentEvent::TurnFinished {
                    outcome: TurnOutcome::Answered,
                    usage: None,
                    last_usage: None,
                },
            ],
        );
    }
    render(&mut s, 80, 16, t0);
    update::apply(&mut s, Action::ScrollPage(-1), t0);
    insta::assert_snapshot!(render(&mut s, 80, 16, t0));
}

#[test]
fn the_conversation_shows_thoughts_and_calls_with_the_side_panes_hidden() {
    let t0 = Instant::now();
    let mut s = state();
    update::apply(&mut s, Action::ToggleSidePanes, t0);
    send(&mut s, t0, "What is in this folder?");
    let mut events = vec![
        AgentEvent::State(AgentState::Thinking),
        AgentEvent::StepStarted { step: 1, max: 10 },
        AgentEvent::ContentDelta("I'll look at the folder first.".into()),
    ];
    events.extend(tool_step(
        1,
        "c1",
        "run_shell_command",
        json!({"command": "ls", "args": ["-la"]}),
        json!({"ok": true, "tool": "run_shell_command", "stdout": "a.txt\n"}),
        3,
    ));
    events.extend(vec![
        AgentEvent::StepStarted { step: 2, max: 10 },
        AgentEvent::ContentDelta("Now both files, side by side.".into()),
        AgentEvent::StepFinished(crate::events::StepEnd::Thought),
        AgentEvent::ToolCallStarted {
            id: "c2".into(),
            name: "read_text_file".into(),
            arguments: json!({"relative_path": "a.txt"}).to_string(),
        },
        AgentEvent::ToolCallStarted {
            id: "c3".into(),
            name: "read_text_file".into(),
            arguments: json!({"relative_path": "missing.txt"}).to_string(),
        },
        AgentEvent::ToolCallStarted {
            id: "c4".into(),
            name: "search_files".into(),
            arguments: json!({"pattern": "TODO", "relative_dir": "src"}).to_string(),
        },
        AgentEvent::State(AgentState::Acting),
        AgentEvent::ToolFinished {
            id: "c3".into(),
            name: "read_text_file".into(),
            result:
                json!({"ok": false, "tool": "read_text_file", "error": "no such file: missing.txt"})
                    .into(),
            outcome: crate::events::CallOutcome::Failed {
                error: "no such file: missing.txt".into(),
            },
            approved: false,
            duration: Some(Duration::from_millis(1)),
        },
        AgentEvent::ToolFinished {
            id: "c2".into(),
            name: "read_text_file".into(),
            result: json!({"ok": true, "tool": "read_text_file", "content": "hi"}).into(),
            outcome: crate::events::CallOutcome::Ok,
            approved: false,
            duration: Some(Duration::from_millis(1500)),
        },
    ]);
    feed(&mut s, t0, events);
    let running = render(&mut s, 80, 20, later(t0));
    insta::assert_snapshot!(running);
    // The thought is dimmed: drawn in the theme's muted style, not as answer text.
    let backend = render_backend(&mut s, 80, 20, later(t0));
    let buffer = backend.buffer();
    let muted = s.theme.muted.fg;
    assert!(muted.is_some() && muted != s.theme.text.fg);
    assert_eq!(buffer[(3, 4)].symbol(), "I");
    assert_eq!(buffer[(3, 4)].fg, muted.unwrap());
}
