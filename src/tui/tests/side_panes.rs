//! The reasoning and tool output panes' caches: a cached screen always equals a fresh one.

mod reasoning {

    use crate::agent::AgentEvent;

    use crate::tui::panes::inner;
    use crate::tui::state::State;
    use crate::tui::tests::support::{assert_cached_equals_fresh, busy_state, feed, with_caches};
    use crate::tui::{Theme, wrap};

    /// The cached lines equal the detail step's reasoning wrapped whole at the pane's width.
    fn assert_lines_are_the_whole_text_wrapped(state: &State) {
        let width = inner(state.areas.reasoning.expect("reasoning shown")).width as usize;
        let text = &state.view.detail_step().expect("a step").reasoning;
        assert_eq!(
            with_caches(|c| c.reasoning.lines().to_vec()),
            wrap::wrap_text(text, state.theme.reasoning, width)
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
        s.view.selected = Some(0);
        check(&mut s, 160, 45);
        assert!(with_caches(|c| c.reasoning.lines()[0].to_string()).starts_with("one"));
        s.view.selected = None;
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
        let step = s.view.transcript.steps.last_mut().unwrap();
        let mut text = step.reasoning.replacen("thought 0", "THOUGHT 0", 1);
        text.push_str(" and a longer tail");
        step.reasoning = text;
        check(&mut s, 160, 45);
        // Shorter.
        s.view.transcript.steps.last_mut().unwrap().reasoning = "short".into();
        check(&mut s, 160, 45);
        // The history cleared and a new turn of the same length at the same step index.
        let len = s.view.transcript.steps[0].reasoning.len();
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

mod tool_output {
    use std::time::Duration;

    use ratatui::layout::Rect;
    use ratatui::text::Line;

    use crate::agent::AgentEvent;
    use crate::tui::Theme;
    use crate::tui::calls::call_label;
    use crate::tui::calls::result_lines;
    use crate::tui::panes::tool_output::*;
    use crate::tui::panes::{draw_lines, inner, pane_block};
    use crate::tui::state::{Focus, Pane, State};
    use crate::tui::tests::support::{assert_cached_equals_fresh, busy_state, feed, with_caches};
    use crate::tui::wrap;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    /// The pane's lines as the uncached pane built them every frame (the specification).
    fn reference(state: &State, width: usize) -> Vec<Line<'static>> {
        let theme = &state.theme;
        let mut lines: Vec<Line<'static>> = Vec::new();
        for call in state
            .view
            .detail_step()
            .map_or(&[][..], |s| s.calls.as_slice())
        {
            let label = call_label(&call.name, &call.arguments);
            let result = call.finished.as_ref().map(|f| &f.result);
            let (head, style) = match (result, call.failed()) {
                (None, _) => (format!("▶ {label}  running…"), theme.warning),
                (Some(_), true) => (format!("✗ {label}  failed"), theme.error),
                (Some(_), false) => (
                    format!(
                        "✓ {label}  {} ms",
                        call.duration().map_or(0, |d| d.as_millis())
                    ),
                    theme.success,
                ),
            };
            lines.extend(wrap::wrap_text(&head, style, width));
            match result {
                Some(result) => {
                    for (text, muted) in result_lines(result) {
                        let style = if muted { theme.muted } else { theme.text };
                        let text = crate::terminal_text::clean(&text);
                        lines.extend(wrap::wrap_text(&text, style, width));
                    }
                }
                None if !call.output.is_empty() => lines.extend(wrap::wrap_text(
                    crate::terminal_text::clean(&call.output).trim_end_matches('\n'),
                    theme.text,
                    width,
                )),
                None => {}
            }
        }
        lines
    }

    /// The screen with the caches equals a fresh one, the cached blocks equal the reference
    /// lines, and the pane shows the reference lines from the scroll position.
    fn check(state: &mut State, width: u16, height: u16) {
        assert_cached_equals_fresh(state, width, height);
        let area = state.areas.tool_output.expect("tool output shown");
        let expected = reference(state, inner(area).width as usize);
        let (cached, total) = with_caches(|c| {
            let cache = &c.tool_output;
            let cached: Vec<Line<'static>> = cache
                .calls
                .iter()
                .flat_map(|c| c.head.iter().chain(c.body()).cloned())
                .collect();
            (cached, cache.starts.last().copied())
        });
        assert_eq!(cached, expected);
        assert_eq!(total, Some(expected.len()));
        // Drawn from the blocks = drawn from the whole list, at this scroll position.
        let screen = Rect::new(0, 0, width, height);
        let mut a = Terminal::new(TestBackend::new(width, height)).unwrap();
        with_caches(|c| a.draw(|f| draw(f, state, c, area)).unwrap());
        let mut b = Terminal::new(TestBackend::new(width, height)).unwrap();
        b.draw(|f| {
            let scroll = &state.scroll[Pane::ToolOutput];
            let block = pane_block(
                state,
                "Tool output".into(),
                Focus::ToolOutput,
                Some(scroll),
                area.width,
            );
            draw_lines(f, area, block, &expected, scroll);
        })
        .unwrap();
        assert_eq!(a.backend().buffer(), b.backend().buffer(), "in {screen:?}");
    }

    fn started(id: &str, path: &str) -> AgentEvent {
        AgentEvent::ToolCallStarted {
            id: id.into(),
            name: "run_shell_command".into(),
            arguments: json!({ "command": format!("cat {path}") }).to_string(),
        }
    }

    fn output(id: &str, text: &str) -> AgentEvent {
        AgentEvent::ToolOutputDelta {
            id: id.into(),
            text: text.into(),
        }
    }

    fn finished(id: &str, stdout: &str, ms: u64) -> AgentEvent {
        AgentEvent::ToolFinished {
            id: id.into(),
            name: "run_shell_command".into(),
            result:
                json!({"ok": true, "tool": "run_shell_command", "exit_code": 0, "stdout": stdout})
                    .into(),
            outcome: crate::events::CallOutcome::Ok,
            approved: false,
            duration: Some(Duration::from_millis(ms)),
        }
    }

    /// Output in pieces that end mid-line, on newlines and in runs of newlines.
    fn pieces(n: usize) -> Vec<String> {
        (0..n)
            .map(|i| match i % 5 {
                0 => format!("line {i} of the output, long enough to wrap in a narrow pane "),
                1 => "\n".into(),
                2 => format!("{i}\t你好"),
                3 => "\n\n".into(),
                _ => "x".repeat(i % 90),
            })
            .collect()
    }

    #[test]
    fn growing_output_equals_a_fresh_rendering_every_frame() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        check(&mut s, 160, 45);
        for p in pieces(150) {
            feed(&mut s, [output("c1", &p)]);
            check(&mut s, 160, 45);
        }
    }

    #[test]
    fn a_finished_call_shows_its_result() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        let all: String = pieces(40).concat();
        feed(&mut s, [output("c1", &all)]);
        check(&mut s, 160, 45);
        feed(&mut s, [finished("c1", &all, 12)]);
        check(&mut s, 160, 45);
        assert!(with_caches(|c| c.tool_output.calls[0].head[0].to_string()).contains("12 ms"));
        // A second call in the same step, running under the finished one; then it fails.
        feed(&mut s, [started("c2", "b.txt"), output("c2", "partial\n")]);
        check(&mut s, 160, 45);
        feed(
            &mut s,
            [AgentEvent::ToolFinished {
                id: "c2".into(),
                name: "run_shell_command".into(),
                result: json!({"ok": false, "error": "no such file"}).into(),
                outcome: crate::events::CallOutcome::Failed {
                    error: "no such file".into(),
                },
                approved: false,
                duration: Some(Duration::from_millis(3)),
            }],
        );
        check(&mut s, 160, 45);
        // Scrolled into the middle: the blocks are walked from the right line.
        s.scroll[Pane::ToolOutput].follow = false;
        for top in [0, 1, 5, 17, 40] {
            s.scroll[Pane::ToolOutput].top = top;
            check(&mut s, 160, 45);
        }
    }

