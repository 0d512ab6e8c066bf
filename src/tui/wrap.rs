//! Wrapping styled lines to a width by display columns (CJK and emoji count two), preferring
//! to break after a space.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

/// The display width of `s` in terminal columns.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Wraps one line into lines at most `max` columns wide (an empty line stays one empty line).
pub fn wrap_line(line: &Line<'_>, max: usize) -> Vec<Line<'static>> {
    wrap_widths(line, max, max)
}

/// Wraps one line as [`wrap_line`] does, its continuation lines indented under its text: past
/// its leading spaces, a bullet (`•`, `-`, `1.`) and a label column (`Model       `), so a
/// list item or a field reads as one. No indent when it would leave too little room.
pub fn wrap_hanging(line: &Line<'_>, max: usize) -> Vec<Line<'static>> {
    let max = max.max(1);
    let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
    let indent = hanging_indent(&text);
    if indent == 0 || indent * 2 > max {
        return wrap_line(line, max);
    }
    let mut lines = wrap_widths(line, max, max - indent);
    for l in lines.iter_mut().skip(1) {
        l.spans.insert(0, Span::raw(" ".repeat(indent)));
    }
    lines
}

/// The columns a continuation of `text` is indented by: its leading spaces, then a bullet and
/// the spaces after it, then a label followed by two spaces or more (a field's name).
pub fn hanging_indent(text: &str) -> usize {
    let rest = text.trim_start_matches(' ');
    let mut indent = text.len() - rest.len();
    let mut rest = rest;
    let spaces_after = |s: &str| s.len() - s.trim_start_matches(' ').len();
    // A bullet: one mark, or a number with `.` or `)`, then a space.
    let token = rest.split(' ').next().unwrap_or_default();
    let bullet = matches!(token, "•" | "-" | "*" | "·" | "◦" | "▸" | "↳")
        || (token.len() > 1
            && token.len() <= 4
            && token.ends_with(['.', ')'])
            && token[..token.len() - 1].chars().all(|c| c.is_ascii_digit()));
    if bullet && spaces_after(&rest[token.len()..]) > 0 {
        let after = spaces_after(&rest[token.len()..]);
        indent += width(token) + after;
        rest = &rest[token.len() + after..];
    }
    // A label column: a word and two spaces or more before the text.
    let token = rest.split(' ').next().unwrap_or_default();
    if !token.is_empty() && token.len() < rest.len() && spaces_after(&rest[token.len()..]) >= 2 {
        let after = spaces_after(&rest[token.len()..]);
        if token.len() + after < rest.len() {
            indent += width(token) + after;
        }
    }
    indent
}

/// Wraps `line` to `first` columns for its first line and `rest` for the others.
fn wrap_widths(line: &Line<'_>, first: usize, rest: usize) -> Vec<Line<'static>> {
    let (first, rest) = (first.max(1), rest.max(1));
    // Each grapheme with its style and width.
    let mut cells: Vec<(String, Style, usize)> = Vec::new();
    for span in &line.spans {
        let style = line.style.patch(span.style);
        for g in span.content.graphemes(true) {
            let g = if g == "\t" { "    " } else { g };
            let w = width(g);
            if w == 0 && g.chars().all(char::is_control) {
                continue;
            }
            cells.push((g.to_string(), style, w));
        }
    }
    let mut rows: Vec<Vec<(String, Style, usize)>> = vec![Vec::new()];
    let mut used = 0usize;
    for cell in cells {
        let w = cell.2;
        let max = if rows.len() == 1 { first } else { rest };
        if used + w > max && used > 0 {
            let current = rows.last_mut().map(std::mem::take).unwrap_or_default();
            // Break after the last space when that keeps a reasonable part on the line.
            let split = current.iter().rposition(|(g, _, _)| g == " ").filter(|&i| {
                let kept: usize = current[..i].iter().map(|c| c.2).sum();
                // A break that would leave most of the line empty (e.g. CJK text after one
                // short word) is worse than breaking mid-run.
                i > 0 && i + 1 < current.len() && cell.0 != " " && kept * 3 >= max
            });
            let (head, tail) = match split {
                Some(i) => {
                    let mut head = current;
                    let tail = head.split_off(i + 1);
                    (head, tail)
                }
                None => (current, Vec::new()),
            };
            if let Some(last) = rows.last_mut() {
                *last = head;
            }
            used = tail.iter().map(|c| c.2).sum();
            rows.push(tail);
            if cell.0 == " " && used == 0 {
                // A space at a break is dropped rather than indenting the next line.
                continue;
            }
        }
        used += w;
        if let Some(last) = rows.last_mut() {
            last.push(cell);
        }
    }
    rows.into_iter().map(|cells| to_line(cells, line)).collect()
}

fn to_line(cells: Vec<(String, Style, usize)>, source: &Line<'_>) -> Line<'static> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    let mut text = String::new();
    let mut style: Option<Style> = None;
    for (g, s, _) in cells {
        if style.is_some_and(|cur| cur != s) {
            spans.push(Span::styled(
                std::mem::take(&mut text),
                style.unwrap_or_default(),
            ));
        }
        style = Some(s);
        text.push_str(&g);
    }
    if !text.is_empty() {
        spans.push(Span::styled(text, style.unwrap_or_default()));
    }
    let mut out = Line::from(spans);
    out.alignment = source.alignment;
    out
}

/// Wraps every line.
pub fn wrap_lines<'a>(
    lines: impl IntoIterator<Item = &'a Line<'a>>,
    max: usize,
) -> Vec<Line<'static>> {
    lines.into_iter().flat_map(|l| wrap_line(l, max)).collect()
}

/// Splits plain text on newlines into styled lines and wraps them.
pub fn wrap_text(text: &str, style: Style, max: usize) -> Vec<Line<'static>> {
    text.split('\n')
        .flat_map(|l| wrap_line(&Line::styled(l.to_string(), style), max))
        .collect()
}

