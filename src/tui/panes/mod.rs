//! One drawing function per pane; each reads the state and never changes it.

pub mod conversation;
pub mod dialog;
pub mod help;
pub mod input;
pub mod reasoning;
pub mod status;
pub mod timeline;
pub mod tool_output;
pub mod wrap_cache;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use super::state::{Focus, Scroll, State};

/// A pane's bordered block: accent border when focused, a marker when more is below. Titles are
/// cut to fit inside the corners of a pane `width` columns wide.
pub fn pane_block<'a>(
    state: &State,
    title: String,
    focus: Focus,
    scroll: Option<&Scroll>,
    width: u16,
) -> Block<'a> {
    let room = usize::from(width).saturating_sub(4);
    let title = crate::tui::wrap::truncate(&title, room);
    let focused = state.focus == focus;
    let theme = &state.theme;
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(if focused {
            BorderType::Thick
        } else {
            BorderType::Rounded
        })
        .border_style(if focused {
            theme.border_focused
        } else {
            theme.border
        })
        .title(Span::styled(
            format!(" {title} "),
            if focused { theme.accent } else { theme.muted },
        ));
    if let Some(s) = scroll.filter(|s| s.more_below()) {
        let hidden = s.max_top() - s.effective_top();
        let marker = crate::tui::wrap::truncate(&format!("▼ {hidden} more below (End)"), room);
        block =
            block.title_bottom(Line::styled(format!(" {marker} "), theme.warning).right_aligned());
    }
    block
}

/// The area inside a pane's border.
pub fn inner(area: Rect) -> Rect {
    Rect {
        x: area.x.saturating_add(1),
        y: area.y.saturating_add(1),
        width: area.width.saturating_sub(2),
        height: area.height.saturating_sub(2),
    }
}

/// Draws pre-wrapped `lines` in a bordered pane, from the scroll position.
pub fn draw_lines(
    frame: &mut Frame<'_>,
    area: Rect,
    block: Block<'_>,
    lines: &[Line<'static>],
    scroll: &Scroll,
) {
    let top = scroll.effective_top().min(lines.len());
    let height = inner(area).height as usize;
    let visible: Vec<Line<'static>> = lines[top..].iter().take(height).cloned().collect();
    frame.render_widget(Paragraph::new(visible).block(block), area);
}

/// Helpers for the panes' cache tests: a state, events, and drawing the screen with the caches
/// as they are or from scratch.
#[cfg(test)]
pub(crate) mod test_support {
    use std::time::Instant;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::buffer::Buffer;
    use ratatui::layout::Rect;

    use crate::agent::AgentEvent;
    use crate::llm::Preset;
    use crate::tui::keymap::Action;
    use crate::tui::state::State;
    use crate::tui::{Theme, TuiOptions, layout, update, view};

    /// A state with a turn started (as after sending a prompt).
    pub fn busy_state() -> State {
        let mut s = State::new(&TuiOptions {
            workspace: "/home/me/project".into(),
            preset: Preset::Pro,
            max_steps: 10,
            mouse: true,
            theme: Theme::dark(),
            notices: vec![],
            tools: vec![],
        });
        s.set_input("think hard");
        update::apply(&mut s, Action::Send, Instant::now());
        s
    }

    /// Applies agent events.
    pub fn feed(state: &mut State, events: impl IntoIterator<Item = AgentEvent>) {
        for e in events {
            update::on_event(state, e, Instant::now());
        }
    }

    /// Lays out and draws the screen at `width` × `height` with the caches as they are.
    pub fn draw(state: &mut State, width: u16, height: u16, now: Instant) -> Buffer {
        let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
        layout::prepare(state, Rect::new(0, 0, width, height));
        term.draw(|f| view::draw(f, state, now)).unwrap();
        term.backend().buffer().clone()
    }

    /// Draws the screen with the caches, then with the reasoning and tool output caches
    /// forgotten, and checks that both are the same; the caches are put back (so later frames
    /// keep extending them).
    pub fn assert_cached_equals_fresh(state: &mut State, width: u16, height: u16) -> Buffer {
        let now = Instant::now();
        let cached = draw(state, width, height, now);
        let reasoning = std::mem::take(&mut state.side.reasoning);
        let tool_output = std::mem::take(&mut state.side.tool_output);
        let fresh = draw(state, width, height, now);
        if cached != fresh {
            let diff: Vec<(u16, u16)> = cached
                .content
                .iter()
                .zip(&fresh.content)
                .enumerate()
                .filter(|(_, (a, b))| a != b)
                .map(|(i, _)| cached.pos_of(i))
                .take(10)
                .collect();
            panic!("the cached screen differs from a fresh one at (x, y) {diff:?}");
        }
        state.side.reasoning = reasoning;
        state.side.tool_output = tool_output;
        cached
    }
}
