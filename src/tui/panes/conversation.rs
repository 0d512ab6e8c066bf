//! The conversation: prompts, answers (markdown, streaming-safe), notices and errors. Lines are
//! cached per entry and width, and only the visible ones are drawn.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use super::put::put_line;
use super::{chips, inner, pane_block};
use crate::diff::{DiffKind, FileDiff};
use crate::tui::state::{CallLine, CallStatus, Entry, EntryKind, Focus, Pane, State, WrapCache};
use crate::tui::theme::Theme;
use crate::tui::wrap;
use crate::tui::{calls, paste};

/// The lines of one entry at `width`, with a blank line after it. An answer's markdown is
/// rendered for the width already (list indents, quote bars, tables and centred math depend on
/// it), so only the other entries are wrapped here.
pub fn entry_lines(entry: &mut Entry, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut raw: Vec<Line<'static>> = Vec::new();
    match entry.kind {
        EntryKind::User => {
            raw.push(Line::styled("❯ You", theme.user));
            let lines = entry.text.split('\n');
            if foldable(entry) && !entry.expanded {
                raw.extend(
                    lines
                        .take(FOLD_SHOW)
                        .map(|l| chips::prompt_line(l, &entry.mentions, theme)),
                );
                let hidden = entry.text.trim_end_matches('\n').split('\n').count() - FOLD_SHOW;
                raw.push(Line::styled(
                    format!(
                        "⋯ {} more lines (Enter in the conversation shows them)",
                        paste::thousands(hidden)
                    ),
                    theme.muted,
                ));
            } else {
                raw.extend(lines.map(|l| chips::prompt_line(l, &entry.mentions, theme)));
            }
        }
        EntryKind::Assistant => {
            let mut lines = wrap::wrap_line(&Line::styled("◆ MiniClaw", theme.assistant), width);
            lines.extend(entry.markdown.get_or_insert_default().lines(
                &entry.text,
                entry.done,
                width.max(1),
                theme,
            ));
            if entry.interrupted {
                let note = Line::styled(interrupted_note(entry), theme.warning);
                lines.extend(wrap::wrap_line(&note, width));
            }
            lines.push(Line::default());
            return lines;
        }
        EntryKind::Error => {
            for (i, l) in entry.text.split('\n').enumerate() {
                let prefix = if i == 0 { "✗ " } else { "  " };
                raw.push(Line::styled(format!("{prefix}{l}"), theme.error));
            }
        }
        EntryKind::Thought => {
            for (i, l) in entry.text.split('\n').enumerate() {
                let prefix = if i == 0 { "◇ " } else { "  " };
                raw.push(Line::from(vec![
                    Span::styled(prefix, theme.muted),
                    Span::styled(l.to_string(), theme.muted),
                ]));
            }
        }
        EntryKind::Call => {
            if let Some(call) = &entry.call {
                raw.push(call_line(call, width, theme));
                raw.extend(preview_lines(call, entry.expanded, theme));
            }
        }
        EntryKind::Diff => {
            raw.extend(
                entry
                    .text
                    .lines()
                    .map(|l| Line::styled(l.to_string(), super::approval::diff_style(l, theme))),
            );
        }
        EntryKind::Plan => {
            if let Some(plan) = &entry.plan {
                raw.extend(super::plan::block_lines(plan, width, theme));
            }
        }
        EntryKind::Reasoning => {
            raw.push(thinking_line(entry, None, theme));
            if entry.expanded {
                // Rendered as markdown, indented under its line.
                let room = width.saturating_sub(2).max(1);
                // The model's text: escapes go whole (also one split between two deltas).
                let source = crate::terminal_text::clean(&entry.text);
                let text = entry.markdown.get_or_insert_default().lines(
                    &source,
                    entry.thinking.ended,
                    room,
                    theme,
                );
                raw.extend(text.into_iter().map(|mut l| {
                    l.spans.insert(0, Span::raw("  "));
                    l
                }));
            }
        }
        EntryKind::PlanItem => {
            raw.push(Line::styled(format!("▶ {}", entry.text), theme.accent));
        }
        EntryKind::Compaction => {
            let mut spans = vec![
                Span::styled("\u{21e3} ", theme.accent),
                Span::styled(entry.headline.clone().unwrap_or_default(), theme.muted),
            ];
            if !entry.expanded {
                spans.push(Span::styled(" · Enter shows the summary", theme.muted));
            }
            raw.push(Line::from(spans));
            if entry.expanded {
                let room = width.saturating_sub(2).max(1);
                // Written by the model: escapes go whole.
                let source = crate::terminal_text::clean(&entry.text);
                let text = entry
                    .markdown
                    .get_or_insert_default()
                    .lines(&source, true, room, theme);
                raw.extend(text.into_iter().map(|mut l| {
                    l.spans.insert(0, Span::raw("  "));
                    l
                }));
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
    // A notice's bullets and fields (/status, /jobs, /permissions) wrap under their text.
    let mut lines: Vec<Line<'static>> = match entry.kind {
        EntryKind::Notice => raw
            .iter()
            .flat_map(|l| wrap::wrap_hanging(l, width))
            .collect(),
        _ => wrap::wrap_lines(raw.iter(), width),
    };
    if entry.gap {
        lines.push(Line::default());
    }
    lines
}

/// `✻ Thinking… 5 s` while a step's reasoning streams (the seconds as of `now`; drawn with
/// the frame's time over the cached `0 s`), `✻ Thought for 5 s` once it ended, `✻ Thought` for
/// a saved session's, which keeps no timing.
fn thinking_line(entry: &Entry, now: Option<Instant>, theme: &Theme) -> Line<'static> {
    let t = &entry.thinking;
    let label = match (t.ended, t.took, t.started) {
        (true, Some(took), _) => format!("Thought for {} s", took.as_secs()),
        (true, None, _) => "Thought".to_string(),
        (false, _, Some(at)) => {
            let secs = now.map_or(0, |now| now.saturating_duration_since(at).as_secs());
            format!("Thinking\u{2026} {secs} s")
        }
        (false, _, None) => "Thinking\u{2026}".to_string(),
    };
    let mut spans = vec![
        Span::styled("\u{273b} ", theme.accent),
        Span::styled(label, theme.reasoning),
    ];
    if !entry.expanded && !entry.text.trim().is_empty() {
        spans.push(Span::styled(" (Enter shows it)", theme.muted));
    }
    Line::from(spans)
}

/// Whether `entry` is a reasoning line still counting its seconds.
fn counting(entry: &Entry) -> bool {
    entry.kind == EntryKind::Reasoning && !entry.thinking.ended && entry.thinking.started.is_some()
}

/// The spinner frames of a running call (drawn over the placeholder when the frame is drawn).
const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// Longest failure reason shown on a call line.
const REASON_WIDTH: usize = 48;

/// `  ⚙ name(summary) ✓ 3 ms`: one line, the summary cut so the whole fits `width`.
fn call_line(call: &CallLine, width: usize, theme: &Theme) -> Line<'static> {
    let (mut status, style) = match &call.status {
        CallStatus::Running => (SPINNER[0].to_string(), theme.warning),
        CallStatus::Done(Some(d)) => (format!("✓ {}", duration_text(*d)), theme.success),
        CallStatus::Done(None) => ("✓".to_string(), theme.success),
        CallStatus::Approved(Some(d)) => {
            (format!("✓ approved · {}", duration_text(*d)), theme.success)
        }
        CallStatus::Approved(None) => ("✓ approved".to_string(), theme.success),
        CallStatus::Failed(reason) => (
            format!("✗ {}", wrap::truncate(reason, REASON_WIDTH)),
            theme.error,
        ),
        CallStatus::Exited(exit, took) => match took {
            Some(d) => (format!("✗ {exit} · {}", duration_text(*d)), theme.error),
            None => (format!("✗ {exit}"), theme.error),
        },
    };
    if let (Some(by), CallStatus::Done(_) | CallStatus::Exited(..)) =
        (&call.allowed_by, &call.status)
    {
        status = format!("{status} · {by}");
    }
    // "  ⚙ " + name + "(" + summary + ") " + status
    let fixed = 4 + wrap::width(&call.name) + 3 + wrap::width(&status);
    let room = width.saturating_sub(fixed).max(8);
    let label = calls::label(&call.name, &call.arguments, room);
    Line::from(vec![
        Span::styled("  ⚙ ", theme.accent),
        Span::styled(label, theme.muted),
        Span::raw(" "),
        Span::styled(status, style),
    ])
}

