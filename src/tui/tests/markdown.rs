//! A markdown answer streamed in arbitrary pieces ends in exactly the rendering of the whole
//! answer, and while streaming the committed part is always rendered as markdown. Styled
//! snapshots show how each kind of block looks, colours and all.

use std::time::Instant;

use super::common::*;
use crate::agent::{AgentEvent, TurnOutcome};
use crate::tui::Theme;
use crate::tui::markdown::{StreamingMarkdown, code_blocks, render};
use crate::tui::panes::conversation::entry_lines;
use crate::tui::state::{Entry, EntryKind};
use crate::tui::theme::ColorDepth;
use proptest::prelude::*;

const ANSWERS: [&str; 9] = [
    "# Plan\n\n1. read\n2. write\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Code:\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nDone, $x^2$ too.",
    "- 你好 **世界**\n- emoji 🦀\n\n> quoted\n> text",
    "plain text without newline",
    "Run:\n```sh\ncargo test\n```\nthen $\\alpha \\le 1$ and $5 or $10.\n\n$$\\sum_{i=1}^n i$$\n",
    "> outer\n> > inner quote with enough words to wrap\n\n- [ ] task\n- [x] done\n\n---\n",
    "| key | a rather long value column |\n|---|---|\n| x | words words words words |\n",
    "中文段落，其中包含English words和数字123，需要正确换行。\n",
    // A link definition after blocks that froze: the finished answer is rendered whole again.
    "Intro paragraph.\n\nSee [the docs][d] for more.\n\n- a list\n- of two\n\n[d]: https://example.com\n",
];

/// Where the answer is cut into deltas: `cuts` within it on character boundaries, with its
/// start and end, in order.
fn cut_points(answer: &str, cuts: Vec<usize>) -> Vec<usize> {
    let mut points: Vec<usize> = cuts
        .into_iter()
        .map(|c| c % (answer.len() + 1))
        .filter(|&c| answer.is_char_boundary(c))
        .chain([0, answer.len()])
        .collect();
    points.sort();
    points.dedup();
    points
}

/// A state whose turn has begun its first step, ready for the answer's deltas.
fn answering(t0: Instant) -> crate::tui::state::State {
    let mut s = state();
    send(&mut s, t0, "q");
    feed(
        &mut s,
        t0,
        vec![AgentEvent::StepStarted { step: 1, max: 10 }],
    );
    s
}

fn whole(text: &str, width: usize) -> Vec<ratatui::text::Line<'static>> {
    let mut e = Entry::new(EntryKind::Assistant, text);
    e.done = true;
    entry_lines(&mut e, width, &Theme::dark())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn streamed_pieces_end_as_the_whole_rendering(which in 0..ANSWERS.len(), cuts in proptest::collection::vec(0usize..200, 0..12), width in 30usize..90) {
        let answer = ANSWERS[which];
        let points = cut_points(answer, cuts);
        let t0 = Instant::now();
        let mut s = answering(t0);
        for pair in points.windows(2) {
            let piece = &answer[pair[0]..pair[1]];
            feed(&mut s, t0, vec![AgentEvent::ContentDelta(piece.into())]);
            // Mid-stream: the committed part renders exactly as markdown of that part.
            let idx = s.view.live.unwrap();
            let entry = &mut s.view.entries[idx];
            let text = entry.text.clone();
            let cut = text.rfind('\n').map_or(0, |i| i + 1);
            let lines = entry.markdown.get_or_insert_default().lines(&text, false, width - 2, &Theme::dark());
            let committed = if cut == 0 { vec![] } else { render(&text[..cut], width - 2, &Theme::dark()) };
            prop_assert_eq!(&lines[..committed.len()], &committed[..]);
            render_screen(&mut s, width);
        }
        feed(&mut s, t0, vec![AgentEvent::TurnFinished { outcome: TurnOutcome::Answered, usage: None, last_usage: None }]);
        render_screen(&mut s, width);
        let e = s.view.entries.last().unwrap();
        prop_assert_eq!(&e.cache.lines, &whole(answer, width - 2));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    /// The finished blocks' lines are handed from the renderer to the conversation once: a
    /// width that changes while the answer streams (a resize) must still end in the whole
    /// rendering at the new width, with nothing lost or shown twice.
    #[test]
    fn a_resize_while_streaming_ends_as_the_whole_rendering_at_the_new_width(which in 0..ANSWERS.len(), cuts in proptest::collection::vec(0usize..200, 1..12), resize_after in 0usize..12, width in 30usize..90, new_width in 30usize..90) {
        let answer = ANSWERS[which];
        let points = cut_points(answer, cuts);
        let t0 = Instant::now();
        let mut s = answering(t0);
        let mut at = width;
        for (i, pair) in points.windows(2).enumerate() {
            feed(&mut s, t0, vec![AgentEvent::ContentDelta(answer[pair[0]..pair[1]].into())]);
            if i == resize_after {
                at = new_width;
            }
            render_screen(&mut s, at);
        }
        feed(&mut s, t0, vec![AgentEvent::TurnFinished { outcome: TurnOutcome::Answered, usage: None, last_usage: None }]);
        render_screen(&mut s, new_width);
        let e = s.view.entries.last().unwrap();
        prop_assert_eq!(&e.cache.lines, &whole(answer, new_width - 2));
    }
}

