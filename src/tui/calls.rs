//! How a tool call is told in one line: its name and the arguments that matter, and why it
//! failed. Shared by the conversation, the timeline and the tool output pane.

use serde_json::{Map, Value};

use super::wrap;
use crate::events::{CallOutcome, RefusedBy};
use crate::transcript::SubAgent;

/// Argument names that say what a call is about, most telling first.
const MAIN_KEYS: [&str; 10] = [
    "command",
    "relative_path",
    "path",
    "url",
    "query",
    "pattern",
    "expression",
    "task",
    "relative_dir",
    "timezone",
];

/// The arguments that matter, on one line: a shell command with its arguments
/// (`ls -la`), a search pattern with its folder (`TODO in src`), else the main argument.
pub fn summary(name: &str, arguments: &str) -> String {
    let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) else {
        return String::new();
    };
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_string);
    let main = match name {
        "run_shell_command" => text("command").map(|c| with_args(c, &args)),
        "search_files" => text("pattern").map(|p| match text("relative_dir") {
            Some(dir) if dir != "." && !dir.is_empty() => format!("{p} in {dir}"),
            _ => p,
        }),
        "search_web" => text("query").map(|q| match text("site") {
            Some(site) => format!("{q} site:{site}"),
            None => q,
        }),
        _ => None,
    };
    let main = main
        .or_else(|| MAIN_KEYS.iter().find_map(|k| text(k)))
        .or_else(|| args.values().find_map(|v| v.as_str().map(str::to_string)))
        .unwrap_or_default();
    one_line(&main)
}

/// The first line of `text`, its escape sequences and control characters dropped whole (the
/// model's text, shown in one line: no `]52;…` left behind).
pub fn one_line(text: &str) -> String {
    crate::terminal_text::clean(text.lines().next().unwrap_or(""))
        .chars()
        .filter(|c| !c.is_control())
        .collect()
}

/// `command` followed by its `args`, each quoted when it holds a space.
fn with_args(command: String, args: &Map<String, Value>) -> String {
    let mut out = command;
    for arg in args
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let a = arg.as_str().map_or_else(|| arg.to_string(), str::to_string);
        out.push(' ');
        if a.is_empty() || a.contains(char::is_whitespace) {
            out.push_str(&format!("{a:?}"));
        } else {
            out.push_str(&a);
        }
    }
    out
}

/// `name(summary)` with the summary cut to `max` columns, e.g. `write_text_file(hello.txt)`.
pub fn label(name: &str, arguments: &str, max: usize) -> String {
    let summary = summary(name, arguments);
    if summary.is_empty() {
        format!("{name}()")
    } else {
        format!("{name}({})", wrap::truncate(&summary, max))
    }
}

/// `name(summary)` as the timeline and tool pane show it (the summary cut to 32 columns).
pub fn call_label(name: &str, arguments: &str) -> String {
    label(name, arguments, 32)
}

/// How a call that did not succeed ended, told apart for the timeline: a person's no from a
/// rule's refusal (`None` when it succeeded).
pub fn outcome_mark(outcome: &CallOutcome) -> Option<&'static str> {
    match outcome {
        CallOutcome::Ok => None,
        CallOutcome::Failed { .. } => Some("✗ failed"),
        CallOutcome::Denied { .. } => Some("✗ denied by you"),
        CallOutcome::Refused {
            by: RefusedBy::Approval,
            ..
        } => Some("⊘ refused by the approval mode"),
        CallOutcome::Refused {
            by: RefusedBy::Guard,
            ..
        } => Some("⊘ refused by a rule"),
        CallOutcome::Refused {
            by: RefusedBy::Hook,
            ..
        } => Some("⊘ blocked by a hook"),
        CallOutcome::Interrupted => Some("⏸ interrupted"),
    }
}

/// The short mark of a step line for the first of its calls that did not succeed: `✗`,
/// `✗ denied`, `⊘ refused`, `⏸`.
pub fn step_mark(outcome: &CallOutcome) -> &'static str {
    match outcome {
        CallOutcome::Ok => "✓",
        CallOutcome::Failed { .. } => "✗",
        CallOutcome::Denied { .. } => "✗ denied",
        CallOutcome::Refused { .. } => "⊘ refused",
        CallOutcome::Interrupted => "⏸",
    }
}

