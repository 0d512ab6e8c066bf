//! A pane's border and titles, drawn cell by cell.
//!
//! ratatui's `Block` first sets its style on every cell of its area, the inside included: for
//! five panes that is the whole screen once a frame, about a sixth of a streamed frame's
//! drawing in a profile. A pane's block has no style of its own (the border and titles carry
//! theirs), so [`PaneBorder`] touches only the border's cells, and draws what `Block` draws
//! there.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::symbols::border;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

/// A bordered pane's frame: the border in its style, a title on the top border at the left, and
/// an optional right-aligned title on the bottom border.
#[derive(Clone, Debug)]
pub struct PaneBorder<'a> {
    /// The border's characters (rounded, or thick for the focused pane).
    pub set: border::Set<'a>,
    /// The border's style.
    pub style: Style,
    /// On the top border, after the corner.
    pub title: Span<'a>,
    /// On the bottom border, ending before the corner.
    pub bottom: Option<Line<'a>>,
}

impl PaneBorder<'_> {
    /// The area inside the border.
    pub fn inner(&self, area: Rect) -> Rect {
        super::inner(area)
    }
}

impl Widget for PaneBorder<'_> {
    fn render(self, area: Rect, buf: &mut Buffer) {
        let area = area.intersection(buf.area);
        if area.is_empty() {
            return;
        }
        let (left, right) = (area.left(), area.right() - 1);
        let (top, bottom) = (area.top(), area.bottom() - 1);
        let mut put = |x: u16, y: u16, symbol: &str| {
            buf[(x, y)].set_symbol(symbol).set_style(self.style);
        };
        for x in left..=right {
            put(x, top, self.set.horizontal_top);
            put(x, bottom, self.set.horizontal_bottom);
        }
        for y in top..=bottom {
            put(left, y, self.set.vertical_left);
            put(right, y, self.set.vertical_right);
        }
        // Corners last, as `Block` draws them: they win over the edges in a 1-cell pane.
        put(right, bottom, self.set.bottom_right);
        put(right, top, self.set.top_right);
        put(left, bottom, self.set.bottom_left);
        put(left, top, self.set.top_left);
        // The titles go where `Block` puts them, and are cut as it cuts them (by `Line`).
        let room = area.width.saturating_sub(2);
        let row = |y: u16| Rect::new(left.saturating_add(1), y, room, 1);
        let title = Line::from(self.title);
        let width = u16::try_from(title.width()).unwrap_or(u16::MAX);
        if room > 0 && width > 0 {
            title.render(
                Rect {
                    width: width.min(room),
                    ..row(top)
                },
                buf,
            );
        }
        if let Some(line) = self.bottom {
            let titles = row(bottom);
            let width = u16::try_from(line.width()).unwrap_or(u16::MAX);
            if !titles.is_empty() {
                let at = Rect {
                    x: titles.right().saturating_sub(width).max(titles.left()),
                    width: width.min(titles.width),
                    ..titles
                };
                line.render(at, buf);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::widgets::{Block, BorderType, Borders};

    /// The same border drawn by ratatui's `Block` and by `PaneBorder`, over a buffer that already
    /// holds text (the inside must be left as it was).
    fn both(area: Rect, thick: bool, title: &str, bottom: Option<&str>) -> (Buffer, Buffer) {
        let style = Style::default().fg(Color::Cyan);
        let title_style = Style::default()
            .fg(Color::Yellow)
            .add_modifier(Modifier::BOLD);
        let bottom_style = Style::default().fg(Color::Red);
        let screen = Rect::new(0, 0, 30, 8);
        let mut filled = Buffer::empty(screen);
        for y in 0..screen.height {
            filled.set_string(0, y, "x".repeat(30), Style::default().bg(Color::Blue));
        }
        let mut block = Block::default()
            .borders(Borders::ALL)
            .border_type(if thick {
                BorderType::Thick
            } else {
                BorderType::Rounded
            })
            .border_style(style)
            .title(Span::styled(title.to_string(), title_style));
        if let Some(b) = bottom {
            block = block.title_bottom(Line::styled(b.to_string(), bottom_style).right_aligned());
        }
        let mut expected = filled.clone();
        block.render(area, &mut expected);
        let mut got = filled;
        PaneBorder {
            set: if thick {
                border::THICK
            } else {
                border::ROUNDED
            },
            style,
            title: Span::styled(title.to_string(), title_style),
            bottom: bottom.map(|b| Line::styled(b.to_string(), bottom_style).right_aligned()),
        }
        .render(area, &mut got);
        (expected, got)
    }

    #[test]
    fn it_draws_what_ratatuis_block_draws_and_leaves_the_inside_alone() {
        for area in [
            Rect::new(0, 0, 30, 8),
            Rect::new(2, 1, 20, 5),
            Rect::new(5, 3, 3, 3),
            Rect::new(0, 0, 2, 2),
            Rect::new(1, 1, 1, 1),
            Rect::new(4, 2, 12, 1),
            Rect::new(25, 6, 20, 10), // partly off the buffer
        ] {
            for thick in [false, true] {
                for (title, bottom) in [
                    (" Conversation ", None),
                    (" Tool output ", Some(" ▼ 12 more below (End) ")),
                    (" 你好 🦀 ", Some(" 更多 ")),
                    ("", Some("")),
                ] {
                    let (expected, got) = both(area, thick, title, bottom);
                    assert_eq!(got, expected, "{area:?} thick={thick} {title:?} {bottom:?}");
                }
            }
        }
    }
}
