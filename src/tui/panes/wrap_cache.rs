//! Plain text wrapped to a width and kept up to date as it grows: a frame re-wraps only the
//! open end (the row the text last ended in, and what arrived since), never the whole text.
//!
//! The result always equals [`wrap::wrap_text`] of the whole text (a property test below checks
//! it): wrapping is greedy and looks at nothing past the cell it places, so the rows closed
//! before the text's last grapheme (which appended text may merge into) stay as they are
//! whatever is appended. Wrapping resumes, from an empty row, at the start of the row open
//! then — or of the nearest row above it that wrapping afresh would make the same way.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use crate::tui::wrap;

/// A text's wrapped lines for one width and style, extended in place while the text grows and
/// rebuilt when the width or style changes or the text is replaced (not a continuation of the
/// text wrapped before).
#[derive(Clone, Debug, Default)]
pub struct GrowingWrap {
    /// Width and style of `lines`; `None` before the first update.
    key: Option<(usize, Style)>,
    /// The text `lines` show (a copy: comparing it tells growth from replacement exactly).
    text: String,
    /// The wrapped lines.
    lines: Vec<Line<'static>>,
    /// Lines at the start of `lines` that stay as they are while the text grows.
    stable: usize,
    /// Where in `text` wrapping resumes: the start of the first line after the stable ones.
    resume: usize,
}

impl GrowingWrap {
    /// Brings the lines up to `text` wrapped at `width` in `style` (what [`wrap::wrap_text`]
    /// returns), re-wrapping only from the open row when `text` continues the text seen before.
    pub fn update(&mut self, text: &str, style: Style, width: usize) {
        let grown = self.key == Some((width, style)) && text.starts_with(self.text.as_str());
        if grown && text.len() == self.text.len() {
            return;
        }
        if !grown {
            self.key = Some((width, style));
            self.text.clear();
            self.lines.clear();
            self.stable = 0;
            self.resume = 0;
        }
        self.lines.truncate(self.stable);
        let mut at = self.resume;
        let mut pieces = text[at..].split('\n').peekable();
        while let Some(piece) = pieces.next() {
            let rows = wrap_resumable(piece, style, width);
            if pieces.peek().is_some() {
                // A finished source line: nothing appended can change its rows.
                self.lines.extend(rows.lines);
                self.stable = self.lines.len();
                at += piece.len() + 1;
                self.resume = at;
            } else {
                self.stable = self.lines.len() + rows.closed;
                self.resume = at + rows.resume;
                self.lines.extend(rows.lines);
            }
        }
        self.text.push_str(&text[self.text.len()..]);
    }

    /// The wrapped lines of the last update.
    pub fn lines(&self) -> &[Line<'static>] {
        &self.lines
    }
}

/// One source line wrapped, and where wrapping resumes if text is appended to it.
struct Rows {
    /// The rows, as [`wrap::wrap_line`] makes them.
    lines: Vec<Line<'static>>,
    /// Rows closed before the line's last grapheme was placed: appending never changes them.
    closed: usize,
    /// Byte offset where the row that was open then begins (wrapping resumes there).
    resume: usize,
}

/// One grapheme placed in a row: its byte offset in the line, its text (a tab as four spaces)
/// and its width.
type Cell<'a> = (usize, &'a str, usize);

