//! `run_command` on the screen: its call line says the exit code and time and shows the end of
//! what it printed; `/jobs` lists the background jobs and `/jobs stop N` ends one; `/status`
//! says whether commands run in the jail or why not.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent};
use crate::events::{JobInfo, JobState};
use crate::tui::update::Effect;
use serde_json::json;

/// A state that was told of a `python3 -m unittest` call that exited 1 with `stderr`.
fn failed_unittest(stderr: &str) -> (crate::tui::state::State, Instant) {
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
                   "working_dir": ".", "exit_code": 1, "stdout": "", "stderr": stderr,
                   "duration_sec": 0.4}),
            400,
        ),
    );
    (s, now)
}

#[test]
fn a_finished_command_shows_its_exit_code_time_and_output_under_its_call() {
    let (mut s, now) = failed_unittest(
        "F\n======\nFAIL: test_add\n------\nTraceback:\n  File \"test_calc.py\", line 6\nAssertionError: -1 != 5\n\nFAILED (failures=1)\n",
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

#[test]
fn a_command_that_exited_non_zero_is_marked_failed_on_its_call_line_and_in_the_timeline() {
    let (mut s, now) = failed_unittest("FAILED\n");
    let backend = render_backend(&mut s, 140, 30, now);
    let buffer = backend.buffer();
    let rows: Vec<String> = (0..buffer.area.height)
        .map(|y| {
            (0..buffer.area.width)
                .map(|x| buffer[(x, y)].symbol().to_string())
                .collect()
        })
        .collect();
    let screen = rows.join("\n");
    // The call line in the conversation: a failure mark in the error colour, no ✓.
    let (y, row) = rows
        .iter()
        .enumerate()
        .find(|(_, r)| r.contains("⚙ run_command("))
        .unwrap_or_else(|| panic!("{screen}"));
    let call_part = row
        .split('│')
        .find(|p| p.contains("⚙ run_command("))
        .unwrap();
    assert!(call_part.contains("✗ exit 1"), "{screen}");
    assert!(!call_part.contains('✓'), "{screen}");
    let x = row[..row.find("✗ exit 1").unwrap()].chars().count() as u16;
    assert_eq!(
        buffer[(x, y as u16)].fg,
        s.theme.error.fg.unwrap(),
        "{screen}"
    );
    // The timeline's step says it too.
    let step = rows
        .iter()
        .flat_map(|r| r.split('│'))
        .find(|p| p.contains("Step 1") || p.contains("step 1"))
        .unwrap_or_else(|| panic!("{screen}"));
    assert!(step.contains("✗ exit 1"), "{step}\n{screen}");
    assert!(!step.contains('✓'), "{screen}");
}

#[test]
fn a_command_a_rule_let_run_says_which_rule_on_its_call_line() {
    let mut s = state();
    let now = Instant::now();
    let mut events = vec![AgentEvent::AllowedByRules {
        id: "c1".into(),
        rules: vec![crate::command_rules::CommandRule::parse("cargo test").unwrap()],
    }];
    events.extend(tool_step(
        1,
        "c1",
        "run_command",
        json!({"command": "cargo test -q"}),
        json!({"ok": true, "tool": "run_command", "command": "cargo test -q",
               "working_dir": ".", "exit_code": 0, "stdout": "ok\n", "stderr": "",
               "duration_sec": 0.2}),
        200,
    ));
    events.extend(tool_step(
        2,
        "c2",
        "run_command",
        json!({"command": "ls"}),
        json!({"ok": true, "tool": "run_command", "command": "ls",
               "working_dir": ".", "exit_code": 0, "stdout": "a\n", "stderr": "",
               "duration_sec": 0.1}),
        100,
    ));
    feed(&mut s, now, events);
    let screen = render(&mut s, 140, 30, now);
    let line = |what: &str| {
        screen
            .lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("{screen}"))
            .to_string()
    };
    assert!(
        line("⚙ run_command(cargo test").contains("allowed by rule \"cargo test\""),
        "{screen}"
    );
    // A call the rules did not let through says nothing of them.
    assert!(!line("⚙ run_command(ls").contains("allowed by"), "{screen}");
}

#[test]
fn status_and_permissions_wrap_under_their_text() {
    let mut s = state();
    let now = Instant::now();
    s.run_command = Err(
        "the jail cannot be built here: user namespaces are turned off by \
                         the system administrator of this machine"
            .into(),
    );
    send(&mut s, now, "/status");
    let screen = render(&mut s, 70, 40, now);
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .position(|r| r.contains("Commands    run_command"))
        .unwrap_or_else(|| panic!("{screen}"));
    let column = |r: &str, i: usize| r[..i].chars().count();
    let value_column = column(rows[at], rows[at].find("run_command").unwrap());
    let next = rows[at + 1];
    let text = next.trim_start_matches(['"', '│', ' ']);
    assert_eq!(
        column(next, next.len() - text.len()),
        value_column,
        "{screen}"
    );
    // /jobs and /permissions: a numbered rule's continuation goes under its text.
    let rule = format!("make {}", "word ".repeat(14));
    s.command_rules
        .add(&[crate::command_rules::CommandRule::parse(&rule).unwrap()]);
    send(&mut s, now, "/permissions");
    let screen = render(&mut s, 70, 40, now);
    let rows: Vec<&str> = screen.lines().collect();
    let at = rows
        .iter()
        .rposition(|r| r.contains("1. make word"))
        .unwrap_or_else(|| panic!("{screen}"));
    let text_column = column(rows[at], rows[at].find("make").unwrap());
    let next = rows[at + 1];
    let text = next.trim_start_matches(['"', '│', ' ']);
    assert_eq!(
        column(next, next.len() - text.len()),
        text_column,
        "{screen}"
    );
}
