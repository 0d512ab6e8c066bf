//! Find in the conversation (Ctrl+F, `/find`): the layout pass finds the matches in the lines
//! as drawn, and scrolls the current one into view; drawing marks them over the drawn pane.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};

use super::panes::{conversation, inner};
use super::smartcase;
use super::state::{Hit, Pane, State};
use super::wrap::width;

/// Finds the open find's matches in the conversation laid out in `area` (every entry drawn,
/// not estimated, so none is missed), and scrolls to the current one when it moved.
pub fn locate(state: &mut State, area: Rect) {
    let Some(query) = state.find.as_ref().map(|f| f.query.clone()) else {
        return;
    };
    conversation::measure_all(state, area);
    let offsets = &state.view.conv_index.offsets;
    let mut hits = Vec::new();
    for (i, entry) in state.view.entries.iter().enumerate() {
        let base = offsets.get(i).copied().unwrap_or(0);
        for (j, line) in entry.cache.lines.iter().enumerate() {
            let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
            for range in smartcase::find_all(&text, &query) {
                hits.push(Hit {
                    line: base + j,
                    column: clamp16(width(&text[..range.start])),
                    width: clamp16(width(&text[range])),
                });
            }
        }
    }
    let Some(find) = state.find.as_mut() else {
        return;
    };
    find.set_hits(hits);
    if !std::mem::take(&mut find.reveal) {
        return;
    }
    let Some(hit) = find.current.and_then(|i| find.hits.get(i)).copied() else {
        return;
    };
    // The match a third of the way down, so what leads to it shows too.
    let scroll = &mut state.scroll[Pane::Conversation];
    let top = hit
        .line
        .saturating_sub(scroll.height / 3)
        .min(scroll.max_top());
    scroll.top = top;
    scroll.follow = top >= scroll.max_top();
}

fn clamp16(n: usize) -> u16 {
    u16::try_from(n).unwrap_or(u16::MAX)
}

/// Marks the matches in view over the drawn conversation in `area`: each reversed, the current
/// one also bold and underlined (so it shows without colour too).
pub fn highlight(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let Some(find) = &state.find else {
        return;
    };
    let inside = inner(area);
    let top = state.scroll[Pane::Conversation].effective_top();
    for (i, hit) in find.hits.iter().enumerate() {
        let Some(row) = hit.line.checked_sub(top) else {
            continue;
        };
        if row >= usize::from(inside.height) || hit.column >= inside.width {
            continue;
        }
        let mut style = Style::default().add_modifier(Modifier::REVERSED);
        if find.current == Some(i) {
            style = style.add_modifier(Modifier::BOLD | Modifier::UNDERLINED);
        }
        let rect = Rect {
            x: inside.x + hit.column,
            y: inside.y + row as u16,
            width: hit.width.min(inside.width - hit.column),
            height: 1,
        };
        frame.buffer_mut().set_style(rect, style);
    }
}
