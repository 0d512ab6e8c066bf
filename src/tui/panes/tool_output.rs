//! The tool output pane: a running tool's output as it arrives, then its whole result.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::timeline::call_label;
use super::{draw_lines, inner, pane_block};
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
            if !call.output.is_empty() {
                lines.extend(wrap::wrap_text(
                    call.output.trim_end_matches('\n'),
                    theme.text,
                    width,
                ));
            }
            if let Some(result) = &call.result {
                let text = serde_json::to_string_pretty(result).unwrap_or_default();
                lines.extend(wrap::wrap_text(&format!("→ {text}"), theme.muted, width));
            }
        }
    }
    state.scroll[TOOL].resize(lines.len(), inner.height as usize);
    state.side.tool_output = lines;
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