fn render_screen(s: &mut crate::tui::state::State, width: usize) {
    // Narrow widths stack the panes; the conversation is then the full width.
    let area = ratatui::layout::Rect::new(0, 0, width as u16, 30);
    crate::tui::tests::support::with_caches(|c| crate::tui::layout::prepare(s, c, area));
}

#[test]
fn resize_rewraps_from_the_source() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "q");
    feed(
        &mut s,
        t0,
        vec![
            AgentEvent::ContentDelta(ANSWERS[0].into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ],
    );
    render_screen(&mut s, 40);
    render_screen(&mut s, 80);
    assert_eq!(
        s.view.entries.last().unwrap().cache.lines,
        whole(ANSWERS[0], 78)
    );
}

/// A theme with the given colour depth (the built-in ones say 256 colours).
fn dark(depth: ColorDepth) -> Theme {
    Theme {
        color_depth: depth,
        ..Theme::dark()
    }
}

fn snap(text: &str, width: usize, theme: &Theme) -> String {
    styled(&render(text, width, theme))
}

const RUST: &str =
    "```rust\nfn main() {\n    // greet\n    let n: u32 = 42;\n    println!(\"hi {n}\");\n}\n```\n";

#[test]
fn code_block_with_language() {
    insta::assert_snapshot!(snap(RUST, 40, &dark(ColorDepth::Indexed256)));
}