/// Why a finished call did not succeed, in a few words: the first line of its problem.
pub fn failure_reason(outcome: &CallOutcome) -> Option<String> {
    let problem = outcome.problem()?;
    Some(
        problem
            .lines()
            .next()
            .unwrap_or("failed")
            .trim()
            .to_string(),
    )
}

/// A sub-agent's work as the timeline shows it under its call: each step, each call with how
/// it ended, its errors, and the first line of its answer.
pub fn sub_agent_lines(sub: &SubAgent) -> Vec<String> {
    let mut out = Vec::new();
    let mut errors = sub.errors.iter().peekable();
    for (i, step) in sub.steps.iter().enumerate() {
        while let Some((_, message)) = errors.next_if(|(at, _)| *at <= i) {
            out.push(format!("↳ ✗ {message}"));
        }
        out.push(format!("↳ step {}", step.number));
        for call in &step.calls {
            let mut line = format!("↳ {}", call_label(&call.name, &call.arguments));
            if let Some(done) = &call.finished {
                line.push_str(if done.outcome.is_ok() {
                    "  ✓"
                } else {
                    "  ✗"
                });
                if let Some(d) = done.duration {
                    line.push_str(&format!(" {} ms", d.as_millis()));
                }
            }
            out.push(line);
        }
    }
    out.extend(errors.map(|(_, message)| format!("↳ ✗ {message}")));
    if let Some(answer) = sub.answer() {
        let first = answer.trim().lines().next().unwrap_or("");
        out.push(format!("↳ answer: {first}"));
    }
    out
}

/// A finished call's result as the plain lines shown under its call line in the conversation:
/// first a few words of what came of it where the tool's result says so plainly (`exit 1`,
/// `0 matches`, `2 entries`, `+3 lines`), then what it returned. The lines are those
/// [`result_lines`] makes (so the conversation and the tool-output pane read a result the same
/// way), without the `field:` headings of multi-line fields (under a call line, a shell
/// command's stdout reads best as its own lines), cleaned of terminal escapes since tool output
/// is outside data.
pub fn preview_lines(name: &str, arguments: &str, result: &Value) -> Vec<String> {
    let mut out: Vec<String> = outcome_words(name, arguments, result).into_iter().collect();
    let body = match name {
        // What was found or listed: the lines themselves (the count is in the words above).
        "run_shell_command" => only(result, &["stdout", "stderr", "note"]),
        "run_command" => only(
            result,
            &[
                "stopped",
                "warning",
                "moved_aside",
                "stdout",
                "stderr",
                "note",
                "output",
            ],
        ),
        "search_files" => only(result, &["matches", "note"]),
        "list_files" => only(result, &["listing", "note"]),
        // What a file tool did is its change (a diff when it was told, else the words).
        "write_text_file" | "append_text_file" | "replace_text_in_file" => only(result, &["note"]),
        _ => result.clone(),
    };
    let mut lines = result_lines(&body);
    // The files a command changed show as their diffs; what cannot be undone is said here.
    if let Some(left) = result
        .pointer("/files_changed/not_kept")
        .and_then(Value::as_array)
    {
        let names: Vec<&str> = left.iter().filter_map(Value::as_str).collect();
        lines.push((
            format!("changed, not kept for /undo: {}", names.join(", ")),
            true,
        ));
    }
    for (i, (text, muted)) in lines.iter().enumerate() {
        let heading = *muted
            && text.ends_with(':')
            && lines
                .get(i + 1)
                .is_some_and(|(next, _)| next.starts_with("  "));
        if heading {
            continue;
        }
        let text = text.strip_prefix("  ").unwrap_or(text);
        out.push(crate::terminal_text::clean(text).replace('\t', "    "));
    }
    out
}

/// Whether a folded call shows the end of its result rather than its start (a command's
/// output: what failed is said last).
pub fn folds_to_its_end(name: &str) -> bool {
    name == crate::tools::command::NAME
}

