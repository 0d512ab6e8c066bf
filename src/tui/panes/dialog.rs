//! The confirm dialog for clearing the history: archive it, delete it, or keep it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use crate::tui::state::{Overlay, State};

/// A rectangle of at most `width` × `height` centred in `area`.
pub fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

/// Draws the question of the open confirm overlay: clearing, or undoing over later changes.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    if state.overlay == Overlay::ConfirmUndo {
        return draw_lines(
            frame,
            state,
            area,
            [
                (
                    "Files changed since that turn (the diff is above).",
                    state.theme.accent,
                ),
                (
                    "y undoes anyway: those later changes are lost",
                    state.theme.text,
                ),
                (
                    "any other key keeps the files as they are",
                    state.theme.muted,
                ),
            ],
        );
    }
    draw_lines(
        frame,
        state,
        area,
        [
            ("Clear this conversation?", state.theme.accent),
            (
                "a archives it (/resume reopens it) · y deletes it",
                state.theme.text,
            ),
            ("any other key keeps it", state.theme.muted),
        ],
    );
}

/// A double-bordered box of three centred lines.
fn draw_lines(
    frame: &mut Frame<'_>,
    state: &State,
    area: Rect,
    lines: [(&'static str, ratatui::style::Style); 3],
) {
    let rect = centered(area, 58, 5);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(state.theme.warning)
        .title(" Confirm ");
    let text: Vec<Line<'static>> = lines
        .into_iter()
        .map(|(text, style)| Line::styled(text, style))
        .collect();
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(text).block(block).centered(), rect);
}
