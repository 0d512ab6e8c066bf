//! The reasoning pane: the selected (or current) step's `reasoning_content`, kept per step.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::Caches;
use super::{draw_lines, inner, pane_block};
use crate::tui::state::{Focus, Pane, State};

/// Whether there is reasoning to show.
pub fn has_content(state: &State) -> bool {
    state
        .view
        .detail_step()
        .is_some_and(|s| !s.reasoning.is_empty())
}

/// Brings the wrapped reasoning up to date for the current width and sets the scroll size. The
/// lines are kept between frames ([`super::wrap_cache::GrowingWrap`]): while the reasoning
/// grows only its open end is wrapped again; a new width, style or step (any text that does
/// not continue the one wrapped before) wraps it afresh.
pub fn prepare(state: &mut State, caches: &mut Caches, area: Rect) {
    let inner = inner(area);
    let cache = &mut caches.reasoning;
    let raw = state
        .view
        .detail_step()
        .map_or("", |s| s.reasoning.as_str());
    // The model's text: its escapes go whole, not just their control character.
    let text = caches.reasoning_clean.update(raw);
    cache.update(text, state.theme.reasoning, inner.width as usize);
    state.scroll[Pane::Reasoning].resize(cache.lines().len(), inner.height as usize);
}

/// Draws the reasoning pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, caches: &Caches, area: Rect) {
    let scroll = &state.scroll[Pane::Reasoning];
    let title = match state.view.detail_step() {
        Some(s) => format!(
            "Reasoning · turn {}, step {} (Ctrl+T hides)",
            s.turn + 1,
            s.number
        ),
        None => "Reasoning (Ctrl+T hides)".to_string(),
    };
    let block = pane_block(state, title, Focus::Reasoning, Some(scroll), area.width);
    draw_lines(frame, area, block, caches.reasoning.lines(), scroll);
}
