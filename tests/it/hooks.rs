//! Hooks against the local model server, with real shell and Python scripts: a PreToolUse hook
//! blocks a call (exit 2, JSON), a PostToolUse hook adds a note the model reads, a
//! UserPromptSubmit hook adds context or blocks the prompt before anything is sent, a Stop hook
//! sends the model back once, and hooks that crash, hang or print garbage are said once and
//! block nothing.

use crate::support;

use std::path::Path;
use std::sync::Arc;

use miniclaw::agent::{AgentEvent, TurnOutcome};
use miniclaw::events::{CallOutcome, FailCause, RefusedBy};
use miniclaw::hooks::Hooks;
use miniclaw::llm::Preset;
use miniclaw::settings::Scope;
use serde_json::{Value, json};
use support::rig::{Rig, observations, rig_with, run};
use support::{Reply, SseBuilder};

/// A rig with the built-in tools and the hooks `toml` configures, its scripts in `scripts`
/// (name, text; made executable in `<workspace>/../hooks`).
async fn rig_with_hooks(script: Vec<Reply>, toml: &str, scripts: &[(&str, &str)]) -> Rig {
    let mut rig = rig_with(
        script,
        miniclaw::tools::builtin_registry(),
        Preset::Flash,
        6,
        |c| c,
    )
    .await;
    let dir = hooks_dir(rig.dir.path());
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text) in scripts {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let toml = toml.replace("$HOOKS", &dir.to_string_lossy());
    let (settings, warnings) =
        miniclaw::settings::parse_toml(&toml, Path::new("config.toml"), Scope::User);
    assert!(warnings.is_empty(), "{warnings:?}");
    let hooks = Hooks::new(settings.hooks, rig.dir.path().to_path_buf());
    rig.agent = rig.agent.with_hooks(Arc::new(hooks));
    rig
}

/// A response that writes `content` to `path` with write_text_file.
fn write(id: &str, path: &str, content: &str) -> Reply {
    SseBuilder::calls(
        id,
        "write_text_file",
        json!({"relative_path": path, "content": content}),
    )
}

/// Where the test's hook scripts live: beside the workspace, not in it.
fn hooks_dir(workspace: &Path) -> std::path::PathBuf {
    workspace.join(".hook-scripts")
}

fn notices(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect()
}

/// The tool messages of request `n`.
fn tool_messages(rig: &Rig, n: usize) -> Vec<Value> {
    rig.server.requests()[n].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect()
}

const GUARD_SH: &str = r#"#!/bin/sh
# Keeps what it was given, then refuses, with an escape sequence in its words.
cat > "$MINICLAW_PROJECT_DIR/.hook-scripts/pre-input.json"
printf '\033]52;c;aGk=\007no writes to %s here\n' "$(basename "$CLAUDE_PROJECT_DIR")" >&2
exit 2
"#;

