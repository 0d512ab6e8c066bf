//! The approval dialog: which tool, its whole arguments and the diff it would make (coloured,
//! scrollable), and the keys; or the line where the reason for a no is typed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::dialog::centered;
use crate::tui::state::State;
use crate::tui::theme::Theme;
use crate::tui::wrap::{truncate, wrap_line};

/// Draws the first waiting call's dialog over `area`.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let Some(view) = state.approvals.first() else {
        return;
    };
    let theme = &state.theme;
    let request = &view.request;
    let body = &view.lines;
    // As tall as the arguments and diff need (two lines for the keys and the scroll marker).
    let wanted = u16::try_from(body.len())
        .unwrap_or(u16::MAX)
        .saturating_add(4);
    let rect = centered(
        area,
        area.width.saturating_sub(6).max(30),
        wanted.clamp(8, area.height.saturating_sub(4).max(8)),
    );
    let inner_width = usize::from(rect.width.saturating_sub(2));
    let count = if request.of > 1 {
        format!(" ({} of {})", request.position, request.of)
    } else {
        String::new()
    };
    let title = truncate(&format!(" Allow {}{count}? ", request.name), inner_width);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.warning)
        .title(Span::styled(title, theme.accent));
    let rows = usize::from(rect.height.saturating_sub(4));
    let (mut lines, hidden) = visible(body, view.scroll, rows, inner_width, theme);
    lines.resize(rows, Line::raw(""));
    lines.push(Line::styled(
        if hidden > 0 {
            format!("▼ {hidden} more lines (↑↓ PageUp PageDown)")
        } else {
            String::new()
        },
        theme.muted,
    ));
    lines.push(footer(view.reason.as_deref(), inner_width, theme));
    frame.render_widget(Clear, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// The body's lines wrapped to `width` (never cut: what is approved is what was shown), from
/// wrapped line `scroll` on, at most `rows` of them; and how many wrapped lines are below.
fn visible(
    body: &[String],
    scroll: usize,
    rows: usize,
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let width = width.max(1);
    let heights: Vec<usize> = body
        .iter()
        .map(|l| crate::tui::wrap::width(l).div_ceil(width).max(1))
        .collect();
    let total: usize = heights.iter().sum();
    let top = scroll.min(total.saturating_sub(rows.max(1)));
    let mut skip = top;
    let mut out = Vec::with_capacity(rows);
    for (line, height) in body.iter().zip(&heights) {
        if out.len() >= rows {
            break;
        }
        if skip >= *height {
            skip -= height;
            continue;
        }
        // Only the lines in view are wrapped: a long file's content costs nothing off screen.
        let styled = Line::styled(line.clone(), diff_style(line, theme));
        let room = rows - out.len();
        out.extend(wrap_line(&styled, width).into_iter().skip(skip).take(room));
        skip = 0;
    }
    (out, total.saturating_sub(top + rows))
}

/// A diff line's colour: added, removed, hunk header; the rest plain.
pub fn diff_style(line: &str, theme: &Theme) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme.muted
    } else if line.starts_with('+') {
        theme.success
    } else if line.starts_with('-') {
        theme.error
    } else if line.starts_with("@@") {
        theme.accent
    } else {
        theme.text
    }
}

/// The keys, or the reason being typed.
fn footer(reason: Option<&str>, width: usize, theme: &Theme) -> Line<'static> {
    match reason {
        Some(reason) => Line::from(vec![
            Span::styled("Why not? (Enter sends, may be empty) ", theme.warning),
            Span::styled(
                truncate(&format!("{reason}▏"), width.saturating_sub(38)),
                theme.text,
            ),
        ]),
        None => Line::styled(
            truncate(
                "y yes · a yes to this tool for the session · n or Esc no, then a reason · Ctrl+C stop",
                width,
            ),
            theme.accent,
        ),
    }
}
