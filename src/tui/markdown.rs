//! Streaming-safe markdown: committed text (up to the last newline) is rendered with
//! tui-markdown and cached; the open tail of a half-arrived line is shown plainly, so a partial
//! line never scrambles a table or code block.

use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use tui_markdown::{BuiltinCodeTheme, Options, StyleSheet};

use super::theme::Theme;

/// Renders a whole markdown text into owned lines (colours stripped for a monochrome theme).
pub fn render(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    let code = if theme.light {
        BuiltinCodeTheme::InspiredGitHub
    } else {
        BuiltinCodeTheme::Base16OceanDark
    };
    let options = Options::new(ThemeSheet::of(theme)).code_theme(code);
    let rendered = tui_markdown::from_str_with_options(text, &options);
    rendered
        .lines
        .into_iter()
        .map(|line| {
            let line_style = clean(line.style, theme);
            let spans: Vec<Span<'static>> = line
                .spans
                .into_iter()
                .map(|s| {
                    Span::styled(
                        s.content.into_owned(),
                        clean(line_style.patch(s.style), theme),
                    )
                })
                .collect();
            let mut out = Line::from(spans);
            out.alignment = line.alignment;
            out
        })
        .collect()
}

/// Markdown styles drawn from the theme, so headings, code and links follow it (light or dark)
/// instead of fixed ANSI colours.
#[derive(Clone, Debug)]
struct ThemeSheet {
    accent: Style,
    code: Style,
    muted: Style,
}

impl ThemeSheet {
    fn of(theme: &Theme) -> Self {
        Self {
            accent: theme.accent,
            code: theme.selection,
            muted: theme.muted,
        }
    }
}

impl StyleSheet for ThemeSheet {
    /// No `##` marks: the style says it is a heading.
    fn heading_marker(&self, _level: u8) -> &str {
        ""
    }
    fn heading(&self, level: u8) -> Style {
        match level {
            1 => self
                .accent
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            2 => self.accent.add_modifier(Modifier::BOLD),
            _ => Style::new().add_modifier(Modifier::BOLD),
        }
    }
    fn code(&self) -> Style {
        self.code
    }
    fn link(&self) -> Style {
        self.accent.add_modifier(Modifier::UNDERLINED)
    }
    fn blockquote(&self) -> Style {
        self.muted
    }
    fn heading_meta(&self) -> Style {
        self.muted
    }
    fn metadata_block(&self) -> Style {
        self.muted
    }
    fn html(&self) -> Style {
        self.muted
    }
    fn math_inline(&self) -> Style {
        self.accent
    }
    fn math_display(&self) -> Style {
        self.accent
    }
    fn footnote_ref(&self) -> Style {
        self.muted
    }
    fn footnote_def(&self) -> Style {
        self.muted
    }
}

/// Without colour (NO_COLOR), emphasis may only come from bold, reverse and underline: colours
/// go, italic becomes underline, and code keeps its reverse from the theme's selection style.
fn clean(style: Style, theme: &Theme) -> Style {
    if !theme.monochrome {
        return style;
    }
    let mut out = Style {
        fg: None,
        bg: None,
        underline_color: None,
        ..style
    };
    if out.add_modifier.contains(Modifier::ITALIC) {
        out = out
            .remove_modifier(Modifier::ITALIC)
            .add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// The rendering of a growing markdown text, re-parsed only when a newline commits more of it.
///
/// Two ways to read it: [`StreamingMarkdown::lines`] renders the whole committed text (exact,
/// costs the whole text); [`StreamingMarkdown::update`] keeps finished blocks rendered once
/// ("frozen") and re-renders only the open block, so a delta costs the same at any length.
#[derive(Clone, Debug, Default)]
pub struct StreamingMarkdown {
    committed_src: String,
    committed: Vec<Line<'static>>,
    /// Bytes of the text covered by `frozen`.
    frozen_len: usize,
    /// The last bytes before `frozen_len`, to notice a replaced text without comparing it all.
    frozen_tail: String,
    /// Rendered lines of the frozen blocks (with the blank line between blocks).
    frozen: Vec<Line<'static>>,
    /// How far the committed text was scanned for block boundaries.
    scanned: usize,
    /// The fence (character, length) of an open code block.
    fence: Option<(char, usize)>,
    /// Whether the last scanned line was blank.
    prev_blank: bool,
    /// Whether a link definition was seen: later text stays in the open block with it.
    defines: bool,
    /// The rendering of the open block and tail.
    open: Vec<Line<'static>>,
    /// The text `open` shows (start, committed end, end, done).
    open_key: (usize, usize, usize, bool),
}

/// How many bytes before the frozen end are compared to notice a replaced text.
const CHECK_BYTES: usize = 64;

/// Where a code fence opens or closes: the fence character and its length.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    (n >= 3).then_some((c, n))
}

/// Whether a block starting with `line` after a blank line renders the same on its own: not a
/// continuation (indented), not another item of the same list, not a link definition or HTML.
fn starts_own_block(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    if first.is_whitespace() || matches!(first, '[' | '<') {
        return false;
    }
    let bullet = ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b));
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let ordered = digits > 0 && matches!(line[digits..].chars().next(), Some('.' | ')'));
    !bullet && !ordered
}

