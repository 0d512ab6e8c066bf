//! The timeline: one line per Thought / Action / Observation step, expandable to the thought,
//! the arguments and the observation (long values folded; the tool pane shows them whole).

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use serde_json::Value;

use super::{Caches, draw_lines, inner, pane_block, plan, put};
use crate::events::CallOutcome;
use crate::transcript::{Call, Step};
use crate::tui::calls::{self, sub_agent_lines};
use crate::tui::state::{Focus, Pane, Scroll, State, StepStop};
use crate::tui::theme::Theme;
use crate::tui::wrap;

/// Lines of a folded value shown in the timeline.
const FOLD: usize = 8;

pub use crate::tui::calls::call_label;

/// One step's timeline lines and what they were drawn from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepLines {
    /// Width, selected, running, what its group lines show (0: none) and a fingerprint of the
    /// step's content.
    pub key: (usize, bool, bool, u64, [usize; 8]),
    /// The lines: the group lines before the step (a turn's label, a plan item's header), the
    /// step's, and those after it (the plan items still to come).
    pub lines: Vec<Line<'static>>,
    /// How many of `lines` come before the step's own.
    pub head: usize,
    /// How many lines it has: `lines.len()` once built. A folded step outside a plan is known
    /// to be its turn label and one line, so it is only built when it is in view (a long
    /// session's thousands of steps are not laid out to open it).
    pub len: usize,
    /// Whether `lines` is built.
    pub built: bool,
}

/// The timeline's lines at the last layout.
#[derive(Clone, Debug, Default)]
pub struct TimelineLines {
    /// Each step's lines (a turn separator first when a turn starts), cached.
    pub steps: Vec<StepLines>,
    /// The first timeline line of each step; one more entry holds the total.
    pub starts: Vec<usize>,
    /// The view the steps' lines were built for (`TranscriptView::generation`).
    pub generation: u64,
}

/// How a step looks: the step, whether it is expanded, and how its turn stopped.
struct Shown<'a> {
    step: &'a Step,
    expanded: bool,
    stopped: Option<StepStop>,
}

/// Pretty JSON of a raw JSON text (the text itself when it is not JSON).
pub fn pretty(raw: &str) -> String {
    serde_json::from_str::<Value>(raw)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| raw.to_string())
}