/// `3 ms`, `1.2 s`, `2 m 5 s`.
fn duration_text(d: std::time::Duration) -> String {
    let ms = d.as_millis();
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", d.as_secs_f64()),
        _ => format!("{} m {} s", ms / 60_000, (ms / 1_000) % 60),
    }
}

/// A prompt longer than this many lines is folded in the conversation.
const FOLD_AT: usize = 12;

/// Lines of a folded prompt that stay shown.
const FOLD_SHOW: usize = 6;

/// Lines of a call's result shown under its call line while folded.
const PREVIEW_SHOW: usize = 3;

/// Lines of a call's file change shown under its call line while folded (after its header).
const DIFF_SHOW: usize = 6;

/// What is shown under a finished call: the change it made to a file as a coloured diff, or
/// its result's dimmed lines; folded to the first ones unless expanded.
fn preview_lines(call: &CallLine, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    let failed = matches!(call.status, CallStatus::Failed(_));
    match call.diffs.as_slice() {
        [] => {}
        _ if failed => {}
        // A command: its output's verdict, then each file it changed.
        diffs if calls::folds_to_its_end(&call.name) => {
            let mut out = output_lines(call, expanded, theme);
            out.extend(command_diffs(diffs, expanded, theme));
            return out;
        }
        [diff, ..] => return diff_lines(diff, expanded, theme),
    }
    output_lines(call, expanded, theme)
}

