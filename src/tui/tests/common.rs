//! Helpers shared by the TUI tests: a state with fixed options, event feeding and rendering
//! into ratatui's TestBackend at a fixed time.
#![allow(dead_code)]

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use std::time::{Duration, Instant};

use crate::agent::{AgentEvent, AgentState, TurnOutcome};
use crate::events::{CallOutcome, StepEnd};
use crate::llm::{Preset, Usage};
use crate::tui::keymap::Action;
use crate::tui::state::State;
use crate::tui::update::{self, Effect};
use crate::tui::{Theme, TuiOptions, layout, view};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde_json::json;

/// Options with a fixed workspace and no notices.
pub fn options() -> TuiOptions {
    TuiOptions {
        workspace: "/home/me/project".into(),
        preset: Preset::Flash,
        max_steps: 10,
        mouse: true,
        theme: Theme::dark(),
        notices: vec![],
        tools: vec![crate::tools::toolbox::ToolInfo {
            name: "read_text_file".into(),
            source: "built-in".into(),
            summary: "Reads a text file of the workspace.".into(),
        }],
        recent_models: vec![],
        resume_picker: false,
        approval: crate::approval::ApprovalMode::Auto,
        approval_source: crate::approval::ApprovalSource::Default,
        run_command: Ok(()),
        skills: Default::default(),
        custom_commands: Default::default(),
    }
}

/// A fresh state.
pub fn state() -> State {
    State::new(&options())
}

/// Feeds events at time `now`, returning what they asked the event loop to do.
pub fn feed(state: &mut State, now: Instant, events: Vec<AgentEvent>) -> Vec<Effect> {
    let mut effects = Vec::new();
    for e in events {
        effects.extend(update::on_event(state, e, now));
    }
    effects
}

/// Types `text` into the input and presses Enter, returning the effects.
pub fn send(state: &mut State, now: Instant, text: &str) -> Vec<Effect> {
    state.composer.set_input(text);
    press_send(state, now)
}

/// Presses Enter on what the input holds, returning the effects; a prompt sent is started as
/// the agent task would start it.
pub fn press_send(state: &mut State, now: Instant) -> Vec<Effect> {
    let effects = update::apply(state, Action::Send, now);
    // The agent task starts the turn at once and says so.
    for e in &effects {
        if let Effect::Command(crate::agent::AgentCommand::Prompt(prompt)) = e {
            let _ = update::on_event(
                state,
                AgentEvent::TurnStarted {
                    prompt: prompt.clone(),
                },
                now,
            );
        }
    }
    effects
}

/// Renders the state at `now` into a `width` × `height` test terminal.
pub fn render(state: &mut State, width: u16, height: u16, now: Instant) -> String {
    render_backend(state, width, height, now).to_string()
}

/// Renders the state at `now` and returns the test backend, cells and all.
pub fn render_backend(state: &mut State, width: u16, height: u16, now: Instant) -> TestBackend {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    super::support::with_caches(|caches| {
        layout::prepare(state, caches, Rect::new(0, 0, width, height));
        term.draw(|f| view::draw(f, state, caches, now)).unwrap();
    });
    term.backend().clone()
}

/// A tool call step: started, finished with `result` after `ms`.
pub fn tool_step(
    step: usize,
    id: &str,
    name: &str,
    args: serde_json::Value,
    result: serde_json::Value,
    ms: u64,
) -> Vec<AgentEvent> {
    vec![
        AgentEvent::StepStarted { step, max: 10 },
        AgentEvent::State(AgentState::Thinking),
        AgentEvent::StepFinished(StepEnd::Thought),
        AgentEvent::ToolCallStarted {
            id: id.into(),
            name: name.into(),
            arguments: args.to_string(),
        },
        AgentEvent::State(AgentState::Acting),
        finished(id, name, result, ms),
    ]
}