/// The fields `keys` of `result`, in that order (the rest are told in words, or do not matter
/// under a call line).
fn only(result: &Value, keys: &[&str]) -> Value {
    let mut kept = Map::new();
    for key in keys {
        // An empty list says nothing the words above did not.
        if let Some(v) = result.get(*key)
            && v.as_array().is_none_or(|a| !a.is_empty())
        {
            kept.insert((*key).to_string(), v.clone());
        }
    }
    Value::Object(kept)
}

/// `n thing` or `n things`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// What came of a call in a few words, where its result says it plainly: a command's exit
/// status when it is not 0, how many matches or entries, how many lines a write brought.
fn outcome_words(name: &str, arguments: &str, result: &Value) -> Option<String> {
    let number = |key: &str| result.get(key).and_then(Value::as_u64);
    let truncated = result.get("truncated").and_then(Value::as_bool) == Some(true);
    let more = if truncated { " (more not shown)" } else { "" };
    match name {
        "run_shell_command" => match result.get("exit_code") {
            Some(Value::Number(code)) if code.as_i64() == Some(0) => None,
            Some(Value::Number(code)) => Some(format!("exit {code}")),
            // No status: a signal ended it.
            Some(Value::Null) => Some("exit: killed by a signal".into()),
            _ => None,
        },
        "run_command" => {
            let took = result
                .get("duration_sec")
                .and_then(Value::as_f64)
                .map(|s| format!(" · {s:.1} s"))
                .unwrap_or_default();
            match (result.get("exit_code"), result.get("job")) {
                (_, Some(job)) => Some(format!("job {job}")),
                (Some(Value::Number(code)), _) => Some(format!("exit {code}{took}")),
                (Some(Value::Null), _) => Some(format!("stopped{took}")),
                _ => None,
            }
        }
        "search_files" => number("match_count").map(|n| count(n, "match", "matches") + more),
        "list_files" => number("count").map(|n| count(n, "entry", "entries") + more),
        "write_text_file" | "append_text_file" => {
            let args: Value = serde_json::from_str(arguments).ok()?;
            let content = args.get("content")?.as_str()?;
            Some(format!(
                "+{}",
                count(content.lines().count() as u64, "line", "lines")
            ))
        }
        "replace_text_in_file" => number("replaced")
            .map(|n| format!("{} replaced", count(n, "occurrence", "occurrences"))),
        _ => None,
    }
}

/// About how many lines [`result_lines`] makes of `result` (a text field's lines, an array's
/// items, a line for anything else), counted no further than `cap`, without making them.
pub fn guess_lines(result: &Value, cap: usize) -> usize {
    let Some(fields) = result.as_object() else {
        return 1;
    };
    let mut n = 0;
    for (key, value) in fields {
        if n >= cap {
            break;
        }
        n += match value {
            _ if key == "ok" || key == "tool" => 0,
            Value::String(text) => 1 + text.bytes().filter(|&b| b == b'\n').take(cap - n).count(),
            Value::Array(items) => 1 + items.len(),
            _ => 1,
        };
    }
    n.min(cap)
}

/// A finished call's result as readable lines (text, whether muted): each field on its own,
/// strings and lists of strings as their lines (a shell command's stdout and stderr as lines,
/// not one escaped JSON string), other values as compact JSON. `ok` and `tool` are in the head.
pub fn result_lines(result: &Value) -> Vec<(String, bool)> {
    let Some(fields) = result.as_object() else {
        return vec![(result.to_string(), true)];
    };
    let mut out = Vec::new();
    for (key, value) in fields {
        if key == "ok" || key == "tool" {
            continue;
        }
        match value {
            Value::String(text) if text.contains('\n') => {
                out.push((format!("{key}:"), true));
                out.extend(
                    text.trim_end_matches('\n')
                        .lines()
                        .map(|l| (format!("  {l}"), false)),
                );
            }
            Value::String(text) if text.is_empty() => {}
            Value::String(text) => out.push((format!("{key}: {text}"), false)),
            Value::Array(items) if items.iter().all(Value::is_string) && !items.is_empty() => {
                out.push((format!("{key}:"), true));
                out.extend(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|l| (format!("  {l}"), false)),
                );
            }
            // A record of names (a command's `files_changed`): one line per kind.
            Value::Object(inner) if inner.values().all(plain_or_names) => {
                out.push((format!("{key}:"), true));
                for (kind, value) in inner {
                    let text = match value {
                        Value::Array(names) => names
                            .iter()
                            .filter_map(Value::as_str)
                            .collect::<Vec<_>>()
                            .join(", "),
                        other => other.as_str().unwrap_or_default().to_string(),
                    };
                    out.push((format!("  {kind}: {text}"), false));
                }
            }
            other => out.push((format!("{key}: {other}"), true)),
        }
    }
    out
}

