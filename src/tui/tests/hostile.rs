//! Hostile text never reaches the terminal raw: escape sequences and control characters from the
//! model, files or tools are dropped before drawing, and a megabyte paste is taken whole.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentEvent, AgentState, TurnOutcome};
use crate::tui::keymap::Action;
use crate::tui::update;
use serde_json::json;

const NASTY: &str = "A\x1b]52;c;aGk=\x07B\x1b[2J\x1b[31mC\u{9b}31mD\x08E\rF\x00G\u{7f}H";

/// Every cell of the drawn screen, checked for control characters.
fn assert_no_control_cells(state: &mut crate::tui::state::State, w: u16, h: u16) -> String {
    let backend = render_backend(state, w, h, Instant::now());
    for cell in backend.buffer().content() {
        assert!(
            !cell.symbol().chars().any(char::is_control),
            "a control character reached the screen: {:?}",
            cell.symbol()
        );
    }
    backend.to_string()
}

#[test]
fn escape_sequences_in_model_output_tools_and_reasoning_are_not_drawn_raw() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, &format!("prompt {NASTY}"));
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::State(AgentState::Thinking),
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ReasoningDelta(format!("think {NASTY}\n")),
            AgentEvent::ContentDelta(format!("thought {NASTY}\n")),
            AgentEvent::StepFinished(crate::events::StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: format!("read_text_file{NASTY}"),
                arguments: json!({"relative_path": NASTY}).to_string(),
            },
            AgentEvent::ToolOutputDelta {
                id: "c1".into(),
                text: format!("{NASTY}\n"),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "read_text_file".into(),
                result: json!({"ok": true, "tool": "read_text_file", "content": NASTY}).into(),
                outcome: crate::events::CallOutcome::Ok,
                approved: false,
                duration: Some(std::time::Duration::from_millis(3)),
            },
            AgentEvent::StepStarted { step: 2, max: 10 },
            AgentEvent::ContentDelta(format!(
                "# Answer {NASTY}\n\n| a | b |\n|---|---|\n| {NASTY} | x |\n\n```\n{NASTY}\n```\n"
            )),
            AgentEvent::Error {
                message: format!("error {NASTY}"),
            },
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ],
    );
    update::apply(&mut s, Action::ToggleAllSteps, t0);
    let screen = assert_no_control_cells(&mut s, 120, 50);
    assert!(
        screen.contains("Answer"),
        "the text around the sequences still shows:\n{screen}"
    );
    assert_no_control_cells(&mut s, 60, 40);
}

#[test]
fn a_megabyte_paste_is_kept_whole_without_sending() {
    let t0 = Instant::now();
    let mut s = state();
    let line = "0123456789abcdef你好🦀\n";
    let big: String = line.repeat(1_000_000 / line.len() + 1);
    let effects = update::apply(&mut s, Action::Paste(big.clone()), t0);
    assert!(effects.is_empty(), "a paste never sends");
    // The editor holds one marker; every byte of the paste is what would be sent.
    assert!(
        s.composer.input_text().starts_with("[pasted "),
        "{}",
        s.composer.input_text()
    );
    let got = s.composer.input_expanded();
    assert_eq!(
        got.len(),
        big.len(),
        "every byte of the paste is in the prompt"
    );
    assert_eq!(got, big);
    assert_no_control_cells(&mut s, 100, 30);
}

#[test]
fn absurd_token_counts_from_the_server_cannot_overflow_the_status_line() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hi");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::ContextUsage {
                used: usize::MAX,
                budget: 1,
                compact_at: Some(usize::MAX),
            },
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: Some(crate::llm::Usage {
                    prompt_tokens: 1,
                    completion_tokens: u64::MAX,
                    total_tokens: u64::MAX,
                    prompt_cache_hit_tokens: u64::MAX,
                    ..Default::default()
                }),
                last_usage: None,
            },
        ],
    );
    let screen = render(&mut s, 160, 20, t0);
    assert!(screen.contains("100% cached"), "{screen}");
}

#[test]
fn a_hostile_file_change_and_expanded_reasoning_leave_no_escape_on_the_screen() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    let path = format!("a{NASTY}.txt");
    let mut events = tool_step(
        1,
        "w1",
        "write_text_file",
        json!({"relative_path": path, "content": NASTY}),
        json!({"ok": true, "tool": "write_text_file"}),
        1,
    );
    // The step's reasoning, split inside a sequence as a stream may cut it.
    events.splice(
        1..1,
        [
            AgentEvent::ReasoningDelta("reason A\x1b]5".into()),
            AgentEvent::ReasoningDelta(format!("2;c;aGk=\x07B {NASTY}\n")),
        ],
    );
    let end = events.pop().expect("the call's end");
    events.push(AgentEvent::FileEdited {
        id: "w1".into(),
        diff: crate::diff::FileDiff::new(&path, Some(&format!("old {NASTY}\n")), Some(NASTY)),
    });
    events.push(end);
    feed(&mut s, t0, events);
    s.focus = crate::tui::state::Focus::Conversation;
    // Laid out once, so Enter finds what is in view.
    render(&mut s, 120, 50, t0);
    update::apply(&mut s, Action::ToggleFold, t0);
    let screen = assert_no_control_cells(&mut s, 120, 50);
    assert!(screen.contains("reason A"), "{screen}");
    assert!(screen.contains("+ ABCDE"), "{screen}");
    for remnant in ["52;c", "aGk=", "[2J", "[31m"] {
        assert!(!screen.contains(remnant), "{remnant} in\n{screen}");
    }
    // The approval dialog's title names the path, cleaned too.
    let mut asking = state();
    send(&mut asking, t0, "write");
    feed(
        &mut asking,
        t0,
        vec![AgentEvent::ApprovalRequested(
            crate::approval::ApprovalRequest {
                id: "w2".into(),
                name: "write_text_file".into(),
                arguments: json!({"relative_path": path, "content": "x"}).to_string(),
                diff: Some(crate::diff::unified("a.txt", None, Some("x\n"))),
                position: 1,
                of: 1,
                configuration: false,
                command: None,
            },
        )],
    );
    let dialog = assert_no_control_cells(&mut asking, 120, 40);
    assert!(dialog.contains("Write aABCDEFGH"), "{dialog}");
}
