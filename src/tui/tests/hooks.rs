//! `/hooks` on the screen: each hook with what it selects, where it comes from and its last
//! result, drawn clean of whatever escapes a command or a result holds.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::hooks::{HookStatus, LastRun};
use crate::settings::{HookEvent, Origin, Scope};
use crate::tui::update::Effect;

fn status(
    event: HookEvent,
    matcher: Option<&str>,
    command: &str,
    last: Option<&str>,
) -> HookStatus {
    HookStatus {
        event,
        matcher: matcher.map(str::to_string),
        command: command.into(),
        origin: Origin {
            file: "/home/me/.config/miniclaw/config.toml".into(),
            scope: Scope::User,
        },
        last: last.map(|summary| LastRun {
            at: chrono::Local::now(),
            summary: summary.into(),
            ok: !summary.contains("exited"),
        }),
    }
}

#[test]
fn slash_hooks_asks_the_agent_and_lists_each_hook_with_its_file_and_last_result() {
    let t0 = Instant::now();
    let mut s = state();
    let effects = send(&mut s, t0, "/hooks");
    assert!(effects.contains(&Effect::Command(AgentCommand::Hooks)));
    feed(
        &mut s,
        t0,
        vec![AgentEvent::Hooks(vec![
            status(
                HookEvent::PreToolUse,
                Some("write_text_file|run_command"),
                "python3 ~/hooks/guard.py\x1b]52;c;aGk=\x07",
                Some("blocked: no writes to prod"),
            ),
            status(HookEvent::Stop, None, "notify-send done", None),
        ])],
    );
    let screen = render(&mut s, 120, 30, t0);
    assert!(
        screen.contains("PreToolUse [write_text_file|run_command]  python3 ~/hooks/guard.py"),
        "{screen}"
    );
    assert!(
        screen.contains("(/home/me/.config/miniclaw/config.toml)"),
        "{screen}"
    );
    assert!(screen.contains(": blocked: no writes to prod"), "{screen}");
    assert!(screen.contains("Stop  notify-send done"), "{screen}");
    assert!(screen.contains("not run yet"), "{screen}");
    assert!(!screen.contains("52;c"), "{screen}");
}

#[test]
fn slash_hooks_without_hooks_says_where_they_are_configured() {
    let t0 = Instant::now();
    let mut s = state();
    feed(&mut s, t0, vec![AgentEvent::Hooks(Vec::new())]);
    let screen = render(&mut s, 120, 30, t0);
    assert!(screen.contains("Hooks: none configured"), "{screen}");
}

#[test]
fn the_timeline_notes_a_subfolders_instructions_and_a_call_a_hook_blocked() {
    use crate::events::{CallOutcome, RefusedBy};
    use crate::tui::keymap::Action;
    use crate::tui::state::Focus;
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "look at the parser");
    let mut events = tool_step(
        1,
        "c1",
        "read_text_file",
        serde_json::json!({"relative_path": "src/parser/lexer.rs"}),
        serde_json::json!({"ok": true}),
        3,
    );
    events.insert(
        5,
        AgentEvent::InstructionsRead {
            id: "c1".into(),
            file: "src/parser/AGENTS.md".into(),
            bytes: 812,
            truncated: false,
        },
    );
    events.extend([
        AgentEvent::StepStarted { step: 2, max: 10 },
        AgentEvent::ToolCallStarted {
            id: "c2".into(),
            name: "write_text_file".into(),
            arguments: "{}".into(),
        },
        AgentEvent::ToolFinished {
            id: "c2".into(),
            name: "write_text_file".into(),
            result: serde_json::json!({"ok": false, "error": "blocked by a PreToolUse hook: no"})
                .into(),
            outcome: CallOutcome::Refused {
                why: "blocked by a PreToolUse hook: no".into(),
                by: RefusedBy::Hook,
            },
            approved: false,
            duration: None,
        },
    ]);
    feed(&mut s, t0, events);
    crate::tui::update::apply(&mut s, Action::ToggleAllSteps, t0);
    s.focus = Focus::Timeline;
    let screen = render(&mut s, 140, 40, t0);
    assert!(
        screen.contains("+ src/parser/AGENTS.md (812 bytes) for this turn"),
        "{screen}"
    );
    assert!(
        screen.contains("Observation ⊘ blocked by a hook"),
        "{screen}"
    );
}
