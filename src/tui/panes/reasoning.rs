//! The reasoning pane: the selected (or current) step's `reasoning_content`, kept per step.

use ratatui::Frame;
use ratatui::layout::Rect;

use super::{draw_lines, inner, pane_block};
use crate::tui::state::{Focus, Pane, State};

/// Whether there is reasoning to show.
pub fn has_content(state: &State) -> bool {
    state.detail_step().is_some_and(|s| !s.reasoning.is_empty())
}

/// Brings the wrapped reasoning up to date for the current width and sets the scroll size. The
/// lines are kept between frames ([`super::wrap_cache::GrowingWrap`]): while the reasoning
/// grows only its open end is wrapped again; a new width, style or step (any text that does
/// not continue the one wrapped before) wraps it afresh.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    // Taken out so the step can be borrowed from the state meanwhile (a move, not a copy).
    let mut cache = std::mem::take(&mut state.side.reasoning);
    let text = state.detail_step().map_or("", |s| s.reasoning.as_str());
    cache.update(text, state.theme.reasoning, inner.width as usize);
    state.scroll[Pane::Reasoning].resize(cache.lines().len(), inner.height as usize);
    state.side.reasoning = cache;
}

/// Draws the reasoning pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[Pane::Reasoning];
    let title = match state.detail_step() {
        Some(s) => format!(
            "Reasoning · turn {}, step {} (Ctrl+T hides)",
            s.turn + 1,
            s.number
        ),
        None => "Reasoning (Ctrl+T hides)".to_string(),
    };
    let block = pane_block(state, title, Focus::Reasoning, Some(scroll), area.width);
    draw_lines(frame, area, block, state.side.reasoning.lines(), scroll);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentEvent;
    use crate::tui::panes::test_support::{assert_cached_equals_fresh, busy_state, feed};
    use crate::tui::{Theme, wrap};

    /// The cached lines equal the detail step's reasoning wrapped whole at the pane's width.
    fn assert_lines_are_the_whole_text_wrapped(state: &State) {
        let width = inner(state.areas.reasoning.expect("reasoning shown")).width as usize;
        let text = &state.detail_step().expect("a step").reasoning;
        assert_eq!(
            state.side.reasoning.lines(),
            wrap::wrap_text(text, state.theme.reasoning, width).as_slice()
        );
    }

    fn check(state: &mut State, width: u16, height: u16) {
        assert_cached_equals_fresh(state, width, height);
        assert_lines_are_the_whole_text_wrapped(state);
    }

    /// Reasoning in pieces that end mid-word, mid-line and on newlines.
    fn pieces(seed: &str, n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i % 7 {
                0 => format!("{seed} thought {i} about it, "),
                3 => "\n\n".to_string(),
                5 => "wrapping carefully 你好 ".to_string(),
                _ => format!("wo{i}rd "),
            })
            .collect()
    }

    #[test]
    fn growing_reasoning_equals_a_fresh_rendering_every_frame() {
        let mut s = busy_state();
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        for p in pieces("first", 120) {
            feed(&mut s, [AgentEvent::ReasoningDelta(p)]);
            check(&mut s, 160, 45);
        }
    }

    #[test]
    fn a_new_width_wraps_afresh() {
        let mut s = busy_state();
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        feed(
            &mut s,
            pieces("w", 60).into_iter().map(AgentEvent::ReasoningDelta),
        );
        // Wide (side by side), wider, then narrow (stacked): each a different pane width.
        for (w, h) in [(160, 45), (200, 45), (120, 40), (90, 40), (160, 45)] {
            check(&mut s, w, h);
            feed(&mut s, [AgentEvent::ReasoningDelta("and more ".into())]);
            check(&mut s, w, h);
        }
    }

    #[test]
    fn the_detail_step_changing_shows_that_steps_reasoning() {
        let mut s = busy_state();
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        feed(
            &mut s,
            pieces("one", 40)
                .into_iter()
                .map(AgentEvent::ReasoningDelta),
        );
        check(&mut s, 160, 45);
        // A new step starts: its reasoning, not a continuation of the first step's.
        feed(&mut s, [AgentEvent::StepStarted { step: 2, max: 10 }]);
        feed(&mut s, [AgentEvent::ReasoningDelta("one thought 0".into())]);
        check(&mut s, 160, 45);
        feed(
            &mut s,
            pieces("two", 30)
                .into_iter()
                .map(AgentEvent::ReasoningDelta),
        );
        check(&mut s, 160, 45);
        // The selection moves back to the first step, then away again.
        s.selected = Some(0);
        check(&mut s, 160, 45);
        assert!(s.side.reasoning.lines()[0].to_string().starts_with("one"));
        s.selected = None;
        check(&mut s, 160, 45);
        feed(&mut s, [AgentEvent::ReasoningDelta(" still two".into())]);
        check(&mut s, 160, 45);
    }

    #[test]
    fn replaced_reasoning_is_wrapped_afresh() {
        let mut s = busy_state();
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        feed(
            &mut s,
            pieces("old", 40)
                .into_iter()
                .map(AgentEvent::ReasoningDelta),
        );
        check(&mut s, 160, 45);
        // Longer, same start, but an earlier line differs (not a continuation).
        let step = s.steps.last_mut().unwrap();
        let mut text = step.reasoning.replacen("thought 0", "THOUGHT 0", 1);
        text.push_str(" and a longer tail");
        step.reasoning = text;
        check(&mut s, 160, 45);
        // Shorter.
        s.steps.last_mut().unwrap().reasoning = "short".into();
        check(&mut s, 160, 45);
        // The history cleared and a new turn of the same length at the same step index.
        let len = s.steps[0].reasoning.len();
        feed(&mut s, [AgentEvent::HistoryCleared]);
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        feed(&mut s, [AgentEvent::ReasoningDelta("x".repeat(len))]);
        check(&mut s, 160, 45);
    }

    #[test]
    fn a_new_theme_restyles_the_reasoning() {
        let mut s = busy_state();
        feed(&mut s, [AgentEvent::StepStarted { step: 1, max: 10 }]);
        feed(
            &mut s,
            pieces("t", 40).into_iter().map(AgentEvent::ReasoningDelta),
        );
        check(&mut s, 160, 45);
        s.theme = Theme::light();
        assert_ne!(s.theme.reasoning, Theme::dark().reasoning);
        check(&mut s, 160, 45);
        s.theme = Theme::monochrome();
        check(&mut s, 160, 45);
    }
}