/// Cuts `s` to at most `max` columns, ending in `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for g in s.graphemes(true) {
        let w = width(g);
        if used + w + 1 > max {
            break;
        }
        used += w;
        out.push_str(g);
    }
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_at_spaces_and_hard_breaks_long_words() {
        let l = Line::from("hello world foo");
        assert_eq!(texts(&wrap_line(&l, 11)), vec!["hello world", "foo"]);
        assert_eq!(texts(&wrap_line(&l, 8)), vec!["hello ", "world ", "foo"]);
        assert_eq!(
            texts(&wrap_line(&Line::from("abcdefgh"), 3)),
            vec!["abc", "def", "gh"]
        );
        assert_eq!(texts(&wrap_line(&Line::from(""), 5)), vec![""]);
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let lines = wrap_line(&Line::from("你好世界🙂"), 4);
        assert_eq!(texts(&lines), vec!["你好", "世界", "🙂"]);
        for l in &lines {
            assert!(l.width() <= 4);
        }
        assert_eq!(truncate("你好世界", 5), "你好…");
    }

    #[test]
    fn a_hanging_indent_puts_continuations_under_the_text() {
        assert_eq!(hanging_indent("  • read the files"), 4);
        assert_eq!(hanging_indent("• Status:"), 2);
        assert_eq!(hanging_indent("    1. cargo test — here"), 7);
        assert_eq!(hanging_indent("  Model       deepseek (x)"), 14);
        assert_eq!(hanging_indent("    1  running · 5 s"), 7);
        assert_eq!(hanging_indent("plain words here"), 0);
        let l = Line::from("  • read, list and search the files");
        assert_eq!(
            texts(&wrap_hanging(&l, 16)),
            vec!["  • read, list ", "    and search ", "    the files"]
        );
        for l in wrap_hanging(&Line::from("  Model       a b c d e f g h i j k"), 20) {
            assert!(l.width() <= 20, "{l}");
        }
    }
}