/// The most files a folded command names under its output.
const FILES_SHOW: usize = 4;

/// The files a command changed: folded, their headers (`src/lib.rs: +2 −1`), the first few;
/// expanded, every diff whole.
fn command_diffs(diffs: &[FileDiff], expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    if expanded {
        return diffs
            .iter()
            .flat_map(|d| diff_lines(d, true, theme))
            .collect();
    }
    let mut out: Vec<Line<'static>> = diffs
        .iter()
        .take(FILES_SHOW)
        .filter_map(|d| diff_lines(d, false, theme).into_iter().next())
        .collect();
    if diffs.len() > FILES_SHOW {
        let more = diffs.len() - FILES_SHOW;
        out.push(Line::styled(
            format!("  … {more} more changed files (Enter shows all)"),
            theme.muted,
        ));
    }
    out
}

/// A call's result lines, dimmed, folded to the first ones (a command's to its exit code and
/// last lines) unless expanded.
fn output_lines(call: &CallLine, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    let dim = |l: &String| Line::styled(format!("  │ {l}"), theme.muted);
    let preview = call.preview_lines();
    if expanded || preview.len() <= PREVIEW_SHOW {
        return preview.iter().map(dim).collect();
    }
    // A command's verdict is at its end (the failed assertion, the error): its first line (the
    // exit code) and its last lines are shown.
    if calls::folds_to_its_end(&call.name) {
        let mut last: Vec<&String> = preview[1..]
            .iter()
            .rev()
            .filter(|l| !l.trim().is_empty())
            .take(PREVIEW_SHOW)
            .collect();
        last.reverse();
        let mut out = vec![dim(&preview[0])];
        out.extend(more_line(preview.len() - 1 - last.len(), theme));
        out.extend(last.into_iter().map(dim));
        return out;
    }
    let mut out: Vec<Line<'static>> = preview[..PREVIEW_SHOW].iter().map(dim).collect();
    out.extend(more_line(preview.len() - PREVIEW_SHOW, theme));
    out
}

