//! The picker: a filter line, the rows it keeps (the selected one highlighted), and what the
//! keys do; or the question before a session is deleted.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use super::dialog::centered;
use crate::tui::state::{Picker, PickerKind, State};
use crate::tui::wrap::{truncate, width};

/// The most rows shown at once.
const ROWS: usize = 12;

/// Draws the open picker centred in `area`.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let Some(picker) = state.overlay.picker() else {
        return;
    };
    let theme = &state.theme;
    // As tall as the rows need (a blank line before the keys), at most `ROWS` rows.
    let shown = picker.visible().len().clamp(1, ROWS) as u16;
    let rect = centered(area, area.width.saturating_sub(8).max(40), shown + 5);
    let inner = usize::from(rect.width.saturating_sub(2));
    let title = match picker.kind {
        PickerKind::Sessions => " Resume a session ",
        PickerKind::Models => " Choose a model ",
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Rounded)
        .border_style(theme.border_focused)
        .title(Span::styled(title, theme.accent));
    let mut lines = vec![Line::from(vec![
        Span::styled("Filter: ", theme.muted),
        Span::styled(format!("{}▏", picker.filter), theme.text),
    ])];
    lines.extend(rows(state, picker, inner));
    let rows_height = usize::from(rect.height.saturating_sub(2)).saturating_sub(2);
    lines.resize(rows_height + 1, Line::raw(""));
    lines.push(footer(state, picker, inner));
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// The visible rows around the selection, or why there are none.
fn rows(state: &State, picker: &Picker, inner: usize) -> Vec<Line<'static>> {
    let theme = &state.theme;
    if picker.loading {
        return vec![Line::styled("Reading the sessions…", theme.muted)];
    }
    let visible = picker.visible();
    if visible.is_empty() {
        let why = match (picker.kind, picker.items.is_empty()) {
            (PickerKind::Sessions, true) => {
                "No earlier sessions in this workspace: /new archives the current one.".to_string()
            }
            (PickerKind::Models, _) => format!(
                "No model matches; Enter uses \u{201c}{}\u{201d} as the model name.",
                picker.filter.trim()
            ),
            _ => "Nothing matches the filter.".to_string(),
        };
        return vec![Line::styled(why, theme.muted)];
    }
    let first = picker.selected.saturating_sub(ROWS - 1);
    // Labels in one column, as wide as the widest shown (within reason).
    let column = visible
        .iter()
        .skip(first)
        .take(ROWS)
        .map(|&i| width(&picker.items[i].label))
        .max()
        .unwrap_or(0)
        .min(inner.saturating_sub(4) / 2)
        .min(48);
    visible
        .iter()
        .enumerate()
        .skip(first)
        .take(ROWS)
        .map(|(row, &i)| {
            let item = &picker.items[i];
            let selected = row == picker.selected;
            let marker = if selected { "› " } else { "  " };
            let label = truncate(&item.label, column);
            let pad = " ".repeat(column.saturating_sub(width(&label)));
            let (detail, detail_style) = match &item.problem {
                Some(problem) => (format!("⚠ {problem}"), theme.error),
                None => (item.detail.clone(), theme.muted),
            };
            let room = inner.saturating_sub(width(marker) + column + 3);
            let mut spans = vec![
                Span::styled(marker, theme.accent),
                Span::styled(label, if selected { theme.accent } else { theme.text }),
                Span::raw(pad + "   "),
                Span::styled(truncate(&detail, room), detail_style),
            ];
            if selected {
                for span in &mut spans {
                    span.style = span.style.patch(theme.selection);
                }
            }
            Line::from(spans)
        })
        .collect()
}

/// The keys, or the delete question.
fn footer(state: &State, picker: &Picker, inner: usize) -> Line<'static> {
    let theme = &state.theme;
    if picker.confirm_delete {
        let title = picker.chosen().map(|i| i.label.clone()).unwrap_or_default();
        let text = format!(
            "Delete \u{201c}{title}\u{201d} for good? y deletes it · any other key keeps it"
        );
        return Line::styled(truncate(&text, inner), theme.warning);
    }
    let keys = match picker.kind {
        PickerKind::Sessions => "↑↓ choose · Enter reopens · Ctrl+D deletes · Esc closes",
        PickerKind::Models => "↑↓ choose · Enter uses it (or the typed name) · Esc closes",
    };
    Line::styled(truncate(keys, inner), theme.muted)
}