/// Whether a value is a string or a list of strings.
fn plain_or_names(value: &Value) -> bool {
    match value {
        Value::String(_) => true,
        Value::Array(items) => items.iter().all(Value::is_string),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_of_names_reads_as_one_line_per_kind() {
        let result = serde_json::json!({"ok": true, "files_changed": {"created": ["a.rs", "b.rs"], "deleted": ["c.rs"], "note": "kept"}});
        let lines: Vec<String> = result_lines(&result).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            lines,
            [
                "files_changed:",
                "  created: a.rs, b.rs",
                "  deleted: c.rs",
                "  note: kept"
            ]
        );
    }

    #[test]
    fn the_summary_shows_the_arguments_that_matter() {
        let shell = r#"{"command": "ls", "args": ["-la", "my dir"]}"#;
        assert_eq!(summary("run_shell_command", shell), "ls -la \"my dir\"");
        let search = r#"{"pattern": "TODO", "relative_dir": "src"}"#;
        assert_eq!(summary("search_files", search), "TODO in src");
        let here = r#"{"pattern": "TODO", "relative_dir": "."}"#;
        assert_eq!(summary("search_files", here), "TODO");
        assert_eq!(summary("list_files", r#"{"relative_dir": "."}"#), ".");
        let write = r#"{"relative_path": "a.txt", "content": "x\ny"}"#;
        assert_eq!(summary("write_text_file", write), "a.txt");
        assert_eq!(summary("x", r#"{"note": "one\ntwo"}"#), "one");
        assert_eq!(summary("x", "not json"), "");
        assert_eq!(label("list_files", "{}", 10), "list_files()");
        assert_eq!(
            label("read_text_file", r#"{"relative_path": "abcdefghijkl"}"#, 6),
            "read_text_file(abcde…)"
        );
    }

    #[test]
    fn a_preview_begins_with_what_came_of_the_call_in_words() {
        let failed = serde_json::json!({"ok": true, "exit_code": 1, "stdout": "", "stderr": "no\n", "working_dir": "."});
        assert_eq!(
            preview_lines("run_shell_command", "{}", &failed),
            ["exit 1", "no"]
        );
        let fine =
            serde_json::json!({"ok": true, "exit_code": 0, "stdout": "a\nb\n", "stderr": ""});
        assert_eq!(preview_lines("run_shell_command", "{}", &fine), ["a", "b"]);
        let none =
            serde_json::json!({"ok": true, "match_count": 0, "matches": [], "files_searched": 9});
        assert_eq!(preview_lines("search_files", "{}", &none), ["0 matches"]);
        let two = serde_json::json!({"ok": true, "count": 2, "listing": "a\nb/", "entries": []});
        assert_eq!(
            preview_lines("list_files", "{}", &two),
            ["2 entries", "a", "b/"]
        );
        let write = r#"{"relative_path": "a.txt", "content": "x\ny\nz\n"}"#;
        let written = serde_json::json!({"ok": true, "path": "a.txt", "bytes_written": 6});
        assert_eq!(
            preview_lines("write_text_file", write, &written)[0],
            "+3 lines"
        );
    }

    #[test]
    fn a_failure_reason_is_the_first_line_of_the_problem() {
        let failed = CallOutcome::Failed {
            error: "no such file\nmore".into(),
        };
        assert_eq!(failure_reason(&failed).as_deref(), Some("no such file"));
        assert_eq!(failure_reason(&CallOutcome::Ok), None);
        let denied = CallOutcome::Denied {
            reason: String::new(),
        };
        assert_eq!(
            failure_reason(&denied).as_deref(),
            Some("denied by the user")
        );
    }
}