/// `  … 3 more lines (Enter shows all)`, when any are hidden.
fn more_line(more: usize, theme: &Theme) -> Option<Line<'static>> {
    (more > 0).then(|| {
        let noun = if more == 1 { "line" } else { "lines" };
        Line::styled(
            format!("  … {more} more {noun} (Enter shows all)"),
            theme.muted,
        )
    })
}

/// A file change under its call line: `hello.txt: +1 −3`, then its lines (added green, removed
/// red, context dimmed, `⋯` between changes), the first [`DIFF_SHOW`] unless expanded.
fn diff_lines(diff: &FileDiff, expanded: bool, theme: &Theme) -> Vec<Line<'static>> {
    if let Some(what) = diff.unshown {
        return vec![Line::from(vec![
            Span::styled("  │ ", theme.muted),
            Span::styled(format!("{}: ", calls::one_line(&diff.path)), theme.accent),
            Span::styled(what, theme.muted),
        ])];
    }
    let mut out = vec![Line::from(vec![
        Span::styled("  │ ", theme.muted),
        Span::styled(format!("{}: ", calls::one_line(&diff.path)), theme.accent),
        Span::styled(format!("+{}", diff.added), theme.success),
        Span::raw(" "),
        Span::styled(format!("\u{2212}{}", diff.removed), theme.error),
    ])];
    let shown = if expanded {
        diff.lines.len()
    } else {
        diff.lines.len().min(DIFF_SHOW)
    };
    for line in &diff.lines[..shown] {
        // Tool arguments are the model's text: no escape reaches the terminal.
        let text = crate::terminal_text::clean(&line.text).replace('\t', "    ");
        let (mark, style) = match line.kind {
            DiffKind::Added => ("+ ", theme.success),
            DiffKind::Removed => ("- ", theme.error),
            DiffKind::Context => ("  ", theme.muted),
            DiffKind::Gap => ("\u{22ef}", theme.muted),
        };
        out.push(Line::from(vec![
            Span::styled("  │ ", theme.muted),
            Span::styled(format!("{mark}{text}"), style),
        ]));
    }
    let hidden = diff.lines.len() - shown;
    if expanded && diff.omitted > 0 {
        out.push(Line::styled(
            format!("  … {} more changed lines not kept", diff.omitted),
            theme.muted,
        ));
    } else {
        out.extend(more_line(hidden + diff.omitted, theme));
    }
    out
}

/// Whether `entry` is a prompt long enough to be folded, or a call whose result preview is.
pub fn foldable(entry: &Entry) -> bool {
    match entry.kind {
        EntryKind::Call => entry.call.as_ref().is_some_and(|c| {
            let output = c.preview_lines().len() > PREVIEW_SHOW;
            match c.diffs.as_slice() {
                [] => output,
                diffs if calls::folds_to_its_end(&c.name) => output || !diffs.is_empty(),
                [diff, ..] => diff.lines.len() > DIFF_SHOW || diff.omitted > 0,
            }
        }),
        EntryKind::Reasoning => !entry.text.trim().is_empty(),
        EntryKind::Compaction => true,
        _ => entry.kind == EntryKind::User && entry.text.split('\n').nth(FOLD_AT).is_some(),
    }
}

/// The mark under an interrupted answer.
fn interrupted_note(entry: &Entry) -> &'static str {
    if entry.text.trim().is_empty() {
        "⏸ interrupted before the answer began"
    } else {
        "⏸ interrupted — the answer above is partial"
    }
}

