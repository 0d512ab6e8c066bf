//! The timeline: one line per Thought / Action / Observation step, expandable to the thought,
//! the arguments and the observation (long values folded; the tool pane shows them whole).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{draw_lines, inner, pane_block};
use crate::tui::state::{CallView, Focus, State, StepView, TIMELINE};
use crate::tui::theme::Theme;
use crate::tui::wrap;

/// Lines of a folded value shown in the timeline.
const FOLD: usize = 8;

/// `name(main argument)`, e.g. `write_text_file(hello.txt)`.
pub fn call_label(name: &str, arguments: &str) -> String {
    let main = serde_json::from_str::<Value>(arguments).ok().and_then(|v| {
        let obj = v.as_object()?.clone();
        [
            "relative_path",
            "path",
            "query",
            "pattern",
            "expression",
            "command",
            "task",
        ]
        .iter()
        .find_map(|k| obj.get(*k).and_then(Value::as_str).map(str::to_string))
        .or_else(|| obj.values().find_map(|v| v.as_str().map(str::to_string)))
    });
    match main {
        Some(arg) => format!(
            "{name}({})",
            wrap::truncate(arg.lines().next().unwrap_or(""), 32)
        ),
        None => format!("{name}()"),
    }
}

/// Pretty JSON of a raw JSON text (the text itself when it is not JSON).
pub fn pretty(raw: &str) -> String {
    serde_json::from_str::<Value>(raw)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| raw.to_string())
}

fn status(step: &StepView, running: bool, theme: &Theme) -> Span<'static> {
    if step.calls.is_empty() {
        return if running {
            Span::styled("…", theme.muted)
        } else {
            Span::styled("answer", theme.muted)
        };
    }
    if step.calls.iter().any(CallView::failed) {
        let ms: u128 = step
            .calls
            .iter()
            .filter_map(|c| c.duration)
            .map(|d| d.as_millis())
            .sum();
        return Span::styled(format!("✗ {ms} ms"), theme.error);
    }
    if step.calls.iter().all(|c| c.result.is_some()) {
        let ms: u128 = step
            .calls
            .iter()
            .filter_map(|c| c.duration)
            .map(|d| d.as_millis())
            .sum();
        Span::styled(format!("✓ {ms} ms"), theme.success)
    } else {
        Span::styled("⋯ running", theme.warning)
    }
}

fn folded(
    text: &str,
    style: ratatui::style::Style,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Line<'static>> = Vec::new();
    for l in lines.iter().take(FOLD) {
        out.extend(wrap::wrap_line(
            &Line::styled(format!("    {l}"), style),
            width,
        ));
    }
    if lines.len() > FOLD {
        out.push(Line::styled(
            format!(
                "    … {} more lines (Tab to the tool output pane)",
                lines.len() - FOLD
            ),
            theme.muted,
        ));
    }
    out
}

fn step_lines(
    step: &StepView,
    selected: bool,
    running: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let marker = if step.expanded { "▾" } else { "▸" };
    let calls: Vec<String> = step
        .calls
        .iter()
        .map(|c| call_label(&c.name, &c.arguments))
        .collect();
    let prefix = format!("{marker} Step {}  ", step.number);
    let status = status(step, running, theme);
    // A collapsed step is exactly one line: the call labels give way first.
    let room = width.saturating_sub(wrap::width(&prefix) + wrap::width(&status.content) + 2);
    let mut spans = vec![Span::styled(prefix, theme.accent)];
    if !calls.is_empty() {
        spans.push(Span::styled(
            wrap::truncate(&calls.join(", "), room.max(1)),
            theme.text,
        ));
        spans.push(Span::raw("  "));
    }
    spans.push(status);
    let mut head = Line::from(spans);
    if selected {
        head = head.patch_style(theme.selection);
    }
    let mut out = wrap::wrap_line(&head, width);
    out.truncate(1);
    if !step.expanded {
        return out;
    }
    let thought = if step.content.trim().is_empty() {
        &step.reasoning
    } else {
        &step.content
    };
    if !thought.trim().is_empty() && !step.calls.is_empty() {
        out.push(Line::styled("  Thought", theme.muted));
        out.extend(folded(thought.trim(), theme.reasoning, width, theme));
    }
    for call in &step.calls {
        out.push(Line::styled(
            format!("  Action  {}", call.name),
            theme.muted,
        ));
        out.extend(folded(&pretty(&call.arguments), theme.text, width, theme));
        for n in &call.nested {
            out.extend(wrap::wrap_line(
                &Line::styled(format!("    {n}"), theme.muted),
                width,
            ));
        }
        match &call.result {
            Some(result) => {
                let style = if call.failed() {
                    theme.error
                } else {
                    theme.text
                };
                let label = if call.failed() {
                    "  Observation ✗ failed"
                } else {
                    "  Observation"
                };
                out.push(Line::styled(
                    label,
                    if call.failed() {
                        theme.error
                    } else {
                        theme.muted
                    },
                ));
                let text = serde_json::to_string_pretty(result).unwrap_or_default();
                out.extend(folded(&text, style, width, theme));
            }
            None => out.push(Line::styled("  Observation  (running…)", theme.warning)),
        }
    }
    if step.calls.is_empty() && !step.content.is_empty() {
        out.push(Line::styled(
            "  Answer (shown in the conversation)",
            theme.muted,
        ));
    }
    out
}

/// Builds the timeline lines for the current width and sets the scroll size.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width as usize;
    let mut lines = Vec::new();
    let mut starts = Vec::new();
    let last = state.steps.len().saturating_sub(1);
    let mut turn = None;
    for (i, step) in state.steps.iter().enumerate() {
        if turn.is_some_and(|t| t != step.turn) {
            lines.push(Line::styled("─".repeat(width.min(40)), state.theme.border));
        }
        turn = Some(step.turn);
        starts.push(lines.len());
        let running = i == last && state.busy();
        lines.extend(step_lines(
            step,
            state.selected == Some(i),
            running,
            width,
            &state.theme,
        ));
    }
    if lines.is_empty() {
        lines.push(Line::styled("No steps yet.", state.theme.muted));
    }
    let scroll = &mut state.scroll[TIMELINE];
    scroll.resize(lines.len(), inner.height as usize);
    if state.reveal_selection {
        if let Some(sel) = state.selected {
            let start = starts.get(sel).copied().unwrap_or(0);
            let end = starts.get(sel + 1).copied().unwrap_or(lines.len());
            let top = scroll.effective_top();
            if start < top {
                scroll.top = start;
                scroll.follow = false;
            } else if end > top + scroll.height {
                scroll.top = (end.saturating_sub(scroll.height)).min(start);
                scroll.follow = scroll.top >= scroll.max_top();
            }
        }
        state.reveal_selection = false;
    }
    state.side.timeline = lines;
    state.side.step_starts = starts;
}

/// Draws the timeline.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[TIMELINE];
    let title = format!("Timeline ({})", state.steps.len());
    let block = pane_block(state, title, Focus::Timeline, Some(scroll));
    draw_lines(frame, area, block, &state.side.timeline, scroll);
}
