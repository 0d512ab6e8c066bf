//! What a hook's run says, read as Claude Code reads it, so existing scripts mean the same:
//!
//! - exit 2: block; stderr is the reason (the model reads it for a tool call or a stop, the
//!   person for a prompt);
//! - exit 0 with a JSON object on stdout: `{"decision": "block", "reason": …}`,
//!   `{"continue": false, "stopReason": …}`, `hookSpecificOutput.permissionDecision: "deny"`
//!   with `permissionDecisionReason`, and `hookSpecificOutput.additionalContext`;
//! - exit 0 with plain text: context for `UserPromptSubmit` and `SessionStart`, else nothing;
//! - any other status, a timeout, or stdout that starts like JSON and is not: a problem, said
//!   to the person, that blocks nothing.

use serde_json::Value;

use super::run::Ran;
use crate::settings::HookEvent;

/// The most of a reason or a context that is kept (what the model or the person reads).
pub const MAX_TEXT_CHARS: usize = 8_000;

/// What one hook's run asks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reply {
    /// It blocks what it ran for, for this reason.
    pub block: Option<String>,
    /// It said `"continue": false`: nothing more happens after it, for this reason (a `Stop`
    /// hook so ends the turn; for the other events it blocks like `block`).
    pub stop: Option<String>,
    /// Text it adds for the model.
    pub context: Option<String>,
    /// What it tells the person (`systemMessage`).
    pub message: Option<String>,
    /// It failed: what went wrong (blocks nothing).
    pub problem: Option<String>,
}

/// Reads `ran` as a reply to `event`.
pub fn read(event: HookEvent, ran: &Ran) -> Reply {
    match ran {
        Ran::Exited {
            code: Some(0),
            stdout,
            ..
        } => from_stdout(event, stdout),
        Ran::Exited {
            code: Some(2),
            stderr,
            ..
        } => Reply {
            block: Some(text_or(stderr, "a hook blocked it (exit status 2)")),
            ..Reply::default()
        },
        Ran::Exited { code, stderr, .. } => {
            let status = code.map_or("was ended by a signal".to_string(), |c| {
                format!("exited with status {c}")
            });
            let detail = first_line(stderr)
                .map(|l| format!(": {l}"))
                .unwrap_or_default();
            problem(format!("{status}{detail}"))
        }
        Ran::TimedOut(after) => problem(format!(
            "ran past its timeout of {} s and was stopped",
            after.as_secs_f64()
        )),
        Ran::Interrupted => Reply::default(),
        Ran::NotStarted(why) => problem(format!("could not be started: {why}")),
    }
}

fn problem(text: String) -> Reply {
    Reply {
        problem: Some(text),
        ..Reply::default()
    }
}

fn from_stdout(event: HookEvent, stdout: &str) -> Reply {
    let trimmed = stdout.trim();
    if !trimmed.starts_with('{') {
        let plain = matches!(event, HookEvent::UserPromptSubmit | HookEvent::SessionStart);
        return Reply {
            context: (plain && !trimmed.is_empty()).then(|| capped(trimmed)),
            ..Reply::default()
        };
    }
    let Ok(Value::Object(out)) = serde_json::from_str::<Value>(trimmed) else {
        return problem("printed output that starts like JSON but is not a JSON object".into());
    };
    let text = |v: Option<&Value>| v.and_then(Value::as_str).map(str::trim).map(capped);
    let specific = out.get("hookSpecificOutput").and_then(Value::as_object);
    let mut reply = Reply {
        message: text(out.get("systemMessage")).filter(|m| !m.is_empty()),
        ..Reply::default()
    };
    if out.get("decision").and_then(Value::as_str) == Some("block") {
        reply.block = Some(text(out.get("reason")).unwrap_or_else(|| "blocked by a hook".into()));
    }
    // Claude Code's `continue: false` wins over a decision.
    if out.get("continue") == Some(&Value::Bool(false)) {
        let why = text(out.get("stopReason")).unwrap_or_else(|| "stopped by a hook".into());
        reply.stop = Some(why.clone());
        if event != HookEvent::Stop {
            reply.block = Some(why);
        }
    }
    if let Some(specific) = specific {
        if specific.get("permissionDecision").and_then(Value::as_str) == Some("deny") {
            reply.block = Some(
                text(specific.get("permissionDecisionReason"))
                    .unwrap_or_else(|| "denied by a hook".into()),
            );
        }
        reply.context = text(specific.get("additionalContext")).filter(|c| !c.is_empty());
    }
    reply
}

