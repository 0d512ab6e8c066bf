//! Markdown as people expect it in a terminal, rendered by MiniClaw itself over pulldown-cmark:
//! code blocks framed, numbered and highlighted, math in Unicode, task lists, rules, nested
//! quotes and lists, tables fitted to the pane, and text broken by the Unicode line-breaking
//! rules. The renderer takes the width and produces final lines: nothing wraps them again.

mod blocks;
mod code;
mod inline;
mod linebreak;
mod math;
mod math_symbols;
mod stream;
mod table;

use ratatui::text::Line;

pub use stream::StreamingMarkdown;

use super::theme::Theme;

/// Renders a whole markdown text into final lines at most `width` columns wide.
pub fn render(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    blocks::render(text, width, theme, 1, &mut None).0
}

/// The code of each fenced or indented code block, in the order and numbering of the headers
/// the rendering shows (the first is block 1), for `/copy N`.
pub fn code_blocks(markdown: &str) -> Vec<String> {
    blocks::code_blocks(markdown)
}

#[cfg(test)]
/// How many code lines this thread has highlighted so far (tests use it to show that a
/// streaming code block highlights each line once).
pub fn highlighted_lines() -> usize {
    code::highlighted_lines()
}

#[cfg(test)]
mod tests {
    use ratatui::style::Modifier;

    use super::*;

    #[test]
    fn markdown_styles_follow_the_theme_and_no_color_keeps_to_bold_reverse_underline() {
        let text = "## Title\n\nSome *emphasis* and `code`.\n";
        for theme in [Theme::dark(), Theme::light()] {
            let lines = render(text, 60, &theme);
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
        let text = format!("{text}\n```rust\nfn main() {{}}\n```\n\n> *quote* [x](http://y)\n");
        let mono = render(&text, 60, &Theme::monochrome());
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

    #[test]
    fn every_line_fits_the_width() {
        let text = "# A heading that is long enough to wrap\n\n> quoted text that goes on and on \
                    and on\n\n- item with a long text that wraps around\n  1. nested ordered \
                    item with more words\n\n| col | another column |\n|---|---|\n| a cell with \
                    many words in it | b |\n\n```\nlet a_long_code_line = 1 + 2 + 3 + 4 + 5;\n```\n";
        for width in [20, 33, 50] {
            for line in render(text, width, &Theme::dark()) {
                assert!(line.width() <= width, "{width}: {line:?}");
            }
        }
    }

    #[test]
    fn code_blocks_are_numbered_in_order_with_their_code() {
        let text = "```rust\nfn a() {}\n```\n\ntext\n\n    indented\n\n- item\n\n  ~~~\n  \
                    in a list\n  ~~~\n";
        assert_eq!(
            code_blocks(text),
            ["fn a() {}\n", "indented\n", "in a list\n"]
        );
        let shown: Vec<String> = render(text, 40, &Theme::dark())
            .iter()
            .map(|l| l.to_string())
            .filter(|l| l.contains('╭'))
            .collect();
        assert_eq!(shown.len(), 3, "{shown:?}");
        for (i, header) in shown.iter().enumerate() {
            assert!(header.ends_with(&format!(" {} ─╮", i + 1)), "{header}");
        }
    }

    #[test]
    fn prices_are_not_math_and_math_loses_its_dollars() {
        let text = "It costs $5 and $10 today. Math: $x^2$ and\n\n$$\\alpha \\le \\beta$$\n";
        let lines: Vec<String> = render(text, 80, &Theme::dark())
            .iter()
            .map(|l| l.to_string())
            .collect();
        assert!(lines[0].contains("$5 and $10"), "{lines:?}");
        assert!(
            lines[0].contains("x²") && !lines[0].contains("$x"),
            "{lines:?}"
        );
        let display = lines.iter().find(|l| l.contains('α')).unwrap();
        assert_eq!(display.trim(), "α ≤ β");
        // Centred: as much room on the left as on the right (within one column).
        let left = display.len() - display.trim_start().len();
        assert!(left.abs_diff(80 - left - 5) <= 1, "{display:?}");
    }
}
