//! Lines written straight into the frame's buffer: what a `Paragraph` without wrapping draws,
//! without copying the lines first, and with plain ASCII (most of any answer or code) written a
//! byte a cell instead of through grapheme segmentation.

use ratatui::buffer::Buffer;
use ratatui::layout::{Alignment, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use unicode_width::UnicodeWidthStr;

/// Draws `lines` into `area` from its top, one row each, cut at its width.
pub fn put_lines<'a>(buf: &mut Buffer, area: Rect, lines: impl IntoIterator<Item = &'a Line<'a>>) {
    let area = area.intersection(buf.area);
    for (line, y) in lines.into_iter().zip(area.top()..area.bottom()) {
        put_line(buf, area.x, y, line, area.width);
    }
}

/// Draws one line at (`x`, `y`), at most `width` cells, aligned as the line asks.
pub fn put_line(buf: &mut Buffer, x: u16, y: u16, line: &Line<'_>, width: u16) {
    let offset = match line.alignment {
        Some(Alignment::Center) => (width / 2).saturating_sub(line_width(line) / 2),
        Some(Alignment::Right) => width.saturating_sub(line_width(line)),
        Some(Alignment::Left) | None => 0,
    };
    let mut x = x + offset;
    let mut room = width.saturating_sub(offset);
    for span in &line.spans {
        if room == 0 {
            break;
        }
        let style = line.style.patch(span.style);
        let (written, whole) = put_str(buf, x, y, &span.content, room, style);
        x += written;
        room -= written;
        // A span cut short ends the line: what follows it would be drawn out of place.
        if !whole {
            break;
        }
    }
}

/// Whether `c` is a grapheme of its own (nothing combines with it, it combines with nothing)
/// one cell wide: printable ASCII, and the box-drawing characters and marks the panes draw.
fn one_cell(c: char) -> bool {
    matches!(c, ' '..='~' | '\u{2500}'..='\u{259F}' | '•' | '…' | '▸' | '▾')
}

fn line_width(line: &Line<'_>) -> u16 {
    u16::try_from(line.width()).unwrap_or(u16::MAX)
}

/// Writes `text` at (`x`, `y`) in at most `room` cells; returns the cells used and whether
/// all of it was written.
fn put_str(buf: &mut Buffer, x: u16, y: u16, text: &str, room: u16, style: Style) -> (u16, bool) {
    // Printable ASCII is one grapheme a byte, each one cell wide.
    if text.bytes().all(|b| (0x20..0x7f).contains(&b)) {
        let n = text.len().min(room as usize);
        for (i, cx) in (x..).take(n).enumerate() {
            buf[(cx, y)].set_symbol(&text[i..=i]).set_style(style);
        }
        return (n as u16, n == text.len());
    }
    // So are the frames' and lists' own characters (a code block's bars, a table's rules).
    if text.chars().all(one_cell) {
        let mut written = 0;
        for (i, c) in text.char_indices() {
            if written == room {
                return (written, false);
            }
            buf[(x + written, y)]
                .set_symbol(&text[i..i + c.len_utf8()])
                .set_style(style);
            written += 1;
        }
        return (written, true);
    }
    let (end, _) = buf.set_stringn(x, y, text, room as usize, style);
    let written = end - x;
    // A character that does not fit leaves at most one cell (none is wider than two).
    let whole = written + 1 < room || usize::from(written) >= text.width();
    (written, whole)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::style::{Color, Modifier};
    use ratatui::text::Span;
    use ratatui::widgets::{Paragraph, Widget};

    /// The lines drawn by `put_lines` and by a `Paragraph` into two buffers of `area`.
    fn both(lines: &[Line<'static>], area: Rect) -> (Buffer, Buffer) {
        let mut ours = Buffer::empty(area);
        put_lines(&mut ours, area, lines);
        let mut theirs = Buffer::empty(area);
        Paragraph::new(lines.to_vec()).render(area, &mut theirs);
        (ours, theirs)
    }

    #[test]
    fn draws_what_a_paragraph_draws() {
        let red = Style::new().fg(Color::Red);
        let lines = vec![
            Line::from(vec![Span::styled("fn main() ", red), Span::raw("{ x }")]),
            Line::styled(
                "whole line styled",
                Style::new().add_modifier(Modifier::BOLD),
            ),
            Line::from("你好，MiniClaw 🦀 café e\u{301}"),
            Line::from("cut at the pane's width: this line is much longer than ten cells"),
            Line::from("centred").centered(),
            Line::from("right").right_aligned(),
            Line::from(vec![
                Span::raw("ab"),
                Span::styled("宽字", red),
                Span::raw("z"),
            ]),
            Line::default(),
            Line::from("below the area is not drawn"),
        ];
        // (At width 1 they differ: a Paragraph skips a character wider than the whole line
        // and draws what follows it; here the line ends there, as at any other width.)
        for width in [2u16, 3, 5, 10, 30] {
            let area = Rect::new(2, 1, width, 8);
            let (ours, theirs) = both(&lines, area);
            assert_eq!(ours, theirs, "width {width}");
        }
    }

    #[test]
    fn frame_characters_are_drawn_as_a_paragraph_draws_them() {
        let red = Style::new().fg(Color::Red);
        let lines = vec![
            Line::from(vec![
                Span::styled("│ ", red),
                Span::raw("let x = 1;"),
                Span::styled(" │", red),
            ]),
            Line::from("╭─ rust ──── 3 ─╮"),
            Line::from("• item … ▸ step ▾ ━━┃┏┓┗┛ ░▒▓█"),
            Line::from(vec![Span::raw("├──┼"), Span::raw("é\u{301}│")]),
        ];
        for width in [1u16, 2, 3, 7, 16, 40] {
            let area = Rect::new(1, 0, width, 4);
            let (ours, theirs) = both(&lines, area);
            assert_eq!(ours, theirs, "width {width}");
        }
        // Each of them is one grapheme, one cell wide, wherever it stands.
        for c in (' '..='~')
            .chain('\u{2500}'..='\u{259F}')
            .chain(['•', '…', '▸', '▾'])
        {
            assert!(one_cell(c));
            assert_eq!(c.to_string().width(), 1, "{c:?}");
            let around = format!("a{c}\u{301}b");
            assert_eq!(
                unicode_segmentation::UnicodeSegmentation::graphemes(around.as_str(), true).next(),
                Some("a"),
                "{c:?}"
            );
        }
    }

    #[test]
    fn a_wide_character_that_does_not_fit_is_left_out() {
        let lines = vec![Line::from("abc宽"), Line::from("ab宽")];
        let (ours, theirs) = both(&lines, Rect::new(0, 0, 4, 2));
        assert_eq!(ours, theirs);
        assert_eq!(ours[(3, 0)].symbol(), " ");
    }
}
