//! The confirm dialog for clearing the history: archive it, delete it, or keep it.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use crate::tui::state::State;

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

/// Draws "Clear this conversation?" with its three answers.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let rect = centered(area, 58, 5);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(state.theme.warning)
        .title(" Confirm ");
    let text = vec![
        Line::styled("Clear this conversation?", state.theme.accent),
        Line::styled(
            "a archives it (/resume reopens it) · y deletes it",
            state.theme.text,
        ),
        Line::styled("any other key keeps it", state.theme.muted),
    ];
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(text).block(block).centered(), rect);
}
