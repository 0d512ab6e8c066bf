//! The reasoning pane: the selected (or current) step's `reasoning_content`, kept per step.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::{draw_lines, inner, pane_block};
use crate::tui::state::{Focus, REASONING, State};
use crate::tui::wrap;

/// Whether there is reasoning to show.
pub fn has_content(state: &State) -> bool {
    state.detail_step().is_some_and(|s| !s.reasoning.is_empty())
}

/// Wraps the reasoning for the current width and sets the scroll size.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let text = state
        .detail_step()
        .map(|s| s.reasoning.clone())
        .unwrap_or_default();
    let lines = wrap::wrap_text(&text, state.theme.reasoning, inner.width as usize);
    state.scroll[REASONING].resize(lines.len(), inner.height as usize);
    state.side.reasoning = lines;
}

/// Draws the reasoning pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[REASONING];
    let title = match state.detail_step() {
        Some(s) => format!(
            "Reasoning · turn {}, step {} (Ctrl+T hides)",
            s.turn + 1,
            s.number
        ),
        None => "Reasoning (Ctrl+T hides)".to_string(),
    };
    let block = pane_block(state, title, Focus::Reasoning, Some(scroll), area.width);
    draw_lines(frame, area, block, &state.side.reasoning, scroll);
}
