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

/// Re-wraps a streamed answer: the frozen blocks are wrapped once, only the open block again.
fn incremental_lines(entry: &mut Entry, width: u16, theme: &Theme) {
    let kept = entry.markdown.update(&entry.text, entry.done, theme);
    let frozen = entry.markdown.frozen();
    let c = &mut entry.cache;
    let w = width as usize;
    if c.width != width || !kept || !c.incremental || c.frozen_raw > frozen.len() {
        c.lines = wrap::wrap_line(&Line::styled("◆ MiniClaw", theme.assistant), w);
        c.width = width;
        c.incremental = true;
        c.frozen_raw = 0;
        c.stable = c.lines.len();
    }
    c.lines.truncate(c.stable);
    for line in &frozen[c.frozen_raw..] {
        c.lines.extend(wrap::wrap_line(line, w));
    }
    c.frozen_raw = frozen.len();
    c.stable = c.lines.len();
    for line in entry.markdown.open() {
        c.lines.extend(wrap::wrap_line(line, w));
    }
    if entry.interrupted {
        c.lines.extend(wrap::wrap_line(
            &Line::styled("⏸ interrupted — the answer above is partial", theme.warning),
            w,
        ));
    }
    c.lines.push(Line::default());
    c.version = entry.version;
}

/// Brings the entries' caches up to date for `width` and sets the scroll size. Entries change
/// only at the end (new entries, the live answer) or all at once (cleared), so only those from
/// the first that may have changed are looked at.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width;
    let len = state.entries.len();
    let idx = &mut state.conv_index;
    let mut start = if idx.width == width {
        idx.offsets.len().saturating_sub(1).min(len)
    } else {
        0
    };
    for live in [idx.live, state.live].into_iter().flatten() {
        start = start.min(live);
    }
    // The entry before `start` must still be the one measured (not replaced after a clear).
    if start > 0 {
        let e = &state.entries[start - 1];
        if e.cache.width != width || e.cache.version != e.version {
            start = 0;
        }
    }
    idx.width = width;
    idx.offsets.truncate(start + 1);
    if idx.offsets.is_empty() {
        idx.offsets.push(0);
    }
    for entry in &mut state.entries[start..] {
        if entry.cache.width != width || entry.cache.version != entry.version {
            if entry.kind == EntryKind::Assistant && (!entry.done || entry.cache.incremental) {
                incremental_lines(entry, width, &state.theme);
            } else {
                let lines = entry_lines(entry, width as usize, &state.theme);
                entry.cache = WrapCache {
                    width,
                    version: entry.version,
                    lines,
                    ..Default::default()
                };
            }
        }
        let last = idx.offsets.last().copied().unwrap_or(0);
        idx.offsets.push(last + entry.cache.lines.len());
    }
    idx.live = state.live;
    let total = idx.offsets.last().copied().unwrap_or(0);
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
    let top = scroll.effective_top();
    // The entry holding the top line, found by binary search over the offsets.
    let offsets = &state.conv_index.offsets;
    let first = offsets.partition_point(|&o| o <= top).saturating_sub(1);
    let mut skip = top - offsets.get(first).copied().unwrap_or(0).min(top);
    let mut visible: Vec<Line<'static>> = Vec::with_capacity(height);
    for entry in state.entries.iter().skip(first) {
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
