//! A markdown answer streamed in arbitrary pieces ends in exactly the rendering of the whole
//! answer, and while streaming the committed part is always rendered as markdown.

mod tui_common;

use std::time::Instant;

use miniclaw::agent::{AgentEvent, TurnOutcome};
use miniclaw::tui::Theme;
use miniclaw::tui::markdown::render;
use miniclaw::tui::panes::conversation::entry_lines;
use miniclaw::tui::state::{Entry, EntryKind};
use proptest::prelude::*;
use tui_common::*;

const ANSWERS: [&str; 4] = [
    "# Plan\n\n1. read\n2. write\n\n| a | b |\n|---|---|\n| 1 | 2 |\n",
    "Code:\n\n```rust\nfn main() {\n    println!(\"hi\");\n}\n```\n\nDone, $x^2$ too.",
    "- 你好 **世界**\n- emoji 🦀\n\n> quoted\n> text",
    "plain text without newline",
];

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
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (answer.len() + 1)).filter(|&c| answer.is_char_boundary(c)).collect();
        points.push(0);
        points.push(answer.len());
        points.sort();
        points.dedup();
        let t0 = Instant::now();
        let mut s = state();
        send(&mut s, t0, "q");
        feed(&mut s, t0, vec![AgentEvent::StepStarted { step: 1, max: 10 }]);
        for pair in points.windows(2) {
            let piece = &answer[pair[0]..pair[1]];
            feed(&mut s, t0, vec![AgentEvent::ContentDelta(piece.into())]);
            // Mid-stream: the committed part renders exactly as markdown of that part.
            let idx = s.live.unwrap();
            let entry = &mut s.entries[idx];
            let text = entry.text.clone();
            let cut = text.rfind('\n').map_or(0, |i| i + 1);
            let lines = entry.markdown.lines(&text, false, &Theme::dark());
            let committed = if cut == 0 { vec![] } else { render(&text[..cut], &Theme::dark()) };
            prop_assert_eq!(&lines[..committed.len()], &committed[..]);
            render_screen(&mut s, width);
        }
        feed(&mut s, t0, vec![AgentEvent::TurnFinished { answer: answer.into(), outcome: TurnOutcome::Answered, usage: None, last_usage: None }]);
        render_screen(&mut s, width);
        let e = s.entries.last().unwrap();
        prop_assert_eq!(&e.cache.lines, &whole(answer, width - 2));
    }
}

fn render_screen(s: &mut miniclaw::tui::state::State, width: usize) {
    // Narrow widths stack the panes; the conversation is then the full width.
    miniclaw::tui::layout::prepare(s, ratatui::layout::Rect::new(0, 0, width as u16, 30));
}

#[test]
fn resize_rewraps_from_the_source() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "q");
    feed(
        &mut s,
        t0,
        vec![AgentEvent::TurnFinished {
            answer: ANSWERS[0].into(),
            outcome: TurnOutcome::Answered,
            usage: None,
            last_usage: None,
        }],
    );
    render_screen(&mut s, 40);
    render_screen(&mut s, 80);
    assert_eq!(s.entries.last().unwrap().cache.lines, whole(ANSWERS[0], 78));
}