fn status(shown: &Shown<'_>, running: bool, theme: &Theme) -> Span<'static> {
    let step = shown.step;
    match (shown.stopped, running) {
        (_, true) if step.calls.is_empty() => return Span::styled("…", theme.muted),
        (Some(StepStop::Interrupted), false) => {
            return Span::styled("⏸ interrupted", theme.warning);
        }
        (Some(_), false) if step.calls.is_empty() => {
            return Span::styled("✗ failed", theme.error);
        }
        (None, false) if step.calls.is_empty() => return Span::styled("answer", theme.muted),
        _ => {}
    }
    let done = step.calls.iter().all(|c| c.finished.is_some());
    let failed = step.calls.iter().any(Call::failed);
    if !done && !failed {
        return Span::styled("⋯ running", theme.warning);
    }
    // A person's no and a rule's refusal read apart from a failure.
    let (mark, style) = match step
        .calls
        .iter()
        .find_map(|c| c.outcome().filter(|o| !o.is_ok()))
    {
        Some(outcome @ CallOutcome::Refused { .. }) => {
            (calls::step_mark(outcome).to_string(), theme.warning)
        }
        Some(outcome) => (calls::step_mark(outcome).to_string(), theme.error),
        // A command that ran but did not exit 0 is no success either.
        None => match step.calls.iter().find_map(Call::exit_failure) {
            Some(exit) => (format!("✗ {exit}"), theme.error),
            None => ("✓".to_string(), theme.success),
        },
    };
    // Steps loaded from an earlier session have no timings.
    let timed: Vec<u128> = step
        .calls
        .iter()
        .filter_map(|c| c.duration().map(|d| d.as_millis()))
        .collect();
    if timed.is_empty() {
        Span::styled(mark, style)
    } else {
        Span::styled(format!("{mark} {} ms", timed.iter().sum::<u128>()), style)
    }
}

fn folded(
    text: &str,
    style: ratatui::style::Style,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out: Vec<Line<'static>> = Vec::new();
    for l in lines.iter().take(FOLD) {
        out.extend(wrap::wrap_line(
            &Line::styled(format!("    {l}"), style),
            width,
        ));
    }
    if lines.len() > FOLD {
        out.push(Line::styled(
            format!(
                "    … {} more lines (Tab to the tool output pane)",
                lines.len() - FOLD
            ),
            theme.muted,
        ));
    }
    out
}

/// A step's thought as markdown (the model writes it so), indented under its heading and
/// folded like the other parts of a step.
fn thought_lines(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let lines = crate::tui::markdown::render(text, width.saturating_sub(4).max(1), theme);
    let mut out: Vec<Line<'static>> = lines
        .iter()
        .take(FOLD)
        .cloned()
        .map(|mut l| {
            l.spans.insert(0, Span::raw("    "));
            l
        })
        .collect();
    if lines.len() > FOLD {
        out.push(Line::styled(
            format!("    … {} more lines", lines.len() - FOLD),
            theme.muted,
        ));
    }
    out
}

fn step_lines(
    shown: &Shown<'_>,
    selected: bool,
    running: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let step = shown.step;
    let marker = if shown.expanded { "▾" } else { "▸" };
    let calls: Vec<String> = step
        .calls
        .iter()
        .map(|c| call_label(&c.name, &c.arguments))
        .collect();
    let prefix = format!("{marker} Step {}  ", step.number);
    let status = status(shown, running, theme);
    // A collapsed step is exactly one line: the call labels give way first.
    let room = width.saturating_sub(wrap::width(&prefix) + wrap::width(&status.content) + 2);
    let mut spans = vec![Span::styled(prefix, theme.accent)];
    if !calls.is_empty() {
        spans.push(Span::styled(
            wrap::truncate(&calls.join(", "), room.max(1)),
            theme.text,
        ));
        spans.push(Span::raw("  "));
    }
    spans.push(status);
    let mut head = Line::from(spans);
    if selected {
        head = head.patch_style(theme.selection);
    }
    let mut out = wrap::wrap_line(&head, width);
    out.truncate(1);
    if !shown.expanded {
        return out;
    }
    let thought = if step.text.trim().is_empty() {
        &step.reasoning
    } else {
        &step.text
    };
    if !thought.trim().is_empty() && !step.calls.is_empty() {
        out.push(Line::styled("  Thought", theme.muted));
        out.extend(thought_lines(thought.trim(), width, theme));
    }
    for call in &step.calls {
        out.push(Line::styled(
            format!("  Action  {}", call.name),
            theme.muted,
        ));
        out.extend(folded(&pretty(&call.arguments), theme.text, width, theme));
        for (file, bytes) in &call.instructions {
            let size = crate::agent::instructions::human_size(*bytes);
            out.extend(wrap::wrap_line(
                &Line::styled(format!("    + {file} ({size}) for this turn"), theme.accent),
                width,
            ));
        }
        for n in call.sub.as_deref().map(sub_agent_lines).unwrap_or_default() {
            out.extend(wrap::wrap_line(
                &Line::styled(format!("    {n}"), theme.muted),
                width,
            ));
        }
        match call.finished.as_ref().map(|f| &f.result) {
            Some(result) => {
                let style = if call.failed() {
                    theme.error
                } else {
                    theme.text
                };
                let exit = call.exit_failure();
                let label = match (call.outcome().and_then(calls::outcome_mark), exit) {
                    (Some(mark), _) => format!("  Observation {mark}"),
                    (None, Some(exit)) => format!("  Observation ✗ {exit}"),
                    (None, None) => "  Observation".to_string(),
                };
                out.push(Line::styled(
                    label,
                    if call.failed() || exit.is_some() {
                        theme.error
                    } else {
                        theme.muted
                    },
                ));
                let text = serde_json::to_string_pretty(result.value()).unwrap_or_default();
                out.extend(folded(&text, style, width, theme));
            }
            None => out.push(Line::styled("  Observation  (running…)", theme.warning)),
        }
    }
    if step.calls.is_empty() && !step.text.is_empty() {
        out.push(Line::styled(
            "  Answer (shown in the conversation)",
            theme.muted,
        ));
    }
    out
}

/// A cheap summary of everything a step's lines show: its texts and calls only grow, so their
/// lengths tell when it changed.
fn fingerprint(shown: &Shown<'_>) -> [usize; 8] {
    let step = shown.step;
    let mut f = [
        step.turn,
        step.number,
        usize::from(shown.expanded),
        step.reasoning.len(),
        step.text.len(),
        step.calls.len(),
        shown.stopped.map_or(0, |s| s as usize + 1),
        0,
    ];
    for c in &step.calls {
        let sub = c.sub.as_deref().map_or(0, |s| {
            let calls: usize = s.steps.iter().map(|st| st.calls.len()).sum();
            let done: usize = s
                .steps
                .iter()
                .flat_map(|st| &st.calls)
                .filter(|c| c.finished.is_some())
                .count();
            s.steps.len() + calls * 7 + done * 13 + s.errors.len() * 17 + usize::from(s.ended)
        });
        f[6] = f[6]
            .wrapping_mul(31)
            .wrapping_add(c.arguments.len() + c.output.len() + c.instructions.len() * 11 + sub);
        let done = c.duration().map_or(0, |d| d.as_nanos() as usize + 1);
        f[7] = f[7]
            .wrapping_mul(31)
            .wrapping_add(done + usize::from(c.finished.is_some()));
    }
    f
}

/// Brings the timeline's per-step lines up to date for the current width (only changed steps
/// are rebuilt) and sets the scroll size.
pub fn prepare(state: &mut State, caches: &mut Caches, area: Rect) {
    let inner = inner(area);
    let width = inner.width as usize;
    let steps = &state.view.transcript.steps;
    let last = steps.len().saturating_sub(1);
    let busy = state.busy();
    let TimelineLines {
        steps: cache,
        starts,
        generation,
    } = &mut caches.timeline;
    starts.clear();
    // Another view's steps at the same index may look alike to the keys (which compare sizes).
    if *generation != state.view.generation {
        cache.clear();
        *generation = state.view.generation;
    }
    // The glimpse's steps are never drawn (see `draw`): no lines are built for them.
    if state.view.opening.is_some() {
        cache.clear();
        starts.push(0);
        state.scroll[Pane::Timeline].resize(1, inner.height as usize);
        return;
    }
    cache.truncate(steps.len());
    let mut total = 0;
    for i in 0..steps.len() {
        let (shown, separator) = shown_step(state, i);
        let running = i == last && busy;
        let key = (
            width,
            state.view.selected == Some(i),
            running,
            plan::group_key(state, i, separator),
            fingerprint(&shown),
        );
        if cache.len() <= i {
            cache.push(StepLines::default());
        }
        let entry = &mut cache[i];
        if entry.key != key || entry.len == 0 {
            *entry = if !shown.expanded && width > 0 && !plan::in_plan(state, i) {
                let head = usize::from(separator);
                StepLines {
                    key,
                    lines: Vec::new(),
                    head,
                    len: head + 1,
                    built: false,
                }
            } else {
                build_step(state, &shown, i, separator, key)
            };
        }
        // The step starts after its group's lines.
        starts.push(total + entry.head);
        total += entry.len;
    }
    starts.push(total);
    let starts = &caches.timeline.starts;
    let shown = total.max(1); // "No steps yet." when empty
    let scroll = &mut state.scroll[Pane::Timeline];
    scroll.resize(shown, inner.height as usize);
    if state.view.reveal_selection {
        if let Some(sel) = state.view.selected {
            let start = starts.get(sel).copied().unwrap_or(0);
            let end = starts.get(sel + 1).copied().unwrap_or(total);
            let top = scroll.effective_top();
            if start < top {
                scroll.top = start;
                scroll.follow = false;
            } else if end > top + scroll.height {
                scroll.top = (end.saturating_sub(scroll.height)).min(start);
                scroll.follow = scroll.top >= scroll.max_top();
            }
        }
        state.view.reveal_selection = false;
    }
    // The steps in view get their lines.
    let (top, bottom) = (
        scroll.effective_top(),
        scroll.effective_top() + scroll.height,
    );
    let first = starts.partition_point(|&s| s <= top).saturating_sub(1);
    let count = state.view.transcript.steps.len();
    for (i, &start) in starts.iter().enumerate().take(count).skip(first) {
        let begin = start - caches.timeline.steps[i].head;
        if begin >= bottom {
            break;
        }
        if !caches.timeline.steps[i].built {
            let (shown, separator) = shown_step(state, i);
            let key = caches.timeline.steps[i].key;
            caches.timeline.steps[i] = build_step(state, &shown, i, separator, key);
        }
    }
}

/// How step `i` looks, and whether its turn's label comes before it (every turn opens with
/// its label, the first included).
fn shown_step(state: &State, i: usize) -> (Shown<'_>, bool) {
    let steps = &state.view.transcript.steps;
    let shown = Shown {
        step: &steps[i],
        expanded: state.view.expanded.contains(&i),
        stopped: state.view.step_stop(i),
    };
    (shown, i == 0 || steps[i - 1].turn != steps[i].turn)
}

/// Step `i`'s lines: which turn (or plan item) begins there, so steps numbered from 1 again are
/// not confused; the step's own; after a plan's last step, its items still to come.
fn build_step(
    state: &State,
    shown: &Shown<'_>,
    i: usize,
    separator: bool,
    key: (usize, bool, bool, u64, [usize; 8]),
) -> StepLines {
    let (mut lines, tail) = plan::group_lines(state, i, separator, key.0);
    let head = lines.len();
    lines.extend(step_lines(shown, key.1, key.2, key.0, &state.theme));
    lines.extend(tail);
    StepLines {
        key,
        len: lines.len(),
        lines,
        head,
        built: true,
    }
}

/// Draws the visible part of the timeline.
pub fn draw(frame: &mut Frame<'_>, state: &State, caches: &Caches, area: Rect) {
    let scroll = &state.scroll[Pane::Timeline];
    let title = match state.view.opening {
        Some(_) => "Timeline".to_string(),
        None => format!("Timeline ({})", state.view.transcript.steps.len()),
    };
    let block = pane_block(state, title, Focus::Timeline, Some(scroll), area.width);
    let height = inner(area).height as usize;
    let top = scroll.effective_top();
    let cache = &caches.timeline.steps;
    // The glimpse's steps are the session's last, numbered as if they were its first: none is
    // shown until the whole session is read.
    if state.view.opening.is_some() {
        let reading = [Line::styled("Reading the session…", state.theme.muted)];
        let at_top = Scroll {
            top: 0,
            follow: false,
            ..*scroll
        };
        draw_lines(frame, area, block, &reading, &at_top);
        return;
    }
    if cache.is_empty() {
        let empty = [Line::styled("No steps yet.", state.theme.muted)];
        draw_lines(frame, area, block, &empty, scroll);
        return;
    }
    // Offsets of each step's first line including its separator.
    let starts = &caches.timeline.starts;
    let begin = |i: usize| starts[i] - cache[i].head;
    // Binary search for the step holding the top line.
    let (mut lo, mut hi) = (0, cache.len());
    while lo + 1 < hi {
        let mid = (lo + hi) / 2;
        if begin(mid) <= top {
            lo = mid
        } else {
            hi = mid
        }
    }
    let skip = top.saturating_sub(begin(lo));
    // The visible lines are drawn from the cache where they are, not copied for the frame.
    let visible = cache[lo].lines[skip.min(cache[lo].lines.len())..]
        .iter()
        .chain(cache[lo + 1..].iter().flat_map(|step| &step.lines))
        .take(height);
    let text_area = block.inner(area);
    frame.render_widget(block, area);
    put::put_lines(frame.buffer_mut(), text_area, visible);
}
