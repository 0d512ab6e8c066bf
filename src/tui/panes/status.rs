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

const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// The status text pieces.
pub fn line(state: &State, now: Instant) -> Line<'static> {
    let theme = &state.theme;
    let sep = || Span::styled(" │ ", theme.muted);
    let mut spans = vec![
        Span::styled(format!(" {}", state.preset.model()), theme.accent),
        sep(),
    ];
    match (state.busy(), state.busy_since) {
        (true, Some(since)) => {
            let elapsed = now.saturating_duration_since(since);
            let frame = SPINNER[(elapsed.as_millis() / 100) as usize % SPINNER.len()];
            let what = if state.agent_state == AgentState::Acting {
                "acting"
            } else {
                "thinking"
            };
            spans.push(Span::styled(
                format!("{frame} {what} {}s", elapsed.as_secs()),
                theme.warning,
            ));
        }
        _ => spans.push(Span::styled("idle", theme.muted)),
    }
    spans.push(sep());
    spans.push(Span::raw(format!(
        "step {}/{}",
        state.step, state.max_steps
    )));
    if let Some(u) = state.last_usage {
        let share = (u.prompt_cache_hit_tokens * 100)
            .checked_div(u.prompt_tokens)
            .unwrap_or(0);
        spans.push(sep());
        spans.push(Span::raw(format!(
            "tokens {} in / {} out / {share}% cached",
            tokens(u.prompt_tokens),
            tokens(u.completion_tokens)
        )));
    }
    if let Some((used, budget)) = state.context.filter(|(_, b)| *b > 0) {
        spans.push(sep());
        spans.push(Span::raw(format!("context {}%", used * 100 / budget)));
    }
    if let Some(r) = &state.retry {
        let secs = r.at.saturating_duration_since(now).as_secs_f64().ceil() as u64;
        spans.push(sep());
        spans.push(Span::styled(
            format!("retrying in {secs}s ({}/{})", r.attempt, r.max_attempts),
            theme.warning,
        ));
    }
    spans.push(sep());
    spans.push(Span::styled(
        wrap::truncate(&state.workspace, 30),
        theme.muted,
    ));
    spans.push(sep());
    spans.push(Span::styled(
        "F1 help · F2 model · Ctrl+C quit",
        theme.muted,
    ));
    Line::from(spans)
}

/// Draws the status line.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect, now: Instant) {
    frame.render_widget(
        Paragraph::new(line(state, now)).style(state.theme.status),
        area,
    );
}