#[tokio::test]
async fn a_pre_tool_hook_blocks_by_exit_2_and_the_model_reads_why_in_the_calls_error() {
    let mut rig = rig_with_hooks(
        vec![
            write("c1", "a.txt", "x"),
            SseBuilder::answer("I could not write it."),
        ],
        r#"
        [[hooks.PreToolUse]]
        matcher = "write_text_file|run_command"
        hooks = [{ type = "command", command = "$HOOKS/guard.sh", timeout = 10 }]
        "#,
        &[("guard.sh", GUARD_SH)],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "write a.txt").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(!rig.dir.path().join("a.txt").exists(), "the call never ran");
    let outcome = events.iter().find_map(|e| match e {
        AgentEvent::ToolFinished { outcome, .. } => Some(outcome.clone()),
        _ => None,
    });
    assert!(
        matches!(
            outcome,
            Some(CallOutcome::Refused {
                by: RefusedBy::Hook,
                ..
            })
        ),
        "{outcome:?}"
    );
    let error = observations(&events)[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    let ws = rig.dir.path().file_name().unwrap().to_string_lossy();
    assert_eq!(
        error,
        format!("blocked by a PreToolUse hook: no writes to {ws} here")
    );
    assert!(!error.contains('\u{1b}'), "no escape passes on");
    // The model reads it as the call's error.
    let sent = tool_messages(&rig, 1)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.contains("blocked by a PreToolUse hook"), "{sent}");
    // Its input, in Claude Code's names.
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(hooks_dir(rig.dir.path()).join("pre-input.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(input["hook_event_name"], "PreToolUse");
    assert_eq!(input["tool_name"], "write_text_file");
    assert_eq!(input["tool_input"]["relative_path"], "a.txt");
    assert_eq!(input["tool_use_id"], "c1");
    assert_eq!(input["session_id"], rig.agent.session().id.as_str());
    assert_eq!(
        Path::new(input["cwd"].as_str().unwrap()),
        rig.dir.path(),
        "{input}"
    );
    assert!(
        input["transcript_path"]
            .as_str()
            .unwrap()
            .ends_with("history.json")
    );
    // `/hooks` says what it did last.
    let statuses = rig.agent.hooks().unwrap().statuses();
    let last = statuses[0].last.as_ref().unwrap();
    assert!(last.summary.starts_with("blocked: no writes"), "{last:?}");
}

const DENY_PY: &str = r#"#!/usr/bin/env python3
# The shape of Claude Code's documented PreToolUse decision.
import json, sys
data = json.load(sys.stdin)
path = data.get("tool_input", {}).get("relative_path", "")
if path.endswith(".lock"):
    print(json.dumps({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": f"{path} is generated; edit the manifest instead"}}))
sys.exit(0)
"#;

#[tokio::test]
async fn a_python_hook_denies_by_json_and_lets_other_calls_through() {
    let mut rig = rig_with_hooks(
        vec![
            write("c1", "Cargo.lock", "x"),
            write("c2", "notes.txt", "kept"),
            SseBuilder::answer("Done."),
        ],
        r#"
        [[hooks.PreToolUse]]
        matcher = "write_.*"
        hooks = [{ type = "command", command = "python3 $HOOKS/deny.py" }]
        "#,
        &[("deny.py", DENY_PY)],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "write both").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let seen = observations(&events);
    assert_eq!(
        seen[0]["error"],
        "blocked by a PreToolUse hook: Cargo.lock is generated; edit the manifest instead"
    );
    assert_eq!(seen[1]["ok"], true, "{seen:?}");
    assert!(!rig.dir.path().join("Cargo.lock").exists());
    assert_eq!(
        std::fs::read_to_string(rig.dir.path().join("notes.txt")).unwrap(),
        "kept"
    );
}

const LINT_PY: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
ok = data["tool_response"].get("ok")
print(json.dumps({"hookSpecificOutput": {"hookEventName": "PostToolUse",
    "additionalContext": f"lint after {data['tool_name']}: 2 warnings (ok={ok})"}}))
"#;

#[tokio::test]
async fn a_post_tool_hook_adds_a_note_the_model_reads_with_the_result() {
    let mut rig = rig_with_hooks(
        vec![write("c1", "a.txt", "x"), SseBuilder::answer("Written.")],
        r#"
        [[hooks.PostToolUse]]
        hooks = [{ type = "command", command = "python3 $HOOKS/lint.py" }]
        "#,
        &[("lint.py", LINT_PY)],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "write a.txt").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(
        std::fs::read_to_string(rig.dir.path().join("a.txt")).unwrap(),
        "x"
    );
    let seen = observations(&events);
    assert_eq!(seen[0]["ok"], true);
    assert_eq!(
        seen[0]["hook_note"],
        "lint after write_text_file: 2 warnings (ok=True)"
    );
    let sent = tool_messages(&rig, 1)[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.contains("2 warnings"), "{sent}");
}

const PROMPT_PY: &str = r#"#!/usr/bin/env python3
import json, sys
data = json.load(sys.stdin)
if "secret" in data["prompt"]:
    print(json.dumps({"decision": "block", "reason": "prompts about secrets stay here"}))
else:
    print("branch: main, 3 files changed")
"#;

#[tokio::test]
async fn a_prompt_hook_adds_context_or_blocks_the_prompt_before_anything_is_sent() {
    let mut rig = rig_with_hooks(
        vec![SseBuilder::answer("Seen.")],
        r#"
        [[hooks.UserPromptSubmit]]
        hooks = [{ type = "command", command = "python3 $HOOKS/prompt.py" }]
        "#,
        &[("prompt.py", PROMPT_PY)],
    )
    .await;
    let (outcome, _) = run(&mut rig.agent, "what changed?").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let sent = rig.server.requests()[0].json();
    let user = sent["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.starts_with("[Context added by the person's hooks:]\nbranch: main, 3 files changed"),
        "{user}"
    );
    assert!(user.ends_with("what changed?"), "{user}");

    let (outcome, events) = run(&mut rig.agent, "print the secret key").await;
    assert_eq!(outcome, TurnOutcome::Failed(FailCause::Hook));
    assert_eq!(rig.server.requests().len(), 1, "nothing was sent");
    let errors = support::rig::errors(&events);
    assert!(
        errors[0].contains("blocked this prompt")
            && errors[0].contains("prompts about secrets stay here"),
        "{errors:?}"
    );
    assert!(
        !rig.agent.session().prompts().any(|p| p.contains("secret")),
        "the blocked prompt is not kept"
    );
}

const STOP_SH: &str = r#"#!/bin/sh
# Claude Code's pattern: go on once, then let the turn end.
if grep -q '"stop_hook_active":true'; then exit 0; fi
echo "run the tests before you finish" >&2
exit 2
"#;

#[tokio::test]
async fn a_stop_hook_sends_the_model_back_once_and_lets_the_turn_end_when_active() {
    let mut rig = rig_with_hooks(
        vec![
            SseBuilder::answer("Done."),
            SseBuilder::answer("Tests pass. Done."),
        ],
        r#"
        [[hooks.Stop]]
        hooks = [{ type = "command", command = "$HOOKS/stop.sh" }]
        "#,
        &[("stop.sh", STOP_SH)],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "fix it").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let requests = rig.server.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("run the tests before you finish")
    );
    assert!(
        notices(&events)
            .iter()
            .any(|n| n.contains("A Stop hook asked the model to go on"))
    );
    assert_eq!(rig.agent.session().last_answer(), Some("Tests pass. Done."));
}

#[tokio::test]
async fn hooks_that_crash_hang_or_print_garbage_are_said_once_and_block_nothing() {
    let mut rig = rig_with_hooks(
        vec![
            write("c1", "a.txt", "1"),
            SseBuilder::answer("One."),
            write("c2", "b.txt", "2"),
            SseBuilder::answer("Two."),
        ],
        r#"
        [[hooks.PreToolUse]]
        hooks = [
          { type = "command", command = "python3 $HOOKS/crash.py" },
          { type = "command", command = "echo '{oops'" },
          { type = "command", command = "sleep 30 & sleep 30", timeout = 1 },
        ]
        "#,
        &[(
            "crash.py",
            "import sys\nraise SystemExit(sys.stdin.read()[:0] + 'boom: bad config')\n",
        )],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "one").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(
        std::fs::read_to_string(rig.dir.path().join("a.txt")).unwrap(),
        "1"
    );
    let said = notices(&events);
    assert_eq!(said.len(), 3, "{said:#?}");
    assert!(
        said[0].contains("exited with status 1: boom: bad config"),
        "{}",
        said[0]
    );
    assert!(said[1].contains("not a JSON object"), "{}", said[1]);
    assert!(said[2].contains("timeout of 1 s"), "{}", said[2]);
    assert!(said.iter().all(|n| n.contains("blocks nothing")));
    // Said once: the next failures show in /hooks only.
    let (outcome, events) = run(&mut rig.agent, "two").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(
        std::fs::read_to_string(rig.dir.path().join("b.txt")).unwrap(),
        "2"
    );
    assert!(notices(&events).is_empty(), "{:?}", notices(&events));
    let statuses = rig.agent.hooks().unwrap().statuses();
    assert!(
        statuses
            .iter()
            .all(|s| s.last.as_ref().is_some_and(|l| !l.ok))
    );
}

/// A person who says yes to everything.
struct Yes;

impl miniclaw::agent::approvals::Asker for Yes {
    fn ask<'a>(
        &'a self,
        _: miniclaw::approval::ApprovalRequest,
        _: &'a miniclaw::events::EventSink,
    ) -> futures::future::BoxFuture<'a, miniclaw::approval::Decision> {
        Box::pin(async { miniclaw::approval::Decision::Approve })
    }
}

#[tokio::test]
async fn notification_hooks_run_when_a_person_is_asked_and_when_the_turn_ends() {
    let mut rig = rig_with_hooks(
        vec![
            write("c1", "a.txt", "x"),
            SseBuilder::answer("Written."),
        ],
        r#"
        [[hooks.Notification]]
        hooks = [{ type = "command", command = "line=$(cat); printf '%s\\n' \"$line\" >> \"$MINICLAW_PROJECT_DIR/.hook-scripts/notes.jsonl\"" }]
        "#,
        &[],
    )
    .await;
    rig.agent = rig
        .agent
        .with_approvals(miniclaw::approval::ApprovalMode::Ask, Some(Arc::new(Yes)));
    let (outcome, _) = run(&mut rig.agent, "write a.txt").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let notes = hooks_dir(rig.dir.path()).join("notes.jsonl");
    let kinds = || -> Vec<String> {
        std::fs::read_to_string(&notes)
            .unwrap_or_default()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["notification_type"].to_string())
            .collect()
    };
    // They run in the background: nothing waits for them.
    support::wait::until_async("two notifications", || kinds().len() == 2).await;
    let kinds = kinds();
    assert!(
        kinds.contains(&"\"permission_prompt\"".to_string()),
        "{kinds:?}"
    );
    assert!(kinds.contains(&"\"idle_prompt\"".to_string()), "{kinds:?}");
}

#[tokio::test]
async fn session_start_hooks_add_context_to_the_sessions_next_prompt_only() {
    let mut rig = rig_with_hooks(
        vec![SseBuilder::answer("One."), SseBuilder::answer("Two.")],
        r#"
        [[hooks.SessionStart]]
        matcher = "startup|clear"
        hooks = [{ type = "command", command = "echo 'open issues: 3'" }]
        [[hooks.SessionStart]]
        matcher = "resume"
        hooks = [{ type = "command", command = "echo 'never for a start'" }]
        "#,
        &[],
    )
    .await;
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    rig.agent
        .start_session_hooks(
            miniclaw::agent::hook_points::SessionSource::Startup,
            &miniclaw::events::EventSink::new(tx),
            &tokio_util::sync::CancellationToken::new(),
        )
        .await;
    run(&mut rig.agent, "first").await;
    run(&mut rig.agent, "second").await;
    let requests = rig.server.requests();
    let first = requests[0].json()["messages"][1]["content"].to_string();
    assert!(first.contains("open issues: 3"), "{first}");
    assert!(!first.contains("never for a start"), "{first}");
    let second = requests[1].json()["messages"].to_string();
    assert_eq!(
        second.matches("open issues: 3").count(),
        1,
        "once, with the first prompt"
    );
}

#[tokio::test]
async fn a_stop_hook_saying_continue_false_ends_the_turn_instead_of_sending_the_model_back() {
    let mut rig = rig_with_hooks(
        vec![SseBuilder::answer("Done.")],
        r#"
        [[hooks.Stop]]
        hooks = [{ type = "command", command = "echo '{\"continue\": false, \"stopReason\": \"halt now\"}'" }]
        "#,
        &[],
    )
    .await;
    let (outcome, events) = run(&mut rig.agent, "fix it").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(rig.server.requests().len(), 1, "no request after the stop");
    assert!(
        notices(&events)
            .iter()
            .any(|n| n == "A Stop hook ended the turn: halt now"),
        "{:?}",
        notices(&events)
    );
}