/// Brings a streamed answer's lines up to date: the frozen blocks' lines are handed over once
/// (moved, not copied), only the open block's are copied again (the markdown is rendered for the
/// width, so nothing is re-wrapped).
fn incremental_lines(entry: &mut Entry, width: u16, theme: &Theme) {
    let w = width as usize;
    let note = entry.interrupted.then(|| interrupted_note(entry));
    let new_renderer = entry.markdown.is_none();
    let markdown = entry.markdown.get_or_insert_default();
    // A new renderer hands over everything it freezes: the cache starts afresh with it.
    let mut kept = markdown.update(&entry.text, entry.done, w.max(1), theme) && !new_renderer;
    let c = &mut entry.cache;
    if kept && (c.width != width || !c.incremental) {
        // The lines handed over before are not here: they are rendered again.
        markdown.restart();
        markdown.update(&entry.text, entry.done, w.max(1), theme);
        kept = false;
    }
    if !kept {
        c.lines = wrap::wrap_line(&Line::styled("◆ MiniClaw", theme.assistant), w);
        c.width = width;
        c.incremental = true;
        c.stable = c.lines.len();
    }
    c.lines.truncate(c.stable);
    c.lines.extend(markdown.take_frozen());
    c.stable = c.lines.len();
    c.lines.extend_from_slice(markdown.open());
    if let Some(note) = note {
        c.lines
            .extend(wrap::wrap_line(&Line::styled(note, theme.warning), w));
    }
    c.lines.push(Line::default());
    c.version = entry.version;
    // A finished answer's lines are all in the cache now: the renderer goes. Should the entry
    // change again, it renders afresh.
    if entry.done {
        entry.markdown = None;
    }
}

/// Screens of lines above the view that are rendered exactly at start-up; entries further up
/// are only estimated until they scroll into view, so a long history opens at once.
const EXACT_SCREENS: usize = 3;

/// A cheap guess of an entry's height at `width`: its source lines wrapped by display width,
/// plus the header and the blank line after it.
fn estimate_height(entry: &Entry, width: usize, theme: &Theme) -> usize {
    let width = width.max(1);
    if let (EntryKind::Call, Some(c)) = (entry.kind, &entry.call) {
        // The call line, its result preview as drawn (guessed while its lines are not made),
        // and the gap.
        let preview = match c.preview_len_guess(PREVIEW_SHOW + 1) {
            _ if !c.diffs.is_empty() || entry.expanded => {
                preview_lines(c, entry.expanded, theme).len()
            }
            n if n <= PREVIEW_SHOW => n,
            // Folded: the first lines and a "more" line; a command's verdict and its last ones.
            _ if calls::folds_to_its_end(&c.name) => PREVIEW_SHOW + 2,
            _ => PREVIEW_SHOW + 1,
        };
        return 1 + preview + entry.gap as usize;
    }
    let shown = if foldable(entry) && !entry.expanded {
        FOLD_SHOW + 1
    } else {
        usize::MAX
    };
    let body: usize = entry
        .text
        .split('\n')
        .take(shown)
        .map(|l| wrap::width(l).div_ceil(width).max(1))
        .sum();
    if entry.kind == EntryKind::Call {
        return 1 + entry.gap as usize;
    }
    if let Some(plan) = &entry.plan {
        return plan.items.len() + 3 + entry.gap as usize;
    }
    if matches!(entry.kind, EntryKind::Reasoning | EntryKind::Compaction) && !entry.expanded {
        return 1 + entry.gap as usize;
    }
    let header = matches!(
        entry.kind,
        EntryKind::User | EntryKind::Assistant | EntryKind::Reasoning
    ) as usize;
    header + body + entry.gap as usize
}