/// A call `id` of `name` that ended with `result` after `ms`: its outcome is what the result
/// says (as the tools would have made them together).
pub fn finished(id: &str, name: &str, result: serde_json::Value, ms: u64) -> AgentEvent {
    let outcome = if result["ok"] == false {
        CallOutcome::Failed {
            error: result["error"].as_str().unwrap_or("failed").to_string(),
        }
    } else {
        CallOutcome::Ok
    };
    AgentEvent::ToolFinished {
        id: id.into(),
        name: name.into(),
        approved: result["approved_by_user"] == true,
        result: result.into(),
        outcome,
        duration: Some(Duration::from_millis(ms)),
    }
}

/// The end of a turn that answered.
pub fn turn_over() -> AgentEvent {
    AgentEvent::TurnFinished {
        outcome: TurnOutcome::Answered,
        usage: None,
        last_usage: None,
    }
}

/// A whole turn: a write call, then a streamed answer.
pub fn whole_turn(answer: &str) -> Vec<AgentEvent> {
    let mut events = vec![AgentEvent::State(AgentState::Thinking)];
    events.extend(tool_step(
        1,
        "c1",
        "write_text_file",
        json!({"path": "hello.txt", "content": "hi"}),
        json!({"ok": true, "tool": "write_text_file", "path": "hello.txt", "bytes": 2}),
        12,
    ));
    events.push(AgentEvent::StepStarted { step: 2, max: 10 });
    events.push(AgentEvent::ContentDelta(answer.into()));
    events.push(AgentEvent::StepFinished(StepEnd::Answer));
    events.push(AgentEvent::TurnFinished {
        outcome: TurnOutcome::Answered,
        usage: Some(Usage {
            prompt_tokens: 1200,
            completion_tokens: 80,
            total_tokens: 1280,
            prompt_cache_hit_tokens: 600,
            ..Default::default()
        }),
        last_usage: None,
    });
    events
}

/// Rendered lines with their styles, for snapshots that fail when a highlight is lost: each
/// line's text, then its styled runs by column (`0..2 fg=#4b5263 bold`; unstyled runs left out).
pub fn styled(lines: &[ratatui::text::Line<'_>]) -> String {
    use ratatui::style::{Color, Modifier, Style};
    use unicode_width::UnicodeWidthStr;

    fn color(c: Color) -> String {
        match c {
            Color::Rgb(r, g, b) => format!("#{r:02x}{g:02x}{b:02x}"),
            other => format!("{other:?}"),
        }
    }
    fn describe(s: Style) -> String {
        let mut parts = Vec::new();
        if let Some(fg) = s.fg {
            parts.push(format!("fg={}", color(fg)));
        }
        if let Some(bg) = s.bg {
            parts.push(format!("bg={}", color(bg)));
        }
        for (m, name) in [
            (Modifier::BOLD, "bold"),
            (Modifier::DIM, "dim"),
            (Modifier::ITALIC, "italic"),
            (Modifier::UNDERLINED, "underlined"),
            (Modifier::REVERSED, "reversed"),
            (Modifier::CROSSED_OUT, "crossed"),
        ] {
            if s.add_modifier.contains(m) {
                parts.push(name.to_string());
            }
        }
        parts.join(" ")
    }
    let mut out = String::new();
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&format!("{i:02} │{}\n", line));
        // Runs of one style, merged across spans, by display column.
        let mut runs: Vec<(usize, usize, String)> = Vec::new();
        let mut col = 0;
        for span in &line.spans {
            let w = span.content.width();
            let d = describe(line.style.patch(span.style));
            match runs.last_mut() {
                Some(last) if last.2 == d && last.1 == col => last.1 += w,
                _ => runs.push((col, col + w, d)),
            }
            col += w;
        }
        let shown: Vec<String> = runs
            .into_iter()
            .filter(|(a, b, d)| !d.is_empty() && a < b)
            .map(|(a, b, d)| format!("{a}..{b} {d}"))
            .collect();
        if !shown.is_empty() {
            out.push_str(&format!("   ╰ {}\n", shown.join("; ")));
        }
    }
    out
}

/// No modifier.
pub const NONE: KeyModifiers = KeyModifiers::NONE;
/// Control.
pub const CTRL: KeyModifiers = KeyModifiers::CONTROL;
/// Alt.
pub const ALT: KeyModifiers = KeyModifiers::ALT;
/// Shift.
pub const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

/// A key event.
pub fn k(code: KeyCode, m: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, m)
}
