//! Tables fitted to the pane: natural column widths when the table fits, otherwise the widest
//! columns shrink first and their cells wrap inside them. The table is drawn here, whole, so
//! nothing downstream ever breaks it apart.

use pulldown_cmark::Alignment;
use ratatui::style::Modifier;
use ratatui::text::Span;

use super::linebreak::{self, Row, row_width};
use crate::tui::theme::Theme;

/// A table as parsed: cells of styled runs, the first `head` rows being the header.
#[derive(Debug, Default)]
pub(crate) struct Table {
    /// Each column's alignment.
    pub(crate) aligns: Vec<Alignment>,
    /// Rows of cells.
    pub(crate) rows: Vec<Vec<Row>>,
    /// How many rows form the header.
    pub(crate) head: usize,
}

/// Column widths for content `natural` widths in `avail` columns: columns narrower than an
/// even share keep their width, the rest share what is left (never less than one column).
fn fit(natural: &[usize], avail: usize) -> Vec<usize> {
    if natural.iter().sum::<usize>() <= avail {
        return natural.to_vec();
    }
    let mut widths = vec![0; natural.len()];
    let mut left: Vec<usize> = (0..natural.len()).collect();
    let mut rem = avail;
    while !left.is_empty() {
        let share = rem / left.len();
        let (small, big): (Vec<usize>, Vec<usize>) =
            left.iter().partition(|&&c| natural[c] <= share);
        if small.is_empty() {
            for (i, &c) in big.iter().enumerate() {
                widths[c] = (share + usize::from(i < rem % big.len())).max(1);
            }
            break;
        }
        for &c in &small {
            widths[c] = natural[c];
            rem -= natural[c];
        }
        left = big;
    }
    widths
}

/// A border row: `left`, each column's run of `─` joined by `mid`, then `right`.
fn border(widths: &[usize], [left, mid, right]: [&str; 3], theme: &Theme) -> Row {
    let runs: Vec<String> = widths.iter().map(|w| "─".repeat(w + 2)).collect();
    vec![Span::styled(
        format!("{left}{}{right}", runs.join(mid)),
        theme.border,
    )]
}

/// `cell` padded to `width` by its column's alignment.
fn pad(mut cell: Row, width: usize, align: Alignment) -> Row {
    let room = width.saturating_sub(row_width(&cell));
    let (before, after) = match align {
        Alignment::Right => (room, 0),
        Alignment::Center => (room / 2, room - room / 2),
        Alignment::Left | Alignment::None => (0, room),
    };
    if before > 0 {
        cell.insert(0, Span::raw(" ".repeat(before)));
    }
    if after > 0 {
        cell.push(Span::raw(" ".repeat(after)));
    }
    cell
}

/// The table drawn in at most `width` columns (if even one column per cell does not fit, the
/// rows are cut at the edge with `…`).
pub(crate) fn render(table: &Table, width: usize, theme: &Theme) -> Vec<Row> {
    let cols = table
        .rows
        .iter()
        .map(Vec::len)
        .chain([table.aligns.len()])
        .max()
        .unwrap_or(0);
    if cols == 0 {
        return Vec::new();
    }
    let mut natural = vec![1; cols];
    for row in &table.rows {
        for (c, cell) in row.iter().enumerate() {
            natural[c] = natural[c].max(row_width(cell));
        }
    }
    let frame = 3 * cols + 1;
    let avail = width.saturating_sub(frame).max(cols);
    let widths = fit(&natural, avail);
    let mut out = vec![border(&widths, ["┌", "┬", "┐"], theme)];
    for (r, row) in table.rows.iter().enumerate() {
        let header = r < table.head;
        let wrapped: Vec<Vec<Row>> = (0..cols)
            .map(|c| {
                let cell = row.get(c).cloned().unwrap_or_default();
                let cell: Row = if header {
                    cell.into_iter()
                        .map(|s| {
                            let style = s.style.add_modifier(Modifier::BOLD);
                            s.style(style)
                        })
                        .collect()
                } else {
                    cell
                };
                linebreak::wrap(&cell, widths[c])
            })
            .collect();
        let height = wrapped.iter().map(Vec::len).max().unwrap_or(1);
        for k in 0..height {
            let mut line: Row = vec![Span::styled("│ ", theme.border)];
            for c in 0..cols {
                let piece = wrapped[c].get(k).cloned().unwrap_or_default();
                let align = table.aligns.get(c).copied().unwrap_or(Alignment::None);
                line.extend(pad(piece, widths[c], align));
                let sep = if c + 1 == cols { " │" } else { " │ " };
                line.push(Span::styled(sep, theme.border));
            }
            out.push(line);
        }
        if header && r + 1 == table.head {
            out.push(border(&widths, ["├", "┼", "┤"], theme));
        }
    }
    out.push(border(&widths, ["└", "┴", "┘"], theme));
    if frame + cols > width {
        out = out.iter().map(|r| linebreak::cut(r, width)).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_columns_keep_their_width_and_wide_ones_share_the_rest() {
        assert_eq!(fit(&[3, 5], 20), [3, 5]);
        assert_eq!(fit(&[3, 40, 30], 23), [3, 10, 10]);
        assert_eq!(fit(&[50, 50], 9), [5, 4]);
        assert_eq!(fit(&[5, 5, 5], 2), [1, 1, 1]);
    }
}
