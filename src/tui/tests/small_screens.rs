//! Small screens and polish: the side panes fold away below a height as they do by width, and
//! what else a 60×20 or 80×24 terminal showed wrong.

use std::time::Instant;

use super::common::*;

/// A state after one turn with a tool step, so the timeline has something to show.
fn after_a_step() -> crate::tui::state::State {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    feed(&mut s, t0, whole_turn("Written."));
    s
}

#[test]
fn below_a_height_the_side_panes_fold_away_and_the_conversation_has_the_rows() {
    let mut s = after_a_step();
    let short = render(&mut s, 60, 20, Instant::now());
    assert!(s.areas.timeline.is_none(), "{short}");
    assert!(!short.contains("Timeline"), "{short}");
    // The panes' area is the conversation's: 20 rows less the input and the status line.
    assert_eq!(s.areas.conversation.height, 16, "{short}");
    // A 24-row terminal still stacks them, a wide one puts them beside.
    let taller = render(&mut s, 60, 24, Instant::now());
    assert!(s.areas.timeline.is_some(), "{taller}");
    let wide = render(&mut s, 120, 20, Instant::now());
    assert!(s.areas.timeline.is_some(), "{wide}");
}

/// One step whose call `name` ended with `outcome`, and its thought before it.
fn step_ending(
    n: usize,
    thought: &str,
    outcome: crate::events::CallOutcome,
) -> Vec<crate::agent::AgentEvent> {
    use crate::agent::AgentEvent;
    let id = format!("c{n}");
    vec![
        AgentEvent::StepStarted { step: n, max: 10 },
        AgentEvent::ContentDelta(thought.into()),
        AgentEvent::StepFinished(crate::events::StepEnd::Thought),
        AgentEvent::ToolCallStarted {
            id: id.clone(),
            name: "write_text_file".into(),
            arguments: r#"{"relative_path":"a.txt","content":"x"}"#.into(),
        },
        AgentEvent::ToolFinished {
            id,
            name: "write_text_file".into(),
            result: serde_json::json!({"ok": false, "tool": "write_text_file", "error": outcome.problem()}).into(),
            outcome,
            approved: false,
            duration: Some(std::time::Duration::ZERO),
        },
    ]
}

#[test]
fn the_timeline_tells_a_persons_no_from_a_rules_refusal_and_renders_thoughts_as_markdown() {
    use crate::events::{CallOutcome, RefusedBy};
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    let mut events = step_ending(
        1,
        "I will **write** it.",
        CallOutcome::Denied {
            reason: "not now".into(),
        },
    );
    events.extend(step_ending(
        2,
        "Then `again`.",
        CallOutcome::Refused {
            why: "read-only".into(),
            by: RefusedBy::Approval,
        },
    ));
    feed(&mut s, t0, events);
    feed(&mut s, t0, vec![turn_over()]);
    s.view.expanded.extend([0, 1]);
    let screen = render(&mut s, 120, 90, t0);
    let timeline: String = screen
        .lines()
        .map(|l| l.chars().skip(73).collect::<String>())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(timeline.contains("✗ denied 0 ms"), "{timeline}");
    assert!(timeline.contains("⊘ refused 0 ms"), "{timeline}");
    assert!(
        timeline.contains("Observation ✗ denied by you"),
        "{timeline}"
    );
    assert!(
        timeline.contains("Observation ⊘ refused by the approval mode"),
        "{timeline}"
    );
    // The thoughts as markdown: no stars or backticks left.
    assert!(timeline.contains("I will write it."), "{timeline}");
    assert!(timeline.contains("Then again."), "{timeline}");
    assert!(!timeline.contains("**"), "{timeline}");
}

#[test]
fn the_tool_output_pane_shows_no_remnant_of_an_escape_live_or_finished() {
    use crate::agent::AgentEvent;
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "colours");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::StepFinished(crate::events::StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "run_shell_command".into(),
                arguments: r#"{"command":"ls"}"#.into(),
            },
            // A sequence split between two pieces, and a title change.
            AgentEvent::ToolOutputDelta {
                id: "c1".into(),
                text: "\u{1b}[3".into(),
            },
            AgentEvent::ToolOutputDelta {
                id: "c1".into(),
                text: "1mred\u{1b}[0m plain\u{1b}]0;TITLE\u{7}\n".into(),
            },
        ],
    );
    let pane = |screen: &str| -> String {
        let at = screen.find("Tool output").expect("the tool output pane");
        screen[at..].to_string()
    };
    let live = pane(&render(&mut s, 120, 30, t0));
    assert!(live.contains("red plain"), "{live}");
    for remnant in ["[31m", "[0m", "1m", "TITLE", "]0;"] {
        assert!(!live.contains(remnant), "{remnant} in {live}");
    }
    feed(
        &mut s,
        t0,
        vec![finished(
            "c1",
            "run_shell_command",
            serde_json::json!({"ok": true, "tool": "run_shell_command", "exit_code": 0,
                "stdout": "\u{1b}[31mred\u{1b}[0m plain\u{1b}]0;TITLE\u{7}\n"}),
            4,
        )],
    );
    let done = pane(&render(&mut s, 120, 30, t0));
    assert!(done.contains("red plain"), "{done}");
    for remnant in ["[31m", "[0m", "TITLE", "]0;"] {
        assert!(!done.contains(remnant), "{remnant} in {done}");
    }
}