#[test]
fn code_block_with_language_truecolor() {
    let rgb = render(RUST, 40, &dark(ColorDepth::TrueColor));
    let indexed = render(RUST, 40, &dark(ColorDepth::Indexed256));
    // Same text, other colours.
    let text = |l: &[ratatui::text::Line<'_>]| l.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert_eq!(text(&rgb), text(&indexed));
    assert_ne!(rgb, indexed);
    insta::assert_snapshot!(styled(&rgb));
}

#[test]
fn code_block_in_monochrome_has_its_frame_but_no_colour() {
    insta::assert_snapshot!(snap(RUST, 40, &Theme::monochrome()));
}

#[test]
fn code_block_without_language() {
    let text = "Before.\n\n```\nplain code, a line long enough to be cut at the frame\n\n  indented\n```\n\n    four-space indented\n\nAfter.";
    insta::assert_snapshot!(snap(text, 36, &Theme::dark()));
}

#[test]
fn typescript_toml_and_dockerfile_are_highlighted() {
    for (lang, code) in [
        ("ts", "const x: number = 1;"),
        ("toml", "[package]\nname = \"x\""),
        ("Dockerfile", "FROM rust:1\nRUN cargo build"),
    ] {
        let lines = render(&format!("```{lang}\n{code}\n```\n"), 40, &Theme::dark());
        let colours: std::collections::HashSet<_> = lines[1..lines.len() - 1]
            .iter()
            .flat_map(|l| l.spans.iter().skip(1))
            .filter_map(|s| s.style.fg)
            .collect();
        assert!(colours.len() >= 2, "{lang}: {colours:?}");
    }
}

#[test]
fn streaming_code_block() {
    let mut md = StreamingMarkdown::default();
    let theme = Theme::dark();
    md.update(
        "Soon:\n\n```python\ndef f(x):\n    return x * 2\n    # still typ",
        false,
        40,
        &theme,
    );
    let mut lines = md.frozen().to_vec();
    lines.extend_from_slice(md.open());
    insta::assert_snapshot!(styled(&lines));
}

#[test]
fn copy_numbers_match_the_code_blocks() {
    let text = "```rust\nfn a() {}\n```\n\n```\nplain\n```\n";
    assert_eq!(code_blocks(text), ["fn a() {}\n", "plain\n"]);
}

#[test]
fn inline_and_display_math() {
    let text = "Energy $E = mc^2$, angles $\\alpha \\le \\beta$, roots $\\sqrt{2}$, $x_1 \\ne x_2$, \
                $\\frac{a+b}{2} \\times 3 \\pm \\infty$. Prices $5 and $10 stay.\n\n\
                $$\\sum_{i=1}^{n} i \\to \\int_0^1 f$$\n\n\
                Not convertible: $\\begin{matrix} a \\end{matrix}$\n";
    insta::assert_snapshot!(snap(text, 60, &Theme::dark()));
}

#[test]
fn task_list() {
    let text = "- [ ] write the renderer\n- [x] read the issue\n- plain item\n";
    insta::assert_snapshot!(snap(text, 40, &Theme::dark()));
}

#[test]
fn rule() {
    let text = "Above\n\n---\n\nBelow\n\n> quoted\n>\n> ***\n";
    insta::assert_snapshot!(snap(text, 30, &Theme::dark()));
}

#[test]
fn nested_quote() {
    let text = "> Outer quote.\n>\n> > Inner quote that is long enough to wrap onto another line.\n> >\n> > > Third level.\n>\n> Back out.\n";
    insta::assert_snapshot!(snap(text, 32, &Theme::dark()));
}

#[test]
fn wrapped_list() {
    let text = "8. Eighth item, with enough words to wrap around the pane.\n9. Ninth:\n   - nested bullet that also wraps around the edge\n     1. deeper ordered item\n   - another\n10. Tenth item wraps with its wider number too.\n";
    insta::assert_snapshot!(snap(text, 30, &Theme::dark()));
}

#[test]
fn cjk_paragraph() {
    let text =
        "这是一个很长的中文句子，其中包含English words和数字123，还有更多的中文内容需要换行。";
    let lines = render(text, 24, &Theme::dark());
    // Every line but the last is filled to within one wide character.
    for l in &lines[..lines.len() - 1] {
        assert!(l.width() >= 23, "short line {l:?}");
    }
    insta::assert_snapshot!(styled(&lines));
}

#[test]
fn wide_table() {
    let text = "| Name | Description | Size |\n|:-----|-------------|-----:|\n| `render` | Turns markdown into **lines** fitted to the pane width | 12 |\n| wrap | Breaks text | 3 |\n";
    let lines = render(text, 40, &Theme::dark());
    for l in &lines {
        assert!(l.width() <= 40, "{l:?}");
    }
    insta::assert_snapshot!(styled(&lines));
}

#[test]
fn narrow_table_keeps_natural_widths() {
    let text = "| a | b |\n|---|:-:|\n| 1 | 22 |\n";
    let lines: Vec<String> = render(text, 60, &Theme::dark())
        .iter()
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        lines,
        [
            "┌───┬────┐",
            "│ a │ b  │",
            "├───┼────┤",
            "│ 1 │ 22 │",
            "└───┴────┘"
        ]
    );
}

#[test]
fn headings_emphasis_links_and_footnotes() {
    let text = "# Title\n\n## Section\n\n### Sub\n\nSome *em*, **strong**, ~~gone~~, `code`, [docs](https://docs.rs) and <https://x.y>.[^n]\n\n[^n]: A footnote.\n\n<b>html</b> inline\n";
    insta::assert_snapshot!(snap(text, 60, &Theme::dark()));
}

#[test]
fn an_answer_is_rendered_for_the_pane_width_and_not_wrapped_again() {
    let text = "| Name | Description |\n|---|---|\n| render | Turns markdown into lines fitted to the pane |\n\n> a quote long enough to wrap in the pane\n";
    for width in [30, 44] {
        let lines = whole(text, width);
        let body = render(text, width, &Theme::dark());
        assert_eq!(lines[1..lines.len() - 1], body[..], "at {width}");
        assert!(lines.iter().all(|l| l.width() <= width), "at {width}");
    }
}
