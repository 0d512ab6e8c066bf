//! One drawing function per pane; each reads the state and never changes it.

pub(crate) mod approval;
pub(crate) mod border;
pub(crate) mod chips;
pub(crate) mod conversation;
pub(crate) mod dialog;
pub(crate) mod help;
pub(crate) mod input;
pub(crate) mod key_dialog;
pub(crate) mod picker;
pub(crate) mod plan;
pub(crate) mod popup;
pub(crate) mod put;
pub(crate) mod reasoning;
pub(crate) mod status;
pub(crate) mod timeline;
pub(crate) mod tool_output;
pub(crate) mod wrap_cache;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::symbols::border as border_set;
use ratatui::text::{Line, Span};

pub use border::PaneBorder;

use super::state::{Focus, Scroll, State};

/// What the side panes keep between frames, so a frame wraps only what changed: the layout
/// pass brings them up to date, drawing reads them. Kept beside the state, not in it.
#[derive(Clone, Debug, Default)]
pub struct Caches {
    /// The timeline's lines, per step.
    pub timeline: timeline::TimelineLines,
    /// The detail step's reasoning, wrapped.
    pub reasoning: wrap_cache::GrowingWrap,
    /// The detail step's reasoning cleaned of terminal escapes, as it grows.
    pub reasoning_clean: wrap_cache::Cleaned,
    /// The detail step's calls, as the tool output pane shows them.
    pub tool_output: tool_output::ToolLines,
}

/// A pane's border: accent border when focused, a marker when more is below. Titles are cut to
/// fit inside the corners of a pane `width` columns wide.
pub fn pane_block<'a>(
    state: &State,
    title: String,
    focus: Focus,
    scroll: Option<&Scroll>,
    width: u16,
) -> PaneBorder<'a> {
    let room = usize::from(width).saturating_sub(4);
    let title = crate::tui::wrap::truncate(&title, room);
    let focused = state.focus == focus;
    let theme = &state.theme;
    let bottom = scroll.filter(|s| s.more_below()).map(|s| {
        let hidden = s.max_top() - s.effective_top();
        let marker = crate::tui::wrap::truncate(&format!("▼ {hidden} more below (End)"), room);
        Line::styled(format!(" {marker} "), theme.warning).right_aligned()
    });
    PaneBorder {
        set: if focused {
            border_set::THICK
        } else {
            border_set::ROUNDED
        },
        style: if focused {
            theme.border_focused
        } else {
            theme.border
        },
        title: Span::styled(
            format!(" {title} "),
            if focused { theme.accent } else { theme.muted },
        ),
        bottom,
    }
}

/// The area inside a pane's border.
pub fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

/// Draws pre-wrapped `lines` in a bordered pane, from the scroll position.
pub fn draw_lines(
    frame: &mut Frame<'_>,
    area: Rect,
    block: PaneBorder<'_>,
    lines: &[Line<'static>],
    scroll: &Scroll,
) {
    let top = scroll.effective_top().min(lines.len());
    let text_area = block.inner(area);
    frame.render_widget(block, area);
    put::put_lines(frame.buffer_mut(), text_area, &lines[top..]);
}

/// Clears `rect` for a popup drawn over what is there. A wide character (CJK, an emoji) that
/// starts just left of it would cover its left border with its second half: it goes too.
pub fn clear_under(frame: &mut Frame, rect: Rect) {
    use unicode_width::UnicodeWidthStr;
    frame.render_widget(ratatui::widgets::Clear, rect);
    if rect.x == 0 {
        return;
    }
    let buffer = frame.buffer_mut();
    for y in rect.top()..rect.bottom() {
        if let Some(cell) = buffer.cell_mut((rect.x - 1, y))
            && cell.symbol().width() > 1
        {
            cell.set_symbol(" ");
        }
    }
}

#[cfg(test)]
mod clear_tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::layout::Rect;
    use ratatui::widgets::{Block, Borders, Paragraph};

    #[test]
    fn a_popup_over_wide_characters_keeps_its_left_border() {
        let mut terminal = Terminal::new(TestBackend::new(12, 3)).unwrap();
        terminal
            .draw(|frame| {
                frame.render_widget(Paragraph::new("你好你好你好\n你好你好你好"), frame.area());
                // Its left edge falls on the second half of "好".
                let rect = Rect::new(3, 0, 6, 3);
                super::clear_under(frame, rect);
                frame.render_widget(Block::default().borders(Borders::ALL), rect);
            })
            .unwrap();
        let buffer = terminal.backend().buffer();
        for y in 0..2 {
            assert_eq!(
                buffer[(2, y)].symbol(),
                " ",
                "the cut character goes, row {y}"
            );
            assert!(matches!(buffer[(3, y)].symbol(), "┌" | "│"), "row {y}");
        }
        assert_eq!(buffer[(0, 0)].symbol(), "你", "the rest stays");
    }
}
