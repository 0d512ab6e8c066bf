//! The tool output pane: a running tool's output as it arrives, then its whole result.

use ratatui::Frame;
use ratatui::layout::Rect;
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::Line;
use serde_json::Value;

use super::wrap_cache::GrowingWrap;
use super::{draw_lines, inner, pane_block};
use crate::tui::calls::call_label;
use crate::tui::state::{CallView, Focus, Pane, Scroll, State};
use crate::tui::wrap;

/// Whether any step has a call to show.
pub fn has_content(state: &State) -> bool {
    state.detail_step().is_some_and(|s| !s.calls.is_empty())
}

/// The styles the pane draws with: text, muted, warning, error, success.
type Styles = [Style; 5];

/// The tool output pane's lines: one block per call of the detail step (its head, then its
/// result or its output so far), each rebuilt only when its call changed; a running call's
/// output is extended in place ([`GrowingWrap`]).
#[derive(Clone, Debug, Default)]
pub struct ToolLines {
    /// One block per call.
    calls: Vec<CallLines>,
    /// The first line of each block; one more entry holds the total.
    starts: Vec<usize>,
}

/// One call's block and what it was built from.
#[derive(Clone, Debug, Default)]
struct CallLines {
    /// What `head` and `result` show; `None` until built.
    source: Option<CallSource>,
    /// The head: status, label, duration.
    head: Vec<Line<'static>>,
    /// A finished call's result, field by field.
    result: Vec<Line<'static>>,
    /// A running call's output so far (shown while there is no result).
    output: GrowingWrap,
    /// Whether `output` is shown (the call runs and has printed something).
    live: bool,
}

/// Everything a block's head and result lines depend on, kept to compare with the call each
/// frame. Compared whole (not by lengths), so a call replaced by another (a new step, a reloaded
/// history) is never mistaken for it; the strings compare as memory and results are small next
/// to the cost of rebuilding.
#[derive(Clone, Debug, PartialEq)]
struct CallSource {
    width: usize,
    styles: Styles,
    name: String,
    arguments: String,
    result: Option<Value>,
    duration: Option<Duration>,
}

impl CallSource {
    fn matches(&self, call: &CallView, width: usize, styles: &Styles) -> bool {
        self.width == width
            && self.styles == *styles
            && self.duration == call.duration
            && self.name == call.name
            && self.arguments == call.arguments
            && self.result == call.result
    }
}

impl CallLines {
    /// Brings the block up to date with `call`.
    fn update(&mut self, call: &CallView, width: usize, styles: &Styles) {
        if !self
            .source
            .as_ref()
            .is_some_and(|s| s.matches(call, width, styles))
        {
            let [text, muted, warning, error, success] = *styles;
            let label = call_label(&call.name, &call.arguments);
            let (head, style) = match (&call.result, call.failed()) {
                (None, _) => (format!("▶ {label}  running…"), warning),
                (Some(_), true) => (format!("✗ {label}  failed"), error),
                (Some(_), false) => (
                    format!(
                        "✓ {label}  {} ms",
                        call.duration.map_or(0, |d| d.as_millis())
                    ),
                    success,
                ),
            };
            self.head = wrap::wrap_text(&head, style, width);
            // Finished: the result, field by field, text as lines (it holds what streamed).
            self.result = call.result.as_ref().map_or_else(Vec::new, |result| {
                result_lines(result)
                    .into_iter()
                    .flat_map(|(t, m)| wrap::wrap_text(&t, if m { muted } else { text }, width))
                    .collect()
            });
            self.source = Some(CallSource {
                width,
                styles: *styles,
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                result: call.result.clone(),
                duration: call.duration,
            });
        }
        self.live = call.result.is_none() && !call.output.is_empty();
        if self.live {
            let output = call.output.trim_end_matches('\n');
            self.output.update(output, styles[0], width);
        } else {
            // The output is in the result now (or there is none): not kept twice.
            self.output = GrowingWrap::default();
        }
    }

    /// How many lines the block has.
    fn len(&self) -> usize {
        self.head.len() + self.body().len()
    }

    /// The lines under the head.
    fn body(&self) -> &[Line<'static>] {
        if self.live {
            self.output.lines()
        } else {
            &self.result
        }
    }
}

/// Brings each call's block up to date for the current width (only changed calls are rebuilt,
/// and a running call's output only at its end) and sets the scroll size.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width as usize;
    let theme = &state.theme;
    let styles = [
        theme.text,
        theme.muted,
        theme.warning,
        theme.error,
        theme.success,
    ];
    // Taken out so the step can be borrowed from the state meanwhile (a move, not a copy).
    let mut cache = std::mem::take(&mut state.side.tool_output);
    let calls = state.detail_step().map_or(&[][..], |s| s.calls.as_slice());
    cache.calls.resize_with(calls.len(), CallLines::default);
    cache.starts.clear();
    let mut total = 0;
    for (block, call) in cache.calls.iter_mut().zip(calls) {
        block.update(call, width, &styles);
        cache.starts.push(total);
        total += block.len();
    }
    cache.starts.push(total);
    state.scroll[Pane::ToolOutput].resize(total, inner.height as usize);
    state.side.tool_output = cache;
}

