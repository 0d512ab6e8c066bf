//! The status line: model, state with spinner and elapsed time, step, tokens, retry, workspace,
//! key hints. Time comes in as `now` so snapshots stay fixed.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::agent::AgentState;
use crate::tui::state::State;
use crate::tui::wrap;

/// The key hints while a turn runs (Esc and Ctrl+C interrupt it).
const BUSY_HINTS: [&str; 3] = [
    "F1 help · F2 model · Esc interrupt",
    "F1 help · Esc interrupt",
    "F1 help",
];

/// The key hints, from the fullest to the shortest.
const HINTS: [&str; 3] = [
    "F1 help · F2 model · Ctrl+C quit",
    "F1 help · F2 model",
    "F1 help",
];

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// One piece of the status line; the lower its rank, the longer it stays when space runs out.
struct Segment {
    rank: u8,
    span: Span<'static>,
}

/// The status line for a terminal `width` columns wide: pieces that do not fit are dropped, least
/// important first, so the model, the state and a retry countdown always show.
pub fn line(state: &State, now: Instant, width: usize) -> Line<'static> {
    let theme = &state.theme;
    let mut segments = segments(state, now);
    fit(state, &mut segments, width);
    let mut spans = vec![Span::raw(" ")];
    for (i, segment) in segments.into_iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" │ ", theme.muted));
        }
        spans.push(segment.span);
    }
    Line::from(spans)
}

/// `MCP 2/3` while not every enabled MCP server is ready (starting or failed).
fn mcp_segment(state: &State) -> Option<Segment> {
    use crate::events::McpState;
    let enabled = state.mcp.iter().filter(|s| s.state != McpState::Disabled);
    let total = enabled.clone().count();
    let ready = enabled.filter(|s| s.state == McpState::Ready).count();
    let failed = state.mcp.iter().any(|s| s.state == McpState::Failed);
    (ready < total).then(|| Segment {
        rank: 1,
        span: Span::styled(
            format!("MCP {ready}/{total}"),
            if failed {
                state.theme.error
            } else {
                state.theme.muted
            },
        ),
    })
}

/// Every segment the line may show, each ranked (0 stays longest).
fn segments(state: &State, now: Instant) -> Vec<Segment> {
    let theme = &state.theme;
    let mut segments = vec![Segment {
        rank: 0,
        // DeepSeek's presets name their provider; another provider's model is `provider/model`.
        span: Span::styled(state.preset.to_string(), theme.accent),
    }];
    // The default (`auto`) goes unsaid; a mode that stops calls is always in view.
    if state.approval_mode != crate::approval::ApprovalMode::Auto {
        segments.push(Segment {
            rank: 0,
            span: Span::styled(
                format!("approval: {}", state.approval_mode.name()),
                theme.warning,
            ),
        });
    }
    let busy = match (state.busy(), state.status.since()) {
        (true, Some(since)) => {
            let elapsed = now.saturating_duration_since(since);
            let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
            let what = if let Some(queued) = state.status.queued {
                // The wait has its own clock: `queued at DeepSeek 45 s`.
                let at = if state.preset.is_deepseek() {
                    "DeepSeek"
                } else {
                    state.preset.provider()
                };
                let waited = now.saturating_duration_since(queued).as_secs();
                format!("queued at {at} {waited} s")
            } else if let Some(turns) = state.status.compacting {
                format!(
                    "compacting {turns} turn{}",
                    if turns == 1 { "" } else { "s" }
                )
            } else if state.status.doing() == Some(AgentState::Acting) {
                "acting".into()
            } else if state.view.live.is_some() {
                "answering".into()
            } else {
                "thinking".into()
            };
            let clock = if state.status.queued.is_some() {
                String::new()
            } else {
                format!(" {}s", elapsed.as_secs())
            };
            Span::styled(format!("{frame} {what}{clock}"), theme.warning)
        }
        _ => Span::styled("idle", theme.muted),
    };
    segments.push(Segment {
        rank: 0,
        span: busy,
    });
    if !state.key_set {
        segments.push(Segment {
            rank: 1,
            span: Span::styled("no API key: /key", theme.error),
        });
    }
    if let Some(r) = &state.status.retry {
        let secs = r.at.saturating_duration_since(now).as_secs_f64().ceil() as u64;
        segments.push(Segment {
            rank: 0,
            span: Span::styled(
                format!(
                    "{} · retrying in {secs}s ({}/{})",
                    r.cause, r.attempt, r.max_attempts
                ),
                theme.warning,
            ),
        });
    }
    if let Some((text, until)) = &state.flash
        && now < *until
    {
        segments.push(Segment {
            rank: 0,
            span: Span::styled(text.clone(), theme.warning),
        });
    }
    segments.push(Segment {
        rank: 1,
        span: Span::raw(format!(
            "step {}/{}",
            state.status.step, state.status.max_steps
        )),
    });
    segments.extend(mcp_segment(state));
    segments.extend(counts(state));
    segments.extend(cost_segment(state));
    segments.push(Segment {
        rank: 5,
        span: Span::styled(wrap::truncate(&state.workspace, 30), theme.muted),
    });
    segments.push(Segment {
        rank: 2,
        span: Span::styled(
            if state.busy() {
                BUSY_HINTS[0]
            } else {
                HINTS[0]
            },
            theme.muted,
        ),
    });
    segments
}

