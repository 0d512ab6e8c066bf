//! The tool output pane: a running tool's output as it arrives, then its whole result.

use ratatui::Frame;
use ratatui::layout::Rect;
use std::time::Duration;

use ratatui::style::Style;
use ratatui::text::Line;

use super::Caches;
use super::wrap_cache::{Cleaned, GrowingWrap};
use super::{draw_lines, inner, pane_block};
use crate::terminal_text::clean;
use crate::transcript::Call;
use crate::tui::calls::{call_label, result_lines};
use crate::tui::state::{Focus, Pane, Scroll, State};
use crate::tui::wrap;

/// Whether any step has a call to show.
pub fn has_content(state: &State) -> bool {
    state
        .view
        .detail_step()
        .is_some_and(|s| !s.calls.is_empty())
}

/// The styles the pane draws with: text, muted, warning, error, success.
type Styles = [Style; 5];

/// The tool output pane's lines: one block per call of the detail step (its head, then its
/// result or its output so far), each rebuilt only when its call changed; a running call's
/// output is extended in place ([`GrowingWrap`]).
#[derive(Clone, Debug, Default)]
pub struct ToolLines {
    /// One block per call.
    pub(crate) calls: Vec<CallLines>,
    /// The first line of each block; one more entry holds the total.
    pub(crate) starts: Vec<usize>,
}

/// One call's block and what it was built from.
#[derive(Clone, Debug, Default)]
pub(crate) struct CallLines {
    /// What `head` and `result` show; `None` until built.
    source: Option<CallSource>,
    /// The head: status, label, duration.
    pub(crate) head: Vec<Line<'static>>,
    /// A finished call's result, field by field.
    pub(crate) result: Vec<Line<'static>>,
    /// A running call's output so far (shown while there is no result).
    pub(crate) output: GrowingWrap,
    /// Whether `output` is shown (the call runs and has printed something).
    pub(crate) live: bool,
    /// The running call's output cleaned of terminal escapes so far, kept so each frame cleans
    /// only what arrived since (a sequence split between two pieces is still dropped whole).
    cleaned: Cleaned,
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
    result: Option<crate::events::Observation>,
    duration: Option<Duration>,
}

impl CallSource {
    fn matches(&self, call: &Call, width: usize, styles: &Styles) -> bool {
        self.width == width
            && self.styles == *styles
            && self.duration == call.duration()
            && self.name == call.name
            && self.arguments == call.arguments
            && self.result.as_ref() == call.finished.as_ref().map(|f| &f.result)
    }
}

impl CallLines {
    /// Brings the block up to date with `call`.
    fn update(&mut self, call: &Call, width: usize, styles: &Styles) {
        if !self
            .source
            .as_ref()
            .is_some_and(|s| s.matches(call, width, styles))
        {
            let [text, muted, warning, error, success] = *styles;
            let label = call_label(&call.name, &call.arguments);
            let result = call.finished.as_ref().map(|f| &f.result);
            let (head, style) = match (result, call.failed()) {
                (None, _) => (format!("▶ {label}  running…"), warning),
                (Some(_), true) => (format!("✗ {label}  failed"), error),
                (Some(_), false) => (
                    format!(
                        "✓ {label}  {} ms",
                        call.duration().map_or(0, |d| d.as_millis())
                    ),
                    success,
                ),
            };
            self.head = wrap::wrap_text(&head, style, width);
            // Finished: the result, field by field, text as lines (it holds what streamed).
            self.result = result.map_or_else(Vec::new, |result| {
                // Tool output is outside data: no escape reaches the terminal, and none is
                // left as text (`[31m`) by dropping only its control character.
                result_lines(result)
                    .into_iter()
                    .flat_map(|(t, m)| {
                        let t = clean(&t);
                        wrap::wrap_text(&t, if m { muted } else { text }, width)
                    })
                    .collect()
            });
            self.source = Some(CallSource {
                width,
                styles: *styles,
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                result: result.cloned(),
                duration: call.duration(),
            });
        }
        self.live = call.finished.is_none() && !call.output.is_empty();
        if self.live {
            let output = self.cleaned.update(&call.output).trim_end_matches('\n');
            self.output.update(output, styles[0], width);
        } else {
            // The output is in the result now (or there is none): not kept twice.
            self.output = GrowingWrap::default();
            self.cleaned = Cleaned::default();
        }
    }

    /// How many lines the block has.
    fn len(&self) -> usize {
        self.head.len() + self.body().len()
    }

    /// The lines under the head.
    pub(crate) fn body(&self) -> &[Line<'static>] {
        if self.live {
            self.output.lines()
        } else {
            &self.result
        }
    }
}

/// Brings each call's block up to date for the current width (only changed calls are rebuilt,
/// and a running call's output only at its end) and sets the scroll size.
pub fn prepare(state: &mut State, caches: &mut Caches, area: Rect) {
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
    let cache = &mut caches.tool_output;
    let calls = state
        .view
        .detail_step()
        .map_or(&[][..], |s| s.calls.as_slice());
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
}

/// Draws the visible part of the tool output pane.
pub fn draw(frame: &mut Frame<'_>, state: &State, caches: &Caches, area: Rect) {
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
    let cache = &caches.tool_output;
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