/// An entry's height at `width` for choosing which entries to render exactly: its rendered
/// lines when it was rendered at this width (perhaps a version ago: a live answer only grows),
/// else the estimate. Counting the lines is free; estimating a long live answer on every delta
/// would cost its whole text.
fn height_guess(entry: &Entry, width: u16, theme: &Theme) -> usize {
    let c = &entry.cache;
    if c.width == width && c.estimated.is_none() && !c.lines.is_empty() {
        c.lines.len()
    } else {
        estimate_height(entry, width as usize, theme)
    }
}

/// Renders `entry` exactly for `width` unless its cache is already exact and current.
fn measure(entry: &mut Entry, width: u16, theme: &Theme) {
    let current = entry.cache.width == width && entry.cache.version == entry.version;
    if current && entry.cache.estimated.is_none() {
        return;
    }
    if entry.kind == EntryKind::Assistant && (!entry.done || entry.cache.incremental) {
        incremental_lines(entry, width, theme);
    } else {
        let lines = entry_lines(entry, width as usize, theme);
        entry.cache = WrapCache {
            width,
            version: entry.version,
            lines,
            ..Default::default()
        };
    }
}

/// Brings the entries' caches up to date for `width` and sets the scroll size. Entries change
/// only at the end (new entries, the live answer) or all at once (cleared), so only those from
/// the first that may have changed are looked at. When many entries need work at once (a long
/// history at start, a resize), those more than a few screens above the view are estimated, and
/// rendered only when they come into view.
pub fn prepare(state: &mut State, area: Rect) {
    let inner = inner(area);
    let width = inner.width;
    let height = inner.height as usize;
    let len = state.view.entries.len();
    let idx = &mut state.view.conv_index;
    let mut start = if idx.width == width {
        idx.offsets.len().saturating_sub(1).min(len)
    } else {
        0
    };
    for live in [idx.live, state.view.live, state.view.conv_dirty.take()]
        .into_iter()
        .flatten()
    {
        start = start.min(live);
    }
    // The entry before `start` must still be the one measured (not replaced after a clear).
    if start > 0 {
        let e = &state.view.entries[start - 1];
        if e.cache.width != width || e.cache.version != e.version {
            start = 0;
        }
    }
    // From the end back, entries within a few screens are rendered; the rest may be estimated.
    let mut exact_from = len;
    let mut lines_below = 0;
    while exact_from > start && lines_below < EXACT_SCREENS * height.max(1) {
        exact_from -= 1;
        lines_below += height_guess(&state.view.entries[exact_from], width, &state.theme);
    }
    for (i, entry) in state.view.entries.iter_mut().enumerate().skip(start) {
        let current = entry.cache.width == width && entry.cache.version == entry.version;
        if i >= exact_from {
            measure(entry, width, &state.theme);
        } else if !current {
            entry.cache = WrapCache {
                width,
                version: entry.version,
                estimated: Some(estimate_height(entry, width as usize, &state.theme)),
                ..Default::default()
            };
        }
    }
    rebuild_offsets(state, start, width);
    state.view.conv_index.live = state.view.live;
    state.scroll[Pane::Conversation].resize(state.view.conv_index.total(), height);
    // Estimated entries that are now in view are rendered, and the offsets fixed from there;
    // a few rounds settle it, since each only makes heights exact.
    for _ in 0..4 {
        let top = state.scroll[Pane::Conversation].effective_top();
        let offsets = &state.view.conv_index.offsets;
        let first = offsets.partition_point(|&o| o <= top).saturating_sub(1);
        let last = offsets
            .partition_point(|&o| o < top + height.max(1))
            .min(len);
        let unrendered: Vec<usize> = (first..last)
            .filter(|&i| state.view.entries[i].cache.estimated.is_some())
            .collect();
        let Some(&from) = unrendered.first() else {
            break;
        };
        for i in unrendered {
            measure(&mut state.view.entries[i], width, &state.theme);
        }
        rebuild_offsets(state, from, width);
        state.scroll[Pane::Conversation].resize(state.view.conv_index.total(), height);
    }
}