/// The token and context counts of the last turn, when known.
fn counts(state: &State) -> Vec<Segment> {
    let mut segments = Vec::new();
    if let Some(u) = state.status.last_usage {
        // Counts come from the server: no product may overflow.
        let share = u
            .prompt_cache_hit_tokens
            .saturating_mul(100)
            .checked_div(u.prompt_tokens)
            .unwrap_or(0)
            .min(100);
        segments.push(Segment {
            rank: 4,
            span: Span::raw(format!(
                "tokens {} in / {} out / {share}% cached",
                tokens(u.prompt_tokens),
                tokens(u.completion_tokens)
            )),
        });
    }
    if let Some(gauge) = state.status.context.filter(|g| g.budget > 0) {
        segments.push(context_segment(state, &gauge));
    }
    segments
}

/// From this share of the budget the gauge is amber and says where compaction is.
const GAUGE_AMBER: usize = 70;
/// From this share it is red.
const GAUGE_RED: usize = 90;

/// `context 45%`; from 70% amber and `context 72% · compacts at 80%` (red from 90%), so the
/// person sees compaction coming and may `/compact` first.
fn context_segment(state: &State, gauge: &crate::tui::state::ContextGauge) -> Segment {
    let theme = &state.theme;
    let shown = context_percent(gauge.used, gauge.budget);
    let percent = gauge.percent();
    if percent < GAUGE_AMBER {
        return Segment {
            rank: 3,
            span: Span::raw(format!("context {shown}%")),
        };
    }
    let next = match gauge.compact_at {
        Some(at) => format!("compacts at {}%", context_percent(at, gauge.budget)),
        None => "/compact frees it".to_string(),
    };
    // A warning stays while the line shrinks, as a retry does.
    Segment {
        rank: 0,
        span: Span::styled(
            format!("context {shown}% · {next}"),
            if percent >= GAUGE_RED {
                theme.error
            } else {
                theme.warning
            },
        ),
    }
}

/// What the session's model responses cost so far (`spent $0.0123`), when any was priced;
/// `+` marks responses of models without a price left out.
fn cost_segment(state: &State) -> Option<Segment> {
    let spend = state.view.transcript.cost();
    let shown = spend.shown()?;
    let more = if spend.unpriced() > 0 { "+" } else { "" };
    Some(Segment {
        rank: 4,
        span: Span::raw(format!("spent {shown}{more}")),
    })
}

/// The share of the context a request used, as the status line and `/status` say it: `<1`
/// for a little, never `0` for some, `999+` for a count no real request reaches.
pub fn context_percent(used: usize, budget: usize) -> String {
    let percent = used.saturating_mul(100) / budget.max(1);
    if percent == 0 && used > 0 {
        "<1".to_string()
    } else if percent > 999 {
        "999+".to_string()
    } else {
        percent.to_string()
    }
}

/// Shortens the key hints, then drops the lowest-ranked segments, until the line fits `width`.
fn fit(state: &State, segments: &mut Vec<Segment>, width: usize) {
    let sep_width = 3;
    let total = |segs: &[Segment]| -> usize {
        1 + segs
            .iter()
            .map(|s| wrap::width(&s.span.content))
            .sum::<usize>()
            + sep_width * segs.len().saturating_sub(1)
    };
    while total(segments) > width {
        // After the workspace goes, the key hints shrink step by step to the one that opens all
        // the others, before anything else is dropped.
        let workspace_gone = segments.iter().all(|s| s.rank < 5);
        let list = if state.busy() { &BUSY_HINTS } else { &HINTS };
        if let Some(hints) = segments
            .iter_mut()
            .find(|s| workspace_gone && s.rank == 2 && s.span.content != list[list.len() - 1])
        {
            let next = list
                .iter()
                .position(|h| *h == hints.span.content)
                .map_or(list.len() - 1, |i| i + 1);
            hints.span.content = list[next].into();
            continue;
        }
        let Some(drop) = segments
            .iter()
            .enumerate()
            .filter(|(_, s)| s.rank > 0)
            .max_by_key(|(i, s)| (s.rank, *i))
            .map(|(i, _)| i)
        else {
            break;
        };
        segments.remove(drop);
    }
    // What must stay (a notice, the retry) is shortened with `…` rather than cut mid-word by
    // the edge of the screen.
    let over = total(segments).saturating_sub(width);
    if over > 0
        && let Some(longest) = segments
            .iter_mut()
            .max_by_key(|s| wrap::width(&s.span.content))
    {
        let keep = wrap::width(&longest.span.content)
            .saturating_sub(over)
            .max(1);
        longest.span.content = wrap::truncate(&longest.span.content, keep).into();
    }
}

/// Draws the status line, its background filling the whole row.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect, now: Instant) {
    frame.render_widget(
        Paragraph::new(line(state, now, usize::from(area.width))).style(state.theme.status),
        area,
    );
}