/// A finished call's result as readable lines (text, whether muted): each field on its own,
/// strings and lists of strings as their lines (a shell command's stdout and stderr as lines,
/// not one escaped JSON string), other values as compact JSON. `ok` and `tool` are in the head.
pub fn result_lines(result: &Value) -> Vec<(String, bool)> {
    let Some(fields) = result.as_object() else {
        return vec![(result.to_string(), true)];
    };
    let mut out = Vec::new();
    for (key, value) in fields {
        if key == "ok" || key == "tool" {
            continue;
        }
        match value {
            Value::String(text) if text.contains('\n') => {
                out.push((format!("{key}:"), true));
                out.extend(
                    text.trim_end_matches('\n')
                        .lines()
                        .map(|l| (format!("  {l}"), false)),
                );
            }
            Value::String(text) if text.is_empty() => {}
            Value::String(text) => out.push((format!("{key}: {text}"), false)),
            Value::Array(items) if items.iter().all(Value::is_string) && !items.is_empty() => {
                out.push((format!("{key}:"), true));
                out.extend(
                    items
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|l| (format!("  {l}"), false)),
                );
            }
            other => out.push((format!("{key}: {other}"), true)),
        }
    }
    out
}

/// Draws the visible part of the tool output pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[Pane::ToolOutput];
    let block = pane_block(
        state,
        "Tool output".into(),
        Focus::ToolOutput,
        Some(scroll),
        area.width,
    );
    let height = inner(area).height as usize;
    let top = scroll.effective_top();
    let cache = &state.side.tool_output;
    // The block holding the top line, found by binary search over the block starts.
    let first = cache
        .starts
        .partition_point(|&s| s <= top)
        .saturating_sub(1);
    let mut skip = top - cache.starts.get(first).copied().unwrap_or(0).min(top);
    let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
    for call in cache.calls.iter().skip(first) {
        for line in call.head.iter().chain(call.body()).skip(skip) {
            if visible.len() >= height {
                break;
            }
            visible.push(line.clone());
        }
        skip = 0;
        if visible.len() >= height {
            break;
        }
    }
    let at_top = Scroll {
        top: 0,
        follow: false,
        ..*scroll
    };
    draw_lines(frame, area, block, &visible, &at_top);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentEvent;
    use crate::tui::Theme;
    use crate::tui::panes::test_support::{assert_cached_equals_fresh, busy_state, feed};
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use serde_json::json;

    /// The pane's lines as the uncached pane built them every frame (the specification).
    fn reference(state: &State, width: usize) -> Vec<Line<'static>> {
        let theme = &state.theme;
        let mut lines: Vec<Line<'static>> = Vec::new();
        for call in state.detail_step().map_or(&[][..], |s| s.calls.as_slice()) {
            let label = call_label(&call.name, &call.arguments);
            let (head, style) = match (&call.result, call.failed()) {
                (None, _) => (format!("▶ {label}  running…"), theme.warning),
                (Some(_), true) => (format!("✗ {label}  failed"), theme.error),
                (Some(_), false) => (
                    format!(
                        "✓ {label}  {} ms",
                        call.duration.map_or(0, |d| d.as_millis())
                    ),
                    theme.success,
                ),
            };
            lines.extend(wrap::wrap_text(&head, style, width));
            match &call.result {
                Some(result) => {
                    for (text, muted) in result_lines(result) {
                        let style = if muted { theme.muted } else { theme.text };
                        lines.extend(wrap::wrap_text(&text, style, width));
                    }
                }
                None if !call.output.is_empty() => lines.extend(wrap::wrap_text(
                    call.output.trim_end_matches('\n'),
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
        let cache = &state.side.tool_output;
        let cached: Vec<Line<'static>> = cache
            .calls
            .iter()
            .flat_map(|c| c.head.iter().chain(c.body()).cloned())
            .collect();
        assert_eq!(cached, expected);
        assert_eq!(cache.starts.last().copied(), Some(expected.len()));
        // Drawn from the blocks = drawn from the whole list, at this scroll position.
        let screen = Rect::new(0, 0, width, height);
        let mut a = Terminal::new(TestBackend::new(width, height)).unwrap();
        a.draw(|f| draw(f, state, area)).unwrap();
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
            result: json!({"ok": true, "tool": "run_shell_command", "exit_code": 0, "stdout": stdout}),
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
        assert!(
            s.side.tool_output.calls[0].head[0]
                .to_string()
                .contains("12 ms")
        );
        // A second call in the same step, running under the finished one; then it fails.
        feed(&mut s, [started("c2", "b.txt"), output("c2", "partial\n")]);
        check(&mut s, 160, 45);
        feed(
            &mut s,
            [AgentEvent::ToolFinished {
                id: "c2".into(),
                name: "run_shell_command".into(),
                result: json!({"ok": false, "error": "no such file"}),
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
        s.selected = Some(0);
        check(&mut s, 160, 45);
        s.selected = Some(1);
        check(&mut s, 160, 45);
        s.selected = None;
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
        let call = &mut s.steps[0].calls[0];
        call.output = call.output.replacen("line 0", "LINE 0", 1) + "tail";
        check(&mut s, 160, 45);
        s.steps[0].calls[0].output = "short".into();
        check(&mut s, 160, 45);
        feed(&mut s, [finished("c1", "one\n", 7)]);
        check(&mut s, 160, 45);
        // The same call, another result with the same duration.
        s.steps[0].calls[0].result = Some(json!({"ok": true, "stdout": "two\nthree\n"}));
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