fn text_or(text: &str, default: &str) -> String {
    let t = text.trim();
    if t.is_empty() {
        default.to_string()
    } else {
        capped(t)
    }
}

fn first_line(text: &str) -> Option<String> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.chars().take(300).collect())
}

fn capped(text: &str) -> String {
    if text.chars().count() <= MAX_TEXT_CHARS {
        return text.to_string();
    }
    let mut out: String = text.chars().take(MAX_TEXT_CHARS).collect();
    out.push_str(" […cut]");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32, stdout: &str, stderr: &str) -> Ran {
        Ran::Exited {
            code: Some(code),
            stdout: stdout.into(),
            stderr: stderr.into(),
        }
    }

    #[test]
    fn exit_2_and_each_json_form_block_plain_text_is_context_only_where_claude_reads_it() {
        let pre = HookEvent::PreToolUse;
        assert_eq!(
            read(pre, &exited(2, "", "no writes to prod\n"))
                .block
                .as_deref(),
            Some("no writes to prod")
        );
        let json = r#"{"decision":"block","reason":"use the test db"}"#;
        assert_eq!(
            read(pre, &exited(0, json, "")).block.as_deref(),
            Some("use the test db")
        );
        let deny = r#"{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here"}}"#;
        assert_eq!(
            read(pre, &exited(0, deny, "")).block.as_deref(),
            Some("not here")
        );
        let stop = r#"{"continue":false,"stopReason":"enough"}"#;
        assert_eq!(
            read(pre, &exited(0, stop, "")).block.as_deref(),
            Some("enough")
        );
        // For a Stop hook it ends the turn: it is no reason to go on.
        let at_stop = read(HookEvent::Stop, &exited(0, stop, ""));
        assert_eq!(
            (at_stop.block, at_stop.stop.as_deref()),
            (None, Some("enough"))
        );
        let context = r#"{"hookSpecificOutput":{"additionalContext":"the lint passed"}}"#;
        let r = read(HookEvent::PostToolUse, &exited(0, context, ""));
        assert_eq!(
            (r.block, r.context.as_deref()),
            (None, Some("the lint passed"))
        );
        let told = r#"{"systemMessage":"formatted 3 files"}"#;
        assert_eq!(
            read(HookEvent::PostToolUse, &exited(0, told, ""))
                .message
                .as_deref(),
            Some("formatted 3 files")
        );
        // Plain text is context for a prompt and a session start, nothing for a tool call.
        assert_eq!(
            read(
                HookEvent::UserPromptSubmit,
                &exited(0, "branch: main\n", "")
            )
            .context
            .as_deref(),
            Some("branch: main")
        );
        assert_eq!(read(pre, &exited(0, "all fine", "")), Reply::default());
        // An allow says nothing MiniClaw acts on.
        let allow = r#"{"hookSpecificOutput":{"permissionDecision":"allow"}}"#;
        assert_eq!(read(pre, &exited(0, allow, "")), Reply::default());
    }

    #[test]
    fn failures_are_problems_that_block_nothing() {
        let pre = HookEvent::PreToolUse;
        let r = read(
            pre,
            &exited(1, "", "Traceback (most recent call last):\n  boom"),
        );
        assert_eq!(r.block, None);
        assert_eq!(
            r.problem.as_deref(),
            Some("exited with status 1: Traceback (most recent call last):")
        );
        let r = read(pre, &exited(0, "{not json", ""));
        assert!(r.problem.unwrap().contains("not a JSON object"));
        let r = read(pre, &Ran::TimedOut(std::time::Duration::from_secs(2)));
        assert!(r.problem.unwrap().contains("timeout of 2 s"));
        let r = read(
            pre,
            &Ran::Exited {
                code: None,
                stdout: String::new(),
                stderr: String::new(),
            },
        );
        assert!(r.problem.unwrap().contains("signal"));
    }
}
