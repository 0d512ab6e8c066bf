//! The prompt editor (ratatui-textarea) in its bordered pane.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::{inner, pane_block};
use crate::tui::state::{Focus, State};

/// Rows the input wants: its lines plus the border, between 3 and 8.
pub fn height(state: &State) -> u16 {
    // A paste may hold more lines than a u16 counts: clamp before narrowing.
    (state.composer.input.lines().len().min(6) as u16 + 2).clamp(3, 8)
}

/// Draws the input.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let title = if !state.composer.queued.is_empty() {
        let next = state.composer.queued[0].lines().next().unwrap_or("");
        format!(
            "Message · {} queued: {} (Up edits · Esc removes)",
            state.composer.queued.len(),
            crate::tui::wrap::truncate(next, 30)
        )
    } else if state.busy() {
        "Message · Esc interrupts".to_string()
    } else if state.view.plans.draft() {
        "Plan · edit it · Enter runs it item by item · Esc sets it aside".to_string()
    } else {
        "Message · Enter sends · Alt+Enter newline".to_string()
    };
    let block = pane_block(state, title, Focus::Input, None, area.width);
    frame.render_widget(block, area);
    frame.render_widget(&state.composer.input, inner(area));
}
