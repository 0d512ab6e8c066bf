//! A step's reasoning in the conversation: one collapsed line that counts its seconds while it
//! streams (`✻ Thinking… 5 s`), says how long it took once the step moved on
//! (`✻ Thought for 5 s`), and shows its text as markdown on Enter — at 80×24 too, where the side
//! panes (and the reasoning pane with them) are hidden.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::AgentEvent;
use crate::events::AgentState;
use crate::tui::keymap::Action;
use crate::tui::state::{EntryKind, Focus};
use crate::tui::update;

/// The conversation pane of a rendered screen (up to its bottom border; the side panes, with
/// the reasoning pane's raw text, follow it).
fn conversation(screen: &str) -> String {
    let end = screen.find(['╰', '┗']).unwrap_or(screen.len());
    screen[..end].to_string()
}

fn reasoning_began(s: &mut crate::tui::state::State, t0: Instant) {
    send(s, t0, "What is 2+2?");
    feed(
        s,
        t0,
        vec![
            AgentEvent::State(AgentState::Thinking),
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ReasoningDelta("The person asks for **2+2**.\n\n".into()),
        ],
    );
}

#[test]
fn the_line_counts_the_seconds_while_the_reasoning_streams() {
    let t0 = Instant::now();
    let mut s = state();
    reasoning_began(&mut s, t0);
    let at = |secs| t0 + Duration::from_secs(secs);
    feed(
        &mut s,
        at(3),
        vec![AgentEvent::ReasoningDelta("That is 4.".into())],
    );
    let screen = conversation(&render(&mut s, 80, 24, at(5)));
    assert!(screen.contains("✻ Thinking… 5 s"), "{screen}");
    assert!(!screen.contains("2+2**"), "folded: {screen}");
    assert!(!screen.contains("That is 4"), "folded: {screen}");
    // The same cached line, drawn later: the frame's time moves it.
    assert!(render(&mut s, 80, 24, at(7)).contains("✻ Thinking… 7 s"));
    // Still busy, so the frame timer keeps drawing it.
    assert!(s.busy());
}

#[test]
fn once_the_step_moves_on_it_says_how_long_and_enter_shows_the_text_as_markdown() {
    let t0 = Instant::now();
    let mut s = state();
    reasoning_began(&mut s, t0);
    let at = |secs| t0 + Duration::from_secs(secs);
    feed(
        &mut s,
        at(5),
        vec![AgentEvent::ContentDelta("It is 4.".into())],
    );
    feed(&mut s, at(6), whole_turn_end());
    let screen = conversation(&render(&mut s, 80, 24, at(60)));
    assert!(screen.contains("✻ Thought for 5 s"), "{screen}");
    assert!(!screen.contains("Thinking"), "{screen}");
    assert!(screen.contains("It is 4."), "{screen}");
    // The reasoning comes before the answer.
    assert!(screen.find("✻ Thought").unwrap() < screen.find("It is 4.").unwrap());
    s.focus = Focus::Conversation;
    update::apply(&mut s, Action::ToggleFold, at(60));
    let open = conversation(&render(&mut s, 80, 24, at(61)));
    assert!(open.contains("The person asks for 2+2."), "{open}");
    assert!(!open.contains("**"), "rendered as markdown: {open}");
    assert!(open.contains("✻ Thought for 5 s"), "{open}");
    // The bold survives as a style, not as stars.
    let backend = render_backend(&mut s, 80, 24, at(61));
    let buffer = backend.buffer();
    let (x, y) = (0..buffer.area.height)
        .flat_map(|y| (0..buffer.area.width).map(move |x| (x, y)))
        .find(|&(x, y)| {
            "2+2".chars().enumerate().all(|(i, c)| {
                x + (i as u16) < buffer.area.width
                    && buffer[(x + i as u16, y)].symbol() == c.to_string()
            })
        })
        .expect("drawn");
    assert!(
        buffer[(x, y)]
            .modifier
            .contains(ratatui::style::Modifier::BOLD),
        "bold"
    );
    update::apply(&mut s, Action::ToggleFold, at(62));
    assert!(!conversation(&render(&mut s, 80, 24, at(63))).contains("The person asks"));
}

/// The end of a turn that answered.
fn whole_turn_end() -> Vec<AgentEvent> {
    vec![
        AgentEvent::StepFinished(crate::events::StepEnd::Answer),
        turn_over(),
    ]
}

#[test]
fn a_thought_before_calls_ends_the_reasoning_too_and_a_saved_session_has_no_timing() {
    let t0 = Instant::now();
    let mut s = state();
    reasoning_began(&mut s, t0);
    let mut step = tool_step(
        1,
        "c1",
        "list_files",
        serde_json::json!({"relative_dir": "."}),
        serde_json::json!({"ok": true, "count": 0, "listing": ""}),
        3,
    );
    // Its StepStarted again would start a second step; only the calls are fed.
    step.drain(..2);
    feed(&mut s, t0 + Duration::from_secs(2), step);
    let screen = conversation(&render(&mut s, 80, 24, t0 + Duration::from_secs(9)));
    assert!(screen.contains("✻ Thought for 2 s"), "{screen}");
    // Reasoning told again from a saved session: no seconds to tell.
    let mut again = state();
    feed(
        &mut again,
        t0,
        vec![AgentEvent::SessionOpened {
            id: "s1".into(),
            title: None,
            notice: "Reopened.".into(),
            replay: vec![
                AgentEvent::TurnStarted {
                    prompt: "before".into(),
                },
                AgentEvent::StepStarted { step: 1, max: 10 },
                AgentEvent::ReasoningDelta("old thoughts".into()),
                AgentEvent::ContentDelta("old answer".into()),
                AgentEvent::StepFinished(crate::events::StepEnd::Answer),
                turn_over(),
            ],
        }],
    );
    let reopened = conversation(&render(&mut again, 80, 24, t0 + Duration::from_secs(30)));
    assert!(
        reopened.contains("✻ Thought (Enter shows it)"),
        "{reopened}"
    );
    assert!(
        again
            .view
            .entries
            .iter()
            .any(|e| e.kind == EntryKind::Reasoning && e.thinking.took.is_none())
    );
}

#[test]
fn a_restarted_stream_shows_its_reasoning_and_text_once() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hello");
    let restart = AgentEvent::Retrying {
        attempt: 2,
        max_attempts: 5,
        delay: std::time::Duration::ZERO,
        reason: "the stream closed before it was complete".into(),
        cause: crate::llm::RetryCause::StreamCut,
        restarts: true,
    };
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::StepStarted { step: 1, max: 10 },
            AgentEvent::ReasoningDelta("thinking it over".into()),
            restart,
            AgentEvent::ReasoningDelta("thinking it over".into()),
            AgentEvent::ContentDelta("The answer.".into()),
        ],
    );
    let text_of = |kind: EntryKind| -> String {
        s.view
            .entries
            .iter()
            .filter(|e| e.kind == kind)
            .map(|e| e.text.as_str())
            .collect()
    };
    assert_eq!(text_of(EntryKind::Reasoning), "thinking it over");
    assert_eq!(text_of(EntryKind::Assistant), "The answer.");
}