/// Wraps one line of plain text (no `\n`) in one style exactly as [`wrap::wrap_line`] does, also
/// telling which rows are final and where to resume.
fn wrap_resumable(line: &str, style: Style, max: usize) -> Rows {
    let max = max.max(1);
    // Rows of cells; all but the last are closed. A row is `clean` when wrapping started afresh
    // at its first cell makes it again: not so when the cell that broke the row above was
    // placed after that row's carried-over tail without a width check and the two together are
    // wider than `max` (a tab after a short word in a narrow pane).
    let mut rows: Vec<(bool, Vec<Cell<'_>>)> = vec![(true, Vec::new())];
    let mut used = 0usize;
    let (mut closed, mut resume) = (0, 0);
    for (at, g) in line.grapheme_indices(true) {
        // The state before each grapheme; after the loop, the one before the last grapheme,
        // which is the last that appended text cannot reach (it may merge into that grapheme).
        // Wrapping resumes at the start of the last clean row up to the one open then.
        closed = rows.len() - 1;
        while !rows[closed].0 {
            closed -= 1;
        }
        resume = rows[closed].1.first().map_or(at, |c| c.0);
        let g = if g == "\t" { "    " } else { g };
        let w = wrap::width(g);
        if w == 0 && g.chars().all(char::is_control) {
            continue;
        }
        if used + w > max && used > 0 {
            let current = rows
                .last_mut()
                .map(|r| std::mem::take(&mut r.1))
                .unwrap_or_default();
            // The same break rule as `wrap::wrap_line`.
            let split = current.iter().rposition(|c| c.1 == " ").filter(|&i| {
                let kept: usize = current[..i].iter().map(|c| c.2).sum();
                i > 0 && i + 1 < current.len() && g != " " && kept * 3 >= max
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
                last.1 = head;
            }
            used = tail.iter().map(|c| c.2).sum();
            rows.push((tail.is_empty() || used + w <= max, tail));
            if g == " " && used == 0 {
                continue;
            }
        }
        used += w;
        if let Some(last) = rows.last_mut() {
            last.1.push((at, g, w));
        }
    }
    let lines = rows
        .into_iter()
        .map(|(_, cells)| {
            let text: String = cells.iter().map(|c| c.1).collect();
            if text.is_empty() {
                Line::default()
            } else {
                Line::from(vec![Span::styled(text, style)])
            }
        })
        .collect();
    Rows {
        lines,
        closed,
        resume,
    }
}

/// A growing output, cleaned as it grows.
#[derive(Clone, Debug, Default)]
pub struct Cleaned {
    cleaner: crate::terminal_text::TerminalCleaner,
    /// The raw output cleaned so far.
    raw: String,
    text: String,
}

impl Cleaned {
    /// The clean text of `raw`: only what continues the output seen before is cleaned, and
    /// an output that does not continue it (another call's) starts afresh.
    pub fn update(&mut self, raw: &str) -> &str {
        if !raw.starts_with(self.raw.as_str()) {
            *self = Self::default();
        }
        let new = &raw[self.raw.len()..];
        self.cleaner.push_into(new, &mut self.text);
        self.raw.push_str(new);
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use ratatui::style::{Color, Modifier};

    fn grown_in_steps(cuts: &[usize], text: &str, style: Style, width: usize) -> GrowingWrap {
        let mut cache = GrowingWrap::default();
        for &cut in cuts {
            // Cut at a char boundary at or before `cut`.
            let mut cut = cut.min(text.len());
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            cache.update(&text[..cut], style, width);
            assert_eq!(
                cache.lines(),
                wrap::wrap_text(&text[..cut], style, width).as_slice(),
                "after growing to {cut} bytes at width {width}"
            );
        }
        cache.update(text, style, width);
        cache
    }

    #[test]
    fn growing_text_wraps_as_the_whole_text_does() {
        let style = Style::default().fg(Color::Gray);
        let text = "The user asks whether 2^31 - 1 is prime.\n\nIt is a Mersenne number, \
                    M31 = 2147483647, and\tEuler proved it prime in 1772. 你好世界🙂 done. ";
        for width in [1, 2, 3, 7, 20, 64] {
            let cuts: Vec<usize> = (0..=text.len()).collect();
            let cache = grown_in_steps(&cuts, text, style, width);
            assert_eq!(
                cache.lines(),
                wrap::wrap_text(text, style, width).as_slice()
            );
        }
    }

    #[test]
    fn only_the_open_row_is_wrapped_again() {
        let style = Style::default();
        let mut cache = GrowingWrap::default();
        let text = "word ".repeat(4000);
        cache.update(&text, style, 40);
        let before = cache.lines().len();
        // The stable part covers all but the open row, and resuming starts near the end.
        assert!(cache.stable + 1 >= before, "{} of {before}", cache.stable);
        assert!(
            cache.resume + 40 >= text.len(),
            "resumes at {}",
            cache.resume
        );
        cache.update(&(text.clone() + "more"), style, 40);
        assert_eq!(
            cache.lines(),
            wrap::wrap_text(&(text + "more"), style, 40).as_slice()
        );
    }

    #[test]
    fn width_style_and_replaced_text_start_over() {
        let style = Style::default();
        let mut cache = GrowingWrap::default();
        cache.update("alpha beta gamma delta", style, 10);
        cache.update("alpha beta gamma delta", style, 6);
        assert_eq!(
            cache.lines(),
            wrap::wrap_text("alpha beta gamma delta", style, 6).as_slice()
        );
        let bold = style.add_modifier(Modifier::BOLD);
        cache.update("alpha beta gamma delta", bold, 6);
        assert_eq!(
            cache.lines(),
            wrap::wrap_text("alpha beta gamma delta", bold, 6).as_slice()
        );
        // Longer but not a continuation: replaced, wrapped afresh.
        cache.update("omega psi chi phi upsilon tau", bold, 6);
        assert_eq!(
            cache.lines(),
            wrap::wrap_text("omega psi chi phi upsilon tau", bold, 6).as_slice()
        );
        // Shorter: replaced too; the empty text is one empty line, as `wrap_text` gives.
        cache.update("", bold, 6);
        assert_eq!(cache.lines(), [Line::default()]);
    }

    #[test]
    fn a_row_wider_than_the_pane_after_a_break_is_not_a_resume_point() {
        // At width 3, "  x" breaks at the tab after its spaces; "x" is carried to the next
        // row and the tab (4 columns) placed after it unchecked. Started afresh at "x", the
        // tab would break the row: wrapping must resume further up.
        let text = "ab\n  x\t你y";
        let cuts: Vec<usize> = (0..=text.len()).collect();
        let cache = grown_in_steps(&cuts, text, Style::default(), 3);
        assert_eq!(
            cache.lines(),
            wrap::wrap_text(text, Style::default(), 3).as_slice()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Any text grown in any pieces wraps as the whole text does, at any width: spaces,
        /// tabs, newlines, wide characters, combining marks, emoji sequences, flags, controls.
        #[test]
        fn growing_in_any_pieces_equals_wrapping_the_whole(
            parts in prop::collection::vec(
                prop::sample::select(vec![
                    "a", "bc", "word", " ", "  ", "\t", "\n", "\n\n", "\r", "你", "好世",
                    "🙂", "\u{200d}", "👩", "\u{301}", "e\u{301}", "\u{fe0f}", "🇩", "🇪",
                    "x\u{7}", "longerwordthatneedsbreaking", ". ",
                ]),
                0..60,
            ),
            cuts in prop::collection::vec(0usize..400, 0..12),
            width in 1usize..24,
        ) {
            let text: String = parts.concat();
            let mut cuts = cuts;
            cuts.sort_unstable();
            let cache = grown_in_steps(&cuts, &text, Style::default(), width);
            let whole = wrap::wrap_text(&text, Style::default(), width);
            prop_assert_eq!(cache.lines(), whole.as_slice());
        }
    }
}