    #[test]
    fn a_new_width_rebuilds_the_blocks() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        feed(&mut s, pieces(30).iter().map(|p| output("c1", p)));
        feed(
            &mut s,
            [finished("c1", "done\n", 5), started("c2", "b.txt")],
        );
        feed(&mut s, pieces(30).iter().map(|p| output("c2", p)));
        for (w, h) in [(160, 45), (200, 45), (120, 40), (90, 40), (160, 45)] {
            check(&mut s, w, h);
            feed(&mut s, [output("c2", "more output ")]);
            check(&mut s, w, h);
        }
    }

    #[test]
    fn the_detail_step_changing_shows_that_steps_calls() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        feed(
            &mut s,
            [
                output("c1", "first step output\n"),
                finished("c1", "first step output\n", 4),
            ],
        );
        check(&mut s, 160, 45);
        // A new step starts with a call of the same id and arguments (a scripted server does
        // that): its own output is shown, not the first step's result.
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 2, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        check(&mut s, 160, 45);
        feed(&mut s, [output("c1", "second step output")]);
        check(&mut s, 160, 45);
        s.view.selected = Some(0);
        check(&mut s, 160, 45);
        s.view.selected = Some(1);
        check(&mut s, 160, 45);
        s.view.selected = None;
        feed(&mut s, [output("c1", " continues")]);
        check(&mut s, 160, 45);
    }

    #[test]
    fn replaced_output_or_result_is_rebuilt() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        feed(&mut s, pieces(30).iter().map(|p| output("c1", p)));
        check(&mut s, 160, 45);
        // Longer but not a continuation.
        let call = &mut s.view.transcript.steps[0].calls[0];
        call.output = call.output.replacen("line 0", "LINE 0", 1) + "tail";
        check(&mut s, 160, 45);
        s.view.transcript.steps[0].calls[0].output = "short".into();
        check(&mut s, 160, 45);
        feed(&mut s, [finished("c1", "one\n", 7)]);
        check(&mut s, 160, 45);
        // The same call, another result with the same duration.
        if let Some(done) = &mut s.view.transcript.steps[0].calls[0].finished {
            done.result = json!({"ok": true, "stdout": "two\nthree\n"}).into();
        }
        check(&mut s, 160, 45);
    }

    #[test]
    fn a_new_theme_restyles_the_pane() {
        let mut s = busy_state();
        feed(
            &mut s,
            [
                AgentEvent::StepStarted { step: 1, max: 10 },
                started("c1", "a.txt"),
            ],
        );
        feed(
            &mut s,
            [
                output("c1", "out\n"),
                finished("c1", "out\n", 2),
                started("c2", "b"),
            ],
        );
        feed(&mut s, [output("c2", "running output")]);
        check(&mut s, 160, 45);
        s.theme = Theme::light();
        check(&mut s, 160, 45);
        s.theme = Theme::monochrome();
        check(&mut s, 160, 45);
    }

    #[test]
    fn a_shell_result_reads_as_lines_not_as_an_escaped_string() {
        let result = json!({
            "ok": true, "tool": "run_shell_command", "command": "ls -la",
            "exit_code": 0, "stdout": "a.txt\nb.txt\n", "stderr": "", "truncated": false
        });
        let lines: Vec<String> = result_lines(&result).into_iter().map(|(t, _)| t).collect();
        assert_eq!(
            lines,
            [
                "command: ls -la",
                "exit_code: 0",
                "stdout:",
                "  a.txt",
                "  b.txt",
                "truncated: false"
            ]
        );
        let search =
            json!({"ok": true, "tool": "search_files", "matches": ["a.rs:1:x", "b.rs:2:y"]});
        let lines: Vec<String> = result_lines(&search).into_iter().map(|(t, _)| t).collect();
        assert_eq!(lines, ["matches:", "  a.rs:1:x", "  b.rs:2:y"]);
    }
}
