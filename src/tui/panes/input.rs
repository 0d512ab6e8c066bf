//! The prompt editor (ratatui-textarea) in its bordered pane; while Ctrl+R searches, the
//! search line in its place.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{inner, pane_block};
use crate::tui::state::{Find, Focus, PromptSearch, State};

/// Rows the input wants: its lines plus the border, between 3 and 8.
pub fn height(state: &State) -> u16 {
    // A paste may hold more lines than a u16 counts: clamp before narrowing.
    (state.composer.input.lines().len().min(6) as u16 + 2).clamp(3, 8)
}

/// The input's title when nothing else is going on: the newline key this terminal can send.
/// Shift+Enter only reaches MiniClaw as itself through the kitty keyboard protocol.
pub fn idle_title(state: &State) -> &'static str {
    if state.keyboard_enhanced {
        "Message · Enter sends · Shift+Enter newline"
    } else {
        "Message · Enter sends · Alt+Enter / Ctrl+J newline"
    }
}

/// Draws the input.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    if let Some(search) = &state.composer.search {
        return draw_search(frame, state, search, area);
    }
    if let Some(find) = &state.find {
        return draw_find(frame, state, find, area);
    }
    let title = if !state.composer.queued.is_empty() {
        let next = state.composer.queued[0].lines().next().unwrap_or("");
        format!(
            "Message · {} queued: {} (Up edits · Esc removes)",
            state.composer.queued.len(),
            crate::tui::wrap::truncate(next, 30)
        )
    } else if state.busy() {
        "Message · Esc interrupts".to_string()
    } else if state.view.plans.draft() {
        "Plan · edit it · Enter runs it item by item · Esc sets it aside".to_string()
    } else {
        idle_title(state).to_string()
    };
    let block = pane_block(state, title, Focus::Input, None, area.width);
    frame.render_widget(block, area);
    frame.render_widget(&state.composer.input, inner(area));
}

/// The search line, as a shell shows it: `(reverse-i-search)`fix': fix the parser`.
fn draw_search(frame: &mut Frame<'_>, state: &State, search: &PromptSearch, area: Rect) {
    let candidates = state.composer.search_candidates();
    let found = search.found(&candidates);
    let theme = &state.theme;
    let label = match (found, search.failing) {
        (None, _) if !search.query.is_empty() => "(failing reverse-i-search)",
        (_, true) => "(failing reverse-i-search)",
        _ => "(reverse-i-search)",
    };
    let mut spans = vec![
        Span::styled(label, theme.muted),
        Span::styled(format!("`{}'", search.query), theme.accent),
        Span::styled(": ", theme.muted),
    ];
    // A long prompt shows as one line: its lines joined, so the match stays in view.
    if let Some(prompt) = found {
        spans.push(Span::styled(prompt.replace('\n', " ⏎ "), theme.text));
    }
    let title = match found {
        Some(_) => format!(
            "Reverse search · {} of {} · Ctrl+R older · Enter or → edits · Esc cancels",
            search.skip.min(search.count(&candidates).saturating_sub(1)) + 1,
            search.count(&candidates)
        ),
        None => "Reverse search · type to search earlier prompts · Esc cancels".to_string(),
    };
    let block = pane_block(state, title, Focus::Input, None, area.width);
    frame.render_widget(block, area);
    frame.render_widget(
        Paragraph::new(Line::from(spans)).wrap(Wrap { trim: false }),
        inner(area),
    );
}

/// The find's line: what is looked for and which match is shown (`2/7`); the title names the
/// keys this terminal can send.
fn draw_find(frame: &mut Frame<'_>, state: &State, find: &Find, area: Rect) {
    let theme = &state.theme;
    let counter = find.counter();
    let spans = vec![
        Span::styled("find: ", theme.muted),
        Span::styled(find.query.clone(), theme.accent),
        Span::styled(format!("  {counter}"), theme.muted),
    ];
    let below = if state.keyboard_enhanced {
        "Shift+Enter / Ctrl+N below"
    } else {
        "Ctrl+N below"
    };
    let title = format!("Find {counter} · Enter / Ctrl+P above · {below} · Esc closes");
    let block = pane_block(state, title, Focus::Input, None, area.width);
    frame.render_widget(block, area);
    frame.render_widget(Paragraph::new(Line::from(spans)), inner(area));
}
