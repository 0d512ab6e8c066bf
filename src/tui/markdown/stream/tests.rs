//! Streaming markdown: every way of growing a text renders as the whole text does.

use super::*;
use crate::tui::markdown::{highlighted_lines, render};

#[test]
fn the_open_tail_is_plain_and_done_renders_everything() {
    let theme = Theme::monochrome();
    let mut md = StreamingMarkdown::default();
    let partial = md.lines("# Title\n| a | b", false, 40, &theme);
    assert_eq!(partial.last().unwrap().to_string(), "| a | b");
    let whole = "# Title\n| a | b |\n|---|---|\n| 1 | 2 |";
    assert_eq!(md.lines(whole, true, 40, &theme), render(whole, 40, &theme));
}

const TEXTS: [&str; 14] = [
    "# Plan\n\n1. read\n2. write\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Code:\n\n```rust\nfn main() {\n\n    println!(\"hi\");\n}\n```\n\nDone, $x^2$ too.",
    "- 你好 **世界**\n- emoji 🦀\n\n> quoted\n> text",
    "para\n\n- a\n\n- b\n\n1. x\n\n2. y\n\n    indented\n\n[r]: http://x\n\nend [r]\n",
    "## H\n\ntext **bold**\n\n~~~\na\n\nb\n~~~\n\n---\n\nlast",
    // Fences interrupting a paragraph, a list, a quote and a table; text right after a
    // closing fence; a fence inside a list item.
    "Intro\n```python\ndef f():\n    return 1\n```\nAfter the code.\n\n~~~\nplain\n~~~\n\
     - item\n```rust\nlet a = 1;\n```\n> quote\n```\nx\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n\
     ```toml\nk = 1\n```\n- in\n\n  ```sh\n  ls\n  ```\n- out\n",
    "Inline $x^2 + \\alpha$ and prices $5 and $10.\n\n$$\n\\frac{a+b}{2}\n$$\n\nEnd \
     $\\sqrt{2}$ and $\\unknown{x}$.\n",
    "> a\n>\n> > nested **b**\n> > more text that is long enough to wrap in a narrow pane\n\n\
     > [!NOTE]\n> careful\n\nafter\n",
    "| name | value |\n|:--|--:|\n| a long cell text that will not fit in a narrow pane | \
     12345 |\n| b | 7 |\n\nnext\n",
    "这是一个很长的中文句子，其中包含English words和数字123，继续写更多的内容。\n\n\
     - 列表项目一，内容比较长需要换行显示出来\n- 列表项目二\n",
    "- [ ] todo\n- [x] done\n\n---\n\n1. one with a long text that wraps\n   - nested\n   \
     - more\n2. two\n\n* a\n  * b\n    * c\n",
    "<!--\n\ncomment\n\n-->\n\ntext\n\n<div>\n```\nnot code\n```\n</div>\n\nend\n",
    // Inline HTML, then a fence that interrupts the paragraph; a fence inside an HTML block.
    "text\n<b>x</b>\n```\ncode\n\nmore\n```\nafter\n\n<div>\n```\n</div>\n\n```\nin\n\nout\n```\nend\n",
    "Footnote[^1] and a [link](http://example.com) and <http://auto.link>.\n\n[^1]: The \
     note.\n\n```\nunclosed\nfence",
];

fn streamed(text: &str, step: usize, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut md = StreamingMarkdown::default();
    let mut at = 0;
    while at < text.len() {
        at = (at + step).min(text.len());
        while !text.is_char_boundary(at) {
            at += 1;
        }
        md.update(&text[..at], false, width, theme);
        let committed = text[..at].rfind('\n').map_or(0, |i| i + 1);
        // Mid-stream the committed part shows exactly its whole rendering.
        let mut shown = md.frozen().to_vec();
        shown.extend_from_slice(md.open());
        let expect = if committed == 0 {
            vec![]
        } else {
            render(&text[..committed], width, theme)
        };
        assert!(shown.len() >= expect.len(), "at {at} of {text:?}");
        assert_eq!(&shown[..expect.len()], &expect[..], "at {at} of {text:?}");
    }
    md.update(text, true, width, theme);
    let mut out = md.frozen().to_vec();
    out.extend_from_slice(md.open());
    out
}

