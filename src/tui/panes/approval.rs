//! The approval dialog: what the call does and to what (`Write big0.txt?`), the diff it would
//! make first (coloured, scrollable), a file tool's raw arguments folded away until asked for,
//! and the keys, wrapped on a narrow screen; or the line where the reason for a no is typed.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use super::dialog::centered;
use crate::tui::calls;
use crate::tui::state::{ApprovalView, State, codes_shown};
use crate::tui::theme::Theme;
use crate::tui::wrap::{self, truncate, wrap_line};

/// What the dialog says the call does, and to what: `Write big0.txt`, `Edit src/a.rs`, else
/// `Run <tool>`.
pub fn action(request: &crate::approval::ApprovalRequest) -> String {
    let path = serde_json::from_str::<serde_json::Value>(&request.arguments)
        .ok()
        .and_then(|v| v.get("relative_path")?.as_str().map(str::to_string));
    let verb = match request.name.as_str() {
        "write_text_file" => Some("Write"),
        "append_text_file" | "replace_text_in_file" => Some("Edit"),
        _ => None,
    };
    if let Some(command) = &request.command {
        return if command.network {
            "Run a command WITH INTERNET ACCESS".into()
        } else {
            "Run a command".into()
        };
    }
    match (verb, path) {
        // The model's text: one line, no control characters.
        (Some(verb), Some(path)) => format!("{verb} {}", calls::one_line(&path)),
        _ => format!("Run {}", request.name),
    }
}

/// The key hints: the answers (the prefixes "don't ask again" would add, when offered; no yes
/// for the session for a command with the network), the arguments' key when they fold, the
/// interrupt.
fn hints(view: &ApprovalView) -> Vec<String> {
    let mut hints = vec!["y yes".to_string()];
    if let Some(prefixes) = view.offered_prefixes() {
        hints.push(format!(
            "p yes, and don't ask again here for `{}` (editable)",
            codes_shown(&prefixes)
        ));
    }
    if !view.request.command.as_ref().is_some_and(|c| c.network) {
        hints.push("a yes to this tool for the session".into());
    }
    hints.push("n or Esc no, then a reason".into());
    if view.arguments_foldable() {
        hints.push(
            if view.arguments_shown {
                "v hides the arguments"
            } else {
                "v shows the arguments"
            }
            .into(),
        );
    }
    hints.push("Ctrl+C stop".into());
    hints
}

/// Draws the first waiting call's dialog over `area`.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let Some(view) = state.approvals.first() else {
        return;
    };
    let theme = &state.theme;
    let request = &view.request;
    let body = &view.lines;
    let width = area.width.saturating_sub(6).max(30);
    let inner_width = usize::from(width.saturating_sub(2));
    // The keys wrap rather than being cut: on a narrow screen they take more rows.
    let footer = footer(view, &hints(view), inner_width, theme);
    let footer_rows = u16::try_from(footer.len()).unwrap_or(u16::MAX);
    // As tall as the body needs wrapped, with the borders, the scroll marker and the keys.
    let body_rows: usize = heights(body, inner_width).iter().sum();
    let wanted = u16::try_from(body_rows)
        .unwrap_or(u16::MAX)
        .saturating_add(3 + footer_rows);
    let rect = centered(
        area,
        width,
        wanted.clamp(8, area.height.saturating_sub(4).max(8)),
    );
    let count = if request.of > 1 {
        format!(" ({} of {})", request.position, request.of)
    } else {
        String::new()
    };
    let title = truncate(&format!(" {}{count}? ", action(request)), inner_width);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.warning)
        .title(Span::styled(title, theme.accent));
    let rows = usize::from(rect.height.saturating_sub(3 + footer_rows));
    let (mut lines, hidden) = visible(body, view.scroll, rows, inner_width, theme);
    lines.resize(rows, Line::raw(""));
    lines.push(Line::styled(
        if hidden > 0 {
            format!("▼ {hidden} more lines (↑↓ PageUp PageDown)")
        } else {
            String::new()
        },
        theme.muted,
    ));
    lines.extend(footer);
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// The body's lines wrapped to `width` (never cut: what is approved is what was shown), from
/// wrapped line `scroll` on, at most `rows` of them; and how many wrapped lines are below.
fn visible(
    body: &[String],
    scroll: usize,
    rows: usize,
    width: usize,
    theme: &Theme,
) -> (Vec<Line<'static>>, usize) {
    let width = width.max(1);
    let heights = heights(body, width);
    let total: usize = heights.iter().sum();
    let top = scroll.min(total.saturating_sub(rows.max(1)));
    let mut skip = top;
    let mut out = Vec::with_capacity(rows);
    for (line, height) in body.iter().zip(&heights) {
        if out.len() >= rows {
            break;
        }
        if skip >= *height {
            skip -= height;
            continue;
        }
        // Only the lines in view are wrapped: a long file's content costs nothing off screen.
        let styled = Line::styled(line.clone(), diff_style(line, theme));
        let room = rows - out.len();
        out.extend(wrap_line(&styled, width).into_iter().skip(skip).take(room));
        skip = 0;
    }
    (out, total.saturating_sub(top + rows))
}

