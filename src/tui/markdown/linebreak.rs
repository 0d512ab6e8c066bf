//! Fitting styled text into a width. Where a line may break comes from the Unicode
//! line-breaking algorithm (UAX #14, via unicode-linebreak): between words in Latin text, between
//! characters in CJK text, never before closing punctuation such as `，`. Widths come from
//! unicode-width, so wide characters count two columns.

use ratatui::style::Style;
use ratatui::text::Span;
use unicode_linebreak::{BreakOpportunity, linebreaks};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// Styled runs of one output line.
pub(crate) type Row = Vec<Span<'static>>;

/// The display width of styled runs.
pub(crate) fn row_width(row: &[Span<'_>]) -> usize {
    row.iter().map(|s| s.content.width()).sum()
}

/// One grapheme of the text being wrapped.
struct Cell {
    /// Byte range in the joined text.
    start: usize,
    end: usize,
    style: Style,
    width: usize,
    /// A plain space: it may hang past the edge and is dropped at a break.
    space: bool,
    /// A line may start here.
    breakable: bool,
}

/// The graphemes of `runs` with their styles and widths, and the text they were cut from.
fn cells(runs: &[Span<'_>]) -> (String, Vec<Cell>) {
    let mut text = String::new();
    let mut styles: Vec<(usize, Style)> = Vec::new();
    for run in runs {
        for c in run.content.chars() {
            // A tab would be drawn at the terminal's whim; other controls not at all.
            match c {
                '\t' => text.push_str("    "),
                '\n' | '\r' => text.push(' '),
                c if c.is_control() => {}
                c => text.push(c),
            }
        }
        styles.push((text.len(), run.style));
    }
    let mut cells = Vec::new();
    let mut run = 0;
    for (start, g) in text.grapheme_indices(true) {
        while styles.get(run).is_some_and(|(end, _)| *end <= start) {
            run += 1;
        }
        let style = styles.get(run).map(|s| s.1).unwrap_or_default();
        cells.push(Cell {
            start,
            end: start + g.len(),
            style,
            width: g.width(),
            space: g == " ",
            breakable: false,
        });
    }
    // Mark each allowed break at the grapheme it falls on (the end of the text is not a break).
    let mut i = 0;
    for (at, kind) in linebreaks(&text) {
        if at >= text.len() {
            break;
        }
        while i < cells.len() && cells[i].start < at {
            i += 1;
        }
        if i < cells.len() && cells[i].start == at && kind == BreakOpportunity::Allowed {
            cells[i].breakable = true;
        }
    }
    (text, cells)
}

/// Wraps styled runs into rows at most `width` columns wide: breaks where UAX #14 allows, a
/// word longer than the row is cut, spaces at a break are dropped. Empty input gives one empty
/// row.
pub(crate) fn wrap(runs: &[Span<'_>], width: usize) -> Vec<Row> {
    let width = width.max(1);
    let (text, cells) = cells(runs);
    let mut rows = Vec::new();
    let mut start = 0;
    let mut col = 0;
    let mut last_break: Option<usize> = None;
    let mut i = 0;
    while i < cells.len() {
        let cell = &cells[i];
        if i > start && cell.breakable {
            last_break = Some(i);
        }
        if !cell.space && col + cell.width > width && i > start {
            let cut = last_break.filter(|&b| b > start).unwrap_or(i);
            rows.push(row(&text, &cells[start..cut]));
            start = cut;
            while start < i && cells[start].space {
                start += 1;
            }
            // The cells carried over start the new row; a break among them still counts.
            col = cells[start..i].iter().map(|c| c.width).sum();
            last_break = (start + 1..i).rev().find(|&j| cells[j].breakable);
            continue;
        }
        col += cell.width;
        i += 1;
    }
    rows.push(row(&text, &cells[start..]));
    rows
}

/// The styled runs of `cells`, trailing spaces dropped.
fn row(text: &str, cells: &[Cell]) -> Row {
    let end = cells.iter().rposition(|c| !c.space).map_or(0, |i| i + 1);
    let mut out: Row = Vec::new();
    let mut from = 0;
    for i in 1..=end {
        if i == end || cells[i].style != cells[from].style {
            let s = &text[cells[from].start..cells[i - 1].end];
            out.push(Span::styled(s.to_string(), cells[from].style));
            from = i;
        }
    }
    out
}

/// Cuts a row to at most `width` columns, ending in `…` when something was cut.
pub(crate) fn cut(row: &[Span<'static>], width: usize) -> Row {
    if row_width(row) <= width {
        return row.to_vec();
    }
    let mut out: Row = Vec::new();
    let mut used = 0;
    let mut last_style = Style::default();
    'spans: for span in row {
        let mut kept = String::new();
        for g in span.content.graphemes(true) {
            let w = g.width();
            if used + w + 1 > width {
                if !kept.is_empty() {
                    out.push(Span::styled(kept, span.style));
                }
                last_style = span.style;
                break 'spans;
            }
            used += w;
            kept.push_str(g);
        }
        out.push(Span::styled(kept, span.style));
    }
    if width > 0 {
        out.push(Span::styled("…", last_style));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    fn plain(s: &str, width: usize) -> Vec<String> {
        texts(&wrap(&[Span::raw(s.to_string())], width))
    }

    #[test]
    fn latin_breaks_between_words_and_cuts_long_words() {
        assert_eq!(plain("hello world foo", 11), ["hello world", "foo"]);
        assert_eq!(plain("hello world foo", 8), ["hello", "world", "foo"]);
        assert_eq!(plain("abcdefgh", 3), ["abc", "def", "gh"]);
        assert_eq!(plain("", 5), [""]);
        assert_eq!(plain("a  b", 1), ["a", "b"]);
    }

    #[test]
    fn cjk_fills_each_line_and_breaks_between_characters() {
        let text = "这是一个很长的中文句子，其中包含English words和数字123";
        let rows = plain(text, 20);
        for r in &rows {
            assert!(r.width() <= 20, "{r:?}");
        }
        assert_eq!(rows.concat().replace(' ', ""), text.replace(' ', ""));
        // Full lines: each line but the last is within one wide character of the width.
        for r in &rows[..rows.len() - 1] {
            assert!(r.width() >= 19, "a short line {r:?} in {rows:?}");
        }
        // Closing punctuation never starts a line.
        assert!(rows.iter().all(|r| !r.starts_with('，')), "{rows:?}");
    }

    #[test]
    fn styles_survive_wrapping() {
        let bold = Style::new().add_modifier(ratatui::style::Modifier::BOLD);
        let rows = wrap(&[Span::raw("aa "), Span::styled("bb cc", bold)], 5);
        assert_eq!(texts(&rows), ["aa bb", "cc"]);
        assert_eq!(rows[0][1].style, bold);
        assert_eq!(rows[1][0].style, bold);
    }

    #[test]
    fn cut_ends_in_an_ellipsis() {
        let row = vec![Span::raw("你好世界")];
        assert_eq!(texts(&[cut(&row, 5)]), ["你好…"]);
        assert_eq!(texts(&[cut(&row, 8)]), ["你好世界"]);
    }
}