/// Whether `line` is a link reference or footnote definition (`[name]: ...`).
fn is_definition(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    line.len() - t.len() <= 3 && t.starts_with('[') && t.contains("]:")
}

fn same_start(text: &str, at: usize, check: &str) -> bool {
    at <= text.len()
        && text.is_char_boundary(at)
        && at >= check.len()
        && text.is_char_boundary(at - check.len())
        && &text[at - check.len()..at] == check
}

impl StreamingMarkdown {
    /// The lines for `text`: when `done`, exactly the rendering of the whole text; otherwise the
    /// committed part rendered and the open tail as one plain line.
    pub fn lines(&mut self, text: &str, done: bool, theme: &Theme) -> Vec<Line<'static>> {
        let cut = if done {
            text.len()
        } else {
            text.rfind('\n').map_or(0, |i| i + 1)
        };
        // Comparing the source (not just its length) notices a replaced text too.
        if text[..cut] != self.committed_src {
            self.committed_src = text[..cut].to_string();
            self.committed = if cut == 0 {
                Vec::new()
            } else {
                render(&self.committed_src, theme)
            };
        }
        let mut out = self.committed.clone();
        let tail = &text[cut..];
        if !tail.is_empty() {
            out.push(Line::styled(tail.to_string(), theme.text));
        }
        out
    }

    /// Brings the incremental rendering up to `text` (which usually only grew). Returns `false`
    /// when the text was replaced and everything was rendered afresh.
    pub fn update(&mut self, text: &str, done: bool, theme: &Theme) -> bool {
        let kept = same_start(text, self.frozen_len, &self.frozen_tail);
        // A link definition applies to the whole text, also to blocks frozen before it arrived:
        // the finished answer is then rendered whole, once.
        let defines = done && !self.frozen.is_empty() && text.lines().any(is_definition);
        if !kept || defines {
            *self = Self::default();
        }
        if defines {
            self.scanned = text.len();
        }
        let committed = text.rfind('\n').map_or(0, |i| i + 1);
        if self.scanned > committed {
            self.scanned = self.frozen_len;
            self.fence = None;
            self.prev_blank = false;
            self.defines = false;
        }
        // Find block boundaries in the newly committed lines; freeze each finished block.
        while self.scanned < committed {
            let start = self.scanned;
            let end = text[start..committed]
                .find('\n')
                .map_or(committed, |i| start + i + 1);
            let line = &text[start..end];
            self.scanned = end;
            if let Some((c, n)) = self.fence {
                if fence_of(line).is_some_and(|(fc, fnn)| {
                    fc == c && fnn >= n && line.trim().chars().all(|x| x == c)
                }) {
                    self.fence = None;
                }
                self.prev_blank = false;
                continue;
            }
            let blank = line.trim().is_empty();
            self.defines |= is_definition(line);
            if !blank
                && self.prev_blank
                && !self.defines
                && start > self.frozen_len
                && starts_own_block(line)
            {
                self.freeze(text, start, theme);
            }
            self.fence = fence_of(line);
            self.prev_blank = blank;
        }
        let end = if done { text.len() } else { committed };
        let key = (self.frozen_len, end, text.len(), done);
        if key != self.open_key {
            let block = &text[self.frozen_len..end];
            self.open = if block.is_empty() {
                Vec::new()
            } else {
                render(block, theme)
            };
            if !self.frozen.is_empty() && !self.open.is_empty() {
                self.open.insert(0, Line::default());
            }
            let tail = &text[end..];
            if !tail.is_empty() {
                self.open.push(Line::styled(tail.to_string(), theme.text));
            }
            self.open_key = key;
        }
        kept
    }

    fn freeze(&mut self, text: &str, at: usize, theme: &Theme) {
        let block = render(&text[self.frozen_len..at], theme);
        if !block.is_empty() {
            if !self.frozen.is_empty() {
                self.frozen.push(Line::default());
            }
            self.frozen.extend(block);
        }
        self.frozen_len = at;
        let mut from = at.saturating_sub(CHECK_BYTES);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        self.frozen_tail = text[from..at].to_string();
        // The open rendering started at the old frozen end.
        self.open_key = (usize::MAX, 0, 0, false);
    }

    /// Rendered lines of the finished blocks (they never change while the text only grows).
    pub fn frozen(&self) -> &[Line<'static>] {
        &self.frozen
    }

    /// Rendered lines of the open block and the plain tail (re-rendered as they grow).
    pub fn open(&self) -> &[Line<'static>] {
        &self.open
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn markdown_styles_follow_the_theme_and_no_color_keeps_to_bold_reverse_underline() {
        let text = "## Title\n\nSome *emphasis* and `code`.\n";
        for theme in [Theme::dark(), Theme::light()] {
            let lines = render(text, &theme);
            let heading = lines[0]
                .spans
                .iter()
                .find(|s| s.content.contains("Title"))
                .unwrap();
            assert_eq!(heading.style.fg, theme.accent.fg, "{}", theme.name);
            assert!(!lines[0].to_string().contains('#'), "no raw heading marks");
            let code = lines
                .iter()
                .flat_map(|l| l.spans.iter())
                .find(|s| s.content == "code")
                .unwrap();
            assert_eq!(code.style.bg, theme.selection.bg, "{}", theme.name);
        }
        let mono = render(text, &Theme::monochrome());
        for span in mono.iter().flat_map(|l| l.spans.iter()) {
            assert!(
                span.style.fg.is_none() && span.style.bg.is_none(),
                "{span:?}"
            );
            assert!(
                !span.style.add_modifier.contains(Modifier::ITALIC),
                "{span:?}"
            );
        }
    }

    use super::*;

    #[test]
    fn the_open_tail_is_plain_and_done_renders_everything() {
        let theme = Theme::monochrome();
        let mut md = StreamingMarkdown::default();
        let partial = md.lines("# Title\n| a | b", false, &theme);
        assert_eq!(partial.last().unwrap().to_string(), "| a | b");
        let whole = "# Title\n| a | b |\n|---|---|\n| 1 | 2 |";
        assert_eq!(md.lines(whole, true, &theme), render(whole, &theme));
    }
}