/// Renders every entry laid out in `area` that is only estimated, and fixes the offsets: what
/// find in the conversation needs to see every line as drawn.
pub fn measure_all(state: &mut State, area: Rect) {
    let width = inner(area).width;
    let Some(from) = state
        .view
        .entries
        .iter()
        .position(|e| e.cache.estimated.is_some())
    else {
        return;
    };
    for entry in &mut state.view.entries[from..] {
        measure(entry, width, &state.theme);
    }
    rebuild_offsets(state, from, width);
    let height = inner(area).height as usize;
    state.scroll[Pane::Conversation].resize(state.view.conv_index.total(), height);
}

/// Recomputes the line offsets of entries from `from` on.
fn rebuild_offsets(state: &mut State, from: usize, width: u16) {
    let idx = &mut state.view.conv_index;
    idx.width = width;
    idx.offsets.truncate(from + 1);
    if idx.offsets.is_empty() {
        idx.offsets.push(0);
    }
    for entry in &state.view.entries[from..] {
        let last = idx.offsets.last().copied().unwrap_or(0);
        idx.offsets.push(last + entry.cache.height());
    }
}

/// The spinner frame at `now` (it turns every 100 ms while a turn runs).
fn spinner(state: &State, now: Instant) -> &'static str {
    let elapsed = state
        .status
        .since()
        .map_or(0, |t| now.saturating_duration_since(t).as_millis());
    SPINNER[(elapsed / 100) as usize % SPINNER.len()]
}

/// Draws the visible part of the conversation.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect, now: Instant) {
    let scroll = &state.scroll[Pane::Conversation];
    let title = match &state.view.session_title {
        Some(name) => format!("Conversation · {name}"),
        None => "Conversation".into(),
    };
    let block = pane_block(state, title, Focus::Conversation, Some(scroll), area.width);
    let height = inner(area).height as usize;
    let top = scroll.effective_top();
    // The entry holding the top line, found by binary search over the offsets.
    let offsets = &state.view.conv_index.offsets;
    let first = offsets.partition_point(|&o| o <= top).saturating_sub(1);
    let mut skip = top - offsets.get(first).copied().unwrap_or(0).min(top);
    let text_area = block.inner(area);
    frame.render_widget(block, area);
    let buf = frame.buffer_mut();
    let mut rows = (text_area.top()..text_area.bottom()).take(height);
    'entries: for entry in state.view.entries.iter().skip(first) {
        let n = entry.cache.height();
        if skip >= n {
            skip -= n;
            continue;
        }
        // `prepare` renders what is in view; an estimate left here is drawn blank.
        if let Some(blank) = entry.cache.estimated {
            for _ in skip..blank {
                if rows.next().is_none() {
                    break 'entries;
                }
            }
            skip = 0;
            continue;
        }
        let running = entry
            .call
            .as_ref()
            .is_some_and(|c| c.status == CallStatus::Running);
        for (i, line) in entry.cache.lines.iter().enumerate().skip(skip) {
            let Some(y) = rows.next() else {
                break 'entries;
            };
            // A running call's spinner and a reasoning line's seconds move with time; the
            // cached line holds their first frame.
            if i == 0 && counting(entry) {
                let line = thinking_line(entry, Some(now), &state.theme);
                put_line(buf, text_area.x, y, &line, text_area.width);
            } else if running && i == 0 && !line.spans.is_empty() {
                let mut line = line.clone();
                if let Some(span) = line.spans.last_mut() {
                    span.content = spinner(state, now).into();
                }
                put_line(buf, text_area.x, y, &line, text_area.width);
            } else {
                put_line(buf, text_area.x, y, line, text_area.width);
            }
        }
        skip = 0;
    }
    if state.view.entries.is_empty() {
        let hint = Line::styled(
            "Type a prompt below and press Enter. F1 shows every key.",
            state.theme.muted,
        );
        put_line(buf, text_area.x, text_area.y, &hint, text_area.width);
    }
}
