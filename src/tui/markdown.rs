//! Streaming-safe markdown: committed text (up to the last newline) is rendered with
//! tui-markdown and cached; the open tail of a half-arrived line is shown plainly, so a partial
//! line never scrambles a table or code block.

use ratatui::style::Style;
use ratatui::text::{Line, Span};
use tui_markdown::{BuiltinCodeTheme, Options};

use super::theme::Theme;

/// Renders a whole markdown text into owned lines (colours stripped for a monochrome theme).
pub fn render(text: &str, theme: &Theme) -> Vec<Line<'static>> {
    let code = if theme.light {
        BuiltinCodeTheme::InspiredGitHub
    } else {
        BuiltinCodeTheme::Base16OceanDark
    };
    let options = Options::default().code_theme(code);
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

fn clean(style: Style, theme: &Theme) -> Style {
    if theme.monochrome {
        Style {
            fg: None,
            bg: None,
            underline_color: None,
            ..style
        }
    } else {
        style
    }
}

/// The rendering of a growing markdown text, re-parsed only when a newline commits more of it.
#[derive(Clone, Debug, Default)]
pub struct StreamingMarkdown {
    committed_src: String,
    committed: Vec<Line<'static>>,
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
}

#[cfg(test)]
mod tests {
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