#[test]
fn block_by_block_rendering_equals_the_whole_rendering() {
    for theme in [Theme::dark(), Theme::monochrome()] {
        for text in TEXTS {
            for width in [24, 80] {
                for step in [1, 3, 7, 40] {
                    assert_eq!(
                        streamed(text, step, width, &theme),
                        render(text, width, &theme),
                        "{text:?} at {width}"
                    );
                }
            }
        }
    }
}

#[test]
fn finished_blocks_are_frozen_even_without_blank_lines_around_code() {
    let theme = Theme::dark();
    let mut md = StreamingMarkdown::default();
    md.update(
        "Intro\n```rust\nfn a() {}\n```\nafter\nmore\n",
        false,
        60,
        &theme,
    );
    let frozen: Vec<String> = md.frozen().iter().map(|l| l.to_string()).collect();
    assert!(frozen.iter().any(|l| l.contains("fn a()")), "{frozen:?}");
    let open: Vec<String> = md.open().iter().map(|l| l.to_string()).collect();
    assert_eq!(open, ["", "after more"]);
}

#[test]
fn a_replaced_text_renders_afresh() {
    let theme = Theme::dark();
    let mut md = StreamingMarkdown::default();
    md.update("# A\n\npara\n\nmore\n", false, 40, &theme);
    assert!(!md.frozen().is_empty());
    assert!(!md.update("# Other\n\nx", true, 40, &theme));
    let mut out = md.frozen().to_vec();
    out.extend_from_slice(md.open());
    assert_eq!(out, render("# Other\n\nx", 40, &theme));
}

#[test]
fn another_width_renders_afresh_for_that_width() {
    let theme = Theme::dark();
    let text = "# A\n\n- a list item long enough to wrap at twenty\n\nmore\n";
    let mut md = StreamingMarkdown::default();
    assert!(md.update(text, true, 60, &theme));
    assert!(!md.update(text, true, 20, &theme));
    let mut out = md.frozen().to_vec();
    out.extend_from_slice(md.open());
    assert_eq!(out, render(text, 20, &theme));
}

#[test]
fn a_streaming_code_block_highlights_each_line_once() {
    let theme = Theme::dark();
    let mut text = String::from("Here is the code:\n\n```rust\n");
    let mut md = StreamingMarkdown::default();
    md.update(&text, false, 80, &theme);
    let before = highlighted_lines();
    for i in 0..200 {
        text.push_str(&format!(
            "    let value_{i} = compute({i}) * 2; // line {i}\n"
        ));
        md.update(&text, false, 80, &theme);
    }
    text.push_str("```\n\nDone.\n");
    md.update(&text, true, 80, &theme);
    let calls = highlighted_lines() - before;
    // Each line once, plus at most a few again (not 200 × 200 / 2 = 20,000).
    assert!((200..=210).contains(&calls), "{calls} lines highlighted");
    let mut out = md.frozen().to_vec();
    out.extend_from_slice(md.open());
    assert_eq!(out, render(&text, 80, &theme));
}

#[test]
fn the_tail_of_a_streaming_code_block_is_drawn_inside_its_frame() {
    let theme = Theme::dark();
    let mut md = StreamingMarkdown::default();
    md.update("```rust\nfn a() {}\nlet partial", false, 40, &theme);
    let open: Vec<String> = md.open().iter().map(|l| l.to_string()).collect();
    assert_eq!(
        open.last().map(|l| l.trim_end_matches([' ', '│'])),
        Some("│ let partial")
    );
    assert!(open.last().is_some_and(|l| l.ends_with(" │")), "{open:?}");
    assert!(open[0].starts_with("╭─ rust"), "{open:?}");
    assert!(
        !open.iter().any(|l| l.starts_with('╰')),
        "not closed yet: {open:?}"
    );
}

#[test]
fn code_numbers_continue_across_frozen_blocks() {
    let theme = Theme::dark();
    let text = "```\na\n```\n\ntext\n\n```\nb\n```\n\nmore\n\n```\nc\n```\n";
    let mut md = StreamingMarkdown::default();
    let mut at = 0;
    while at < text.len() {
        at += 1;
        md.update(&text[..at], false, 30, &theme);
    }
    md.update(text, true, 30, &theme);
    let headers: Vec<String> = md
        .frozen()
        .iter()
        .chain(md.open())
        .map(|l| l.to_string())
        .filter(|l| l.starts_with('╭'))
        .collect();
    assert_eq!(headers.len(), 3);
    for (i, h) in headers.iter().enumerate() {
        assert!(h.ends_with(&format!(" {} ─╮", i + 1)), "{h}");
    }
}
