//! `run_command` on the screen: its call line says the exit code and time and shows the end of
//! what it printed; `/jobs` lists the background jobs and `/jobs stop N` ends one; `/status`
//! says whether commands run in the jail or why not.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::events::{JobInfo, JobState};
use crate::tui::update::Effect;
use serde_json::json;

#[test]
fn a_finished_command_shows_its_exit_code_time_and_output_under_its_call() {
    let mut s = state();
    let now = Instant::now();
    feed(
        &mut s,
        now,
        tool_step(
            1,
            "c1",
            "run_command",
            json!({"command": "python3 -m unittest"}),
            json!({"ok": true, "tool": "run_command", "command": "python3 -m unittest",
                   "working_dir": ".", "exit_code": 1, "stdout": "",
                   "stderr": "F\n======\nFAIL: test_add\n------\nTraceback:\n  File \"test_calc.py\", line 6\nAssertionError: -1 != 5\n\nFAILED (failures=1)\n", "duration_sec": 0.4}),
            400,
        ),
    );
    let screen = render(&mut s, 100, 30, now);
    assert!(screen.contains("exit 1 · 0.4 s"), "{screen}");
    // Folded, the end of the output shows: what failed is said last.
    assert!(screen.contains("AssertionError: -1 != 5"), "{screen}");
    assert!(screen.contains("FAILED (failures=1)"), "{screen}");
    // (The conversation pane: the side panes show the whole result.)
    let conversation = &screen[..screen.find('╰').unwrap_or(screen.len())];
    let conversation: String = conversation
        .lines()
        .map(|l| l.split("││").next().unwrap_or(l))
        .collect();
    assert!(!conversation.contains("Traceback"), "{screen}");
    assert!(screen.contains("more lines (Enter shows all)"), "{screen}");
}

#[test]
fn jobs_lists_and_stops_background_jobs() {
    let mut s = state();
    let now = Instant::now();
    let effects = send(&mut s, now, "/jobs");
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Command(AgentCommand::Jobs))),
        "{effects:?}"
    );
    let effects = send(&mut s, now, "/jobs stop 2");
    assert!(
        effects
            .iter()
            .any(|e| matches!(e, Effect::Command(AgentCommand::StopJob(2)))),
        "{effects:?}"
    );
    feed(
        &mut s,
        now,
        vec![AgentEvent::Jobs(vec![
            JobInfo {
                id: 1,
                command: "python3 -m http.server 8000".into(),
                dir: ".".into(),
                state: JobState::Running,
                age: Duration::from_secs(42),
            },
            JobInfo {
                id: 2,
                command: "npm run watch\u{1b}[31m".into(),
                dir: "web".into(),
                state: JobState::Ended("stopped".into()),
                age: Duration::from_secs(600),
            },
        ])],
    );
    let screen = render(&mut s, 110, 30, now);
    assert!(
        screen.contains("1  running · 42 s · in . · python3 -m http.server 8000"),
        "{screen}"
    );
    assert!(
        screen.contains("2  ended: stopped · 10 min · in web · npm run watch"),
        "{screen}"
    );
    assert!(!screen.contains('\u{1b}'), "an escape reached the screen");
    send(&mut s, now, "/jobs halt x");
    assert!(render(&mut s, 110, 30, now).contains("Usage: /jobs"));
}

#[test]
fn status_says_whether_commands_run_in_the_jail_or_why_not() {
    let mut s = state();
    let now = Instant::now();
    send(&mut s, now, "/status");
    assert!(render(&mut s, 120, 40, now).contains("run_command runs in the jail"));
    let mut opts = options();
    opts.run_command = Err("the kernel refused a user namespace".into());
    let mut s = crate::tui::state::State::new(&opts);
    send(&mut s, now, "/status");
    let screen = render(&mut s, 200, 40, now);
    assert!(
        screen.contains("run_command is not offered: the kernel refused a user namespace"),
        "{screen}"
    );
}
