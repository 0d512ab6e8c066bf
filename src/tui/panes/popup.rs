//! The completion popup, drawn at the bottom of the conversation pane (inside its borders, so
//! the side panes' stay whole), near the input: its rows (matched letters highlighted,
//! the selected row marked), a title saying what it completes and how many match, and its
//! keys in the bottom border.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};
use unicode_width::UnicodeWidthChar;

use crate::tui::paste::thousands;
use crate::tui::state::{Popup, PopupKind, PopupRow, State};
use crate::tui::wrap::{truncate, width};

/// The widest the popup gets.
const MAX_WIDTH: u16 = 100;

/// Draws the open popup inside `pane` (the conversation's area), at its bottom.
pub fn draw(frame: &mut Frame<'_>, state: &State, pane: Rect) {
    let Some(popup) = &state.composer.popup else {
        return;
    };
    // Inside the conversation pane, at its bottom: stacked or beside, the side panes' borders
    // stay whole.
    let room = Rect::new(
        pane.x.saturating_add(1),
        pane.y.saturating_add(1),
        pane.width.saturating_sub(2),
        pane.height.saturating_sub(2),
    );
    let wanted = popup.rows.len().max(1) as u16 + 2;
    let height = wanted.min(room.height);
    if height < 3 {
        return;
    }
    let w = room.width.min(MAX_WIDTH);
    let rect = Rect::new(room.x, room.bottom() - height, w, height);
    let inner = usize::from(w.saturating_sub(2));
    let visible = usize::from(height - 2);
    let theme = &state.theme;
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border_focused)
        .title(Span::styled(title(state, popup), theme.accent))
        .title_bottom(Line::styled(keys(popup.kind), theme.muted).right_aligned());
    let lines: Vec<Line<'static>> = if popup.rows.is_empty() {
        vec![Line::styled(
            truncate(&empty(state, popup), inner),
            theme.muted,
        )]
    } else {
        // A short terminal shows a window of rows around the selection.
        let first = (popup.selected + 1).saturating_sub(visible);
        let shown = popup.rows.iter().enumerate().skip(first).take(visible);
        // Labels in one column, so the details line up.
        let column = shown
            .clone()
            .map(|(_, row)| width(&row.choice.label))
            .max()
            .unwrap_or(0)
            .min(inner / 2);
        shown
            .map(|(i, row)| row_line(state, row, i == popup.selected, inner, column))
            .collect()
    };
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// What the popup completes, and how many choices match.
fn title(state: &State, popup: &Popup) -> String {
    let shown = popup.rows.len();
    match popup.kind {
        PopupKind::Files if state.composer.files.listing => {
            format!(
                " Files · {} found so far… ",
                thousands(state.composer.files.paths.len())
            )
        }
        PopupKind::Files if popup.total > shown => {
            format!(" Files · {shown} of {} ", thousands(popup.total))
        }
        PopupKind::Files => format!(" Files · {shown} "),
        PopupKind::Commands => " Commands ".to_string(),
        PopupKind::Values(name) => format!(" /{name} "),
    }
}

/// The popup's keys, for its bottom border.
fn keys(kind: PopupKind) -> &'static str {
    match kind {
        PopupKind::Files => " ↑↓ choose · Tab or Enter inserts · Esc closes ",
        PopupKind::Commands | PopupKind::Values(_) => {
            " ↑↓ choose · Tab completes · Enter runs · Esc closes "
        }
    }
}

/// Why there is no row.
fn empty(state: &State, popup: &Popup) -> String {
    let query = &popup.query;
    match popup.kind {
        PopupKind::Files if state.composer.files.listing => "Listing the workspace…".to_string(),
        PopupKind::Files if state.composer.files.paths.is_empty() => {
            "No files in the workspace.".to_string()
        }
        PopupKind::Files => format!("No file matches \u{201c}{query}\u{201d}."),
        PopupKind::Commands => {
            format!("No command matches \u{201c}/{query}\u{201d}; Enter sends it as typed.")
        }
        PopupKind::Values(_) => "Nothing to offer here; Enter uses what is typed.".to_string(),
    }
}

/// One row: a marker, the label with its matched letters highlighted, then the detail (in
/// the column after `column`).
fn row_line(
    state: &State,
    row: &PopupRow,
    selected: bool,
    inner: usize,
    column: usize,
) -> Line<'static> {
    let theme = &state.theme;
    let marker = if selected { "› " } else { "  " };
    let has_detail = !row.choice.detail.is_empty();
    let label_room = if has_detail {
        column
    } else {
        inner.saturating_sub(2)
    };
    let mut spans = vec![Span::styled(marker, theme.accent)];
    spans.extend(highlighted(
        &row.choice.label,
        &row.matched,
        label_room,
        theme.text,
        theme.accent,
    ));
    let room = inner.saturating_sub(2 + column + 3);
    if has_detail && room > 3 {
        let pad = column.saturating_sub(width(&row.choice.label));
        spans.push(Span::raw(" ".repeat(pad + 3)));
        spans.push(Span::styled(
            truncate(&row.choice.detail, room),
            theme.muted,
        ));
    }
    if selected {
        for span in &mut spans {
            span.style = span.style.patch(theme.selection);
        }
    }
    Line::from(spans)
}

/// `text` cut to `room` columns, the characters at `matched` in `hit` style, the rest in
/// `base`.
fn highlighted(
    text: &str,
    matched: &[usize],
    room: usize,
    base: Style,
    hit: Style,
) -> Vec<Span<'static>> {
    let cut = width(text) > room;
    let limit = if cut { room.saturating_sub(1) } else { room };
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut run = String::new();
    let mut run_hit = false;
    let mut used = 0;
    for (i, c) in text.chars().enumerate() {
        let w = c.width().unwrap_or(0);
        if used + w > limit {
            break;
        }
        used += w;
        let is_hit = matched.binary_search(&i).is_ok();
        if is_hit != run_hit && !run.is_empty() {
            let style = if run_hit { hit } else { base };
            spans.push(Span::styled(std::mem::take(&mut run), style));
        }
        run_hit = is_hit;
        run.push(c);
    }
    if !run.is_empty() {
        spans.push(Span::styled(run, if run_hit { hit } else { base }));
    }
    if cut {
        spans.push(Span::styled("…", base));
    }
    spans
}
