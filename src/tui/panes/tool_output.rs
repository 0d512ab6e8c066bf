//! The tool output pane: a running tool's output as it arrives, then its whole result.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::{draw_lines, inner, pane_block};
use crate::tui::calls::call_label;
use crate::tui::state::{Focus, State, TOOL};
use crate::tui::wrap;

/// Whether any step has a call to show.
pub fn has_content(state: &State) -> bool {
    state.detail_step().is_some_and(|s| !s.calls.is_empty())
}

/// Builds the lines for the current width and sets the scroll size.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width as usize;
    let theme = &state.theme;
    let mut lines: Vec<Line<'static>> = Vec::new();
    if let Some(step) = state.detail_step() {
        for call in &step.calls {
            let label = call_label(&call.name, &call.arguments);
            let (head, style) = match (&call.result, call.failed()) {
                (None, _) => (format!("▶ {label}  running…"), theme.warning),
                (Some(_), true) => (format!("✗ {label}  failed"), theme.error),
                (Some(_), false) => (
                    format!(
                        "✓ {label}  {} ms",
                        call.duration.map_or(0, |d| d.as_millis())
                    ),
                    theme.success,
                ),
            };
            lines.extend(wrap::wrap_text(&head, style, width));
            match &call.result {
                // Finished: the result, field by field, text as lines (it holds what streamed).
                Some(result) => {
                    for (text, muted) in result_lines(result) {
                        let style = if muted { theme.muted } else { theme.text };
                        lines.extend(wrap::wrap_text(&text, style, width));
                    }
                }
                None if !call.output.is_empty() => {
                    lines.extend(wrap::wrap_text(
                        call.output.trim_end_matches('\n'),
                        theme.text,
                        width,
                    ));
                }
                None => {}
            }
        }
    }
    state.scroll[TOOL].resize(lines.len(), inner.height as usize);
    state.side.tool_output = lines;
}

/// A finished call's result as readable lines (text, whether muted): each field on its own,
/// strings and lists of strings as their lines (a shell command's stdout and stderr as lines,
/// not one escaped JSON string), other values as compact JSON. `ok` and `tool` are in the head.
pub fn result_lines(result: &serde_json::Value) -> Vec<(String, bool)> {
    use serde_json::Value;
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
            other => out.push((format!("{key}: {other}"), true)),
        }
    }
    out
}

/// Draws the tool output pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[TOOL];
    let block = pane_block(
        state,
        "Tool output".into(),
        Focus::ToolOutput,
        Some(scroll),
        area.width,
    );
    draw_lines(frame, area, block, &state.side.tool_output, scroll);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_shell_result_reads_as_lines_not_as_an_escaped_string() {
        let result = json!({
            "ok": true, "tool": "run_shell_command", "command": "ls -la",
            "exit_code": 0, "stdout": "a.txt\nb.txt\n", "stderr": "", "truncated": false
        });
        let lines: Vec<String> = result_lines(&result).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            lines,
            [
                "command: ls -la",
                "exit_code: 0",
                "stdout:",
                "  a.txt",
                "  b.txt",
                "truncated: false"
            ]
        );
        let search =
            json!({"ok": true, "tool": "search_files", "matches": ["a.rs:1:x", "b.rs:2:y"]});
        let lines: Vec<String> = result_lines(&search).into_iter().map(|(t, _)| t).collect();
        assert_eq!(lines, ["matches:", "  a.rs:1:x", "  b.rs:2:y"]);
    }
}