/// How many rows each body line takes wrapped to `width`.
fn heights(body: &[String], width: usize) -> Vec<usize> {
    let width = width.max(1);
    body.iter()
        .map(|l| crate::tui::wrap::width(l).div_ceil(width).max(1))
        .collect()
}

/// The hints packed into rows of at most `width` columns, broken only between two hints (a
/// hint wider than a row is wrapped on its own).
fn packed(hints: &[String], width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut rows: Vec<String> = Vec::new();
    for hint in hints {
        match rows.last_mut() {
            Some(row) if wrap::width(row) + 3 + wrap::width(hint) <= width => {
                row.push_str(" · ");
                row.push_str(hint);
            }
            _ => rows.push(hint.clone()),
        }
    }
    rows.iter()
        .flat_map(|r| wrap_line(&Line::styled(r.clone(), theme.accent), width.max(1)))
        .collect()
}

/// A diff line's colour: added, removed, hunk header; the rest plain.
pub fn diff_style(line: &str, theme: &Theme) -> Style {
    if line.starts_with("+++") || line.starts_with("---") {
        theme.muted
    } else if line.starts_with('+') {
        theme.success
    } else if line.starts_with('-') {
        theme.error
    } else if line.starts_with("@@") {
        theme.accent
    } else {
        theme.text
    }
}

/// The keys, wrapped to `width`, or the reason being typed, or the prefixes being edited.
fn footer(
    view: &ApprovalView,
    hints: &[String],
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    if let Some(prefix) = &view.prefix {
        return prefix_editor(
            &prefix.text(),
            prefix.cursor(),
            view.prefix_problem.as_deref(),
            width,
            theme,
        );
    }
    match view.reason.as_deref() {
        Some(reason) => vec![Line::from(vec![
            Span::styled("Why not? (Enter sends, may be empty) ", theme.warning),
            Span::styled(
                truncate(&format!("{reason}▏"), width.saturating_sub(38)),
                theme.text,
            ),
        ])],
        None => packed(hints, width, theme),
    }
}

/// `head` (ending in the cursor) then `tail` in `room` columns: all of it when it fits, else
/// cut with `…` on either side so the cursor stays in view (with the text just before it).
fn window(head: &str, tail: &str, room: usize) -> String {
    if wrap::width(head) + wrap::width(tail) <= room {
        return format!("{head}{tail}");
    }
    // The cursor's side of the text: half the row when text follows, else all of it.
    let keep = if tail.is_empty() { room } else { room / 2 }.max(2);
    let mut kept: Vec<char> = Vec::new();
    let mut used = 0;
    let cut_head = wrap::width(head) > keep;
    for c in head.chars().rev() {
        let w = wrap::width(c.encode_utf8(&mut [0; 4]));
        if used + w + usize::from(cut_head) > keep {
            break;
        }
        used += w;
        kept.push(c);
    }
    let mut out: String = if cut_head {
        "…".to_string()
    } else {
        String::new()
    };
    out.extend(kept.into_iter().rev());
    used += usize::from(cut_head);
    let rest = room.saturating_sub(used);
    if wrap::width(tail) <= rest {
        out.push_str(tail);
    } else {
        out.push_str(&wrap::truncate(tail, rest));
    }
    out
}

/// The one-line editor of the prefixes: what they do, the text with its cursor (its end shown
/// when it is longer than the row), and why the text is not a rule when Enter found so.
fn prefix_editor(
    prefix: &str,
    cursor: usize,
    problem: Option<&str>,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(problem) = problem {
        lines.extend(wrap_line(
            &Line::styled(calls::one_line(problem), theme.error),
            width.max(1),
        ));
    }
    lines.extend(wrap_line(
        &Line::styled(
            "Don't ask again in this project for commands starting with (`;` between two; \
             Enter adds them and says yes, Esc goes back):",
            theme.warning,
        ),
        width.max(1),
    ));
    let before: String = prefix.chars().take(cursor).collect();
    let after: String = prefix.chars().skip(cursor).collect();
    let head = format!("{}▏", codes_shown(&before));
    let tail = codes_shown(&after);
    let room = width.saturating_sub(2).max(1);
    let shown = window(&head, &tail, room);
    lines.push(Line::from(vec![
        Span::styled("> ", theme.accent),
        Span::styled(shown, theme.text),
    ]));
    lines
}
