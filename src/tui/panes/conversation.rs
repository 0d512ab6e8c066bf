//! The conversation: prompts, answers (markdown, streaming-safe), notices and errors. Lines are
//! cached per entry and width, and only the visible ones are drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use super::{inner, pane_block};
use crate::tui::state::{CONV, Entry, EntryKind, Focus, State, WrapCache};
use crate::tui::theme::Theme;
use crate::tui::wrap;

/// The unwrapped-then-wrapped lines of one entry, with a blank line after it.
pub fn entry_lines(entry: &mut Entry, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut raw: Vec<Line<'static>> = Vec::new();
    match entry.kind {
        EntryKind::User => {
            raw.push(Line::styled("❯ You", theme.user));
            raw.extend(
                entry
                    .text
                    .split('\n')
                    .map(|l| Line::styled(l.to_string(), theme.text)),
            );
        }
        EntryKind::Assistant => {
            raw.push(Line::styled("◆ MiniClaw", theme.assistant));
            raw.extend(entry.markdown.lines(&entry.text, entry.done, theme));
            if entry.interrupted {
                raw.push(Line::styled(
                    "⏸ interrupted — the answer above is partial",
                    theme.warning,
                ));
            }
        }
        EntryKind::Error => {
            for (i, l) in entry.text.split('\n').enumerate() {
                let prefix = if i == 0 { "✗ " } else { "  " };
                raw.push(Line::styled(format!("{prefix}{l}"), theme.error));
            }
        }
        EntryKind::Notice => {
            for (i, l) in entry.text.split('\n').enumerate() {
                let prefix = if i == 0 { "• " } else { "  " };
                raw.push(Line::from(vec![
                    Span::styled(prefix, theme.accent),
                    Span::styled(l.to_string(), theme.muted),
                ]));
            }
        }
    }
    let mut lines = wrap::wrap_lines(raw.iter(), width);
    lines.push(Line::default());
    lines
}

/// Brings every entry's cache up to date for `width` and sets the scroll size.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width;
    let mut total = 0;
    for entry in &mut state.entries {
        if entry.cache.width != width || entry.cache.version != entry.version {
            let lines = entry_lines(entry, width as usize, &state.theme);
            entry.cache = WrapCache {
                width,
                version: entry.version,
                lines,
            };
        }
        total += entry.cache.lines.len();
    }
    state.scroll[CONV].resize(total, inner.height as usize);
}

/// Draws the visible part of the conversation.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let scroll = &state.scroll[CONV];
    let block = pane_block(
        state,
        "Conversation".into(),
        Focus::Conversation,
        Some(scroll),
    );
    let height = inner(area).height as usize;
    let mut skip = scroll.effective_top();
    let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
    for entry in &state.entries {
        let n = entry.cache.lines.len();
        if skip >= n {
            skip -= n;
            continue;
        }
        for line in &entry.cache.lines[skip..] {
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
    if state.entries.is_empty() {
        visible.push(Line::styled(
            "Type a prompt below and press Enter. F1 shows every key.",
            state.theme.muted,
        ));
    }
    frame.render_widget(Paragraph::new(visible).block(block), area);
}