#[cfg(test)]
mod incremental_tests {
    use super::*;

    const TEXTS: [&str; 5] = [
        "# Plan\n\n1. read\n2. write\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
        "Code:\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\nDone, $x^2$ too.",
        "- 你好 **世界**\n- emoji 🦀\n\n> quoted\n> text",
        "para\n\n- a\n\n- b\n\n1. x\n\n2. y\n\n    indented\n\n[r]: http://x\n\nend [r]\n",
        "## H\n\ntext **bold**\n\n~~~\na\n\nb\n~~~\n\n---\n\nlast",
    ];

    fn streamed(text: &str, step: usize, theme: &Theme) -> Vec<Line<'static>> {
        let mut md = StreamingMarkdown::default();
        let mut at = 0;
        while at < text.len() {
            at = (at + step).min(text.len());
            while !text.is_char_boundary(at) {
                at += 1;
            }
            md.update(&text[..at], false, theme);
            let committed = text[..at].rfind('\n').map_or(0, |i| i + 1);
            // Mid-stream the committed part shows exactly its whole rendering.
            let mut shown = md.frozen().to_vec();
            shown.extend_from_slice(md.open());
            let expect = if committed == 0 {
                vec![]
            } else {
                render(&text[..committed], theme)
            };
            assert_eq!(&shown[..expect.len()], &expect[..], "at {at} of {text:?}");
        }
        md.update(text, true, theme);
        let mut out = md.frozen().to_vec();
        out.extend_from_slice(md.open());
        out
    }

    #[test]
    fn block_by_block_rendering_equals_the_whole_rendering() {
        let theme = Theme::dark();
        for text in TEXTS {
            for step in [1, 3, 7, 40] {
                assert_eq!(
                    streamed(text, step, &theme),
                    render(text, &theme),
                    "{text:?}"
                );
            }
        }
    }

    #[test]
    fn a_replaced_text_renders_afresh() {
        let theme = Theme::dark();
        let mut md = StreamingMarkdown::default();
        md.update("# A\n\npara\n\nmore\n", false, &theme);
        assert!(!md.frozen().is_empty());
        assert!(!md.update("# Other\n\nx", true, &theme));
        let mut out = md.frozen().to_vec();
        out.extend_from_slice(md.open());
        assert_eq!(out, render("# Other\n\nx", &theme));
    }
}
