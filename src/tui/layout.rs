//! The layout pass: where each pane goes for the terminal size, and the caches drawing reads
//! (wrapped lines, scroll sizes). Runs before each frame; drawing then only reads the state.

use ratatui::layout::{Constraint, Layout, Rect};

use super::panes::{Caches, conversation, input, reasoning, timeline, tool_output};
use super::state::{Areas, State};

/// The smallest usable terminal.
pub const MIN_WIDTH: u16 = 30;
/// The smallest usable terminal height.
pub const MIN_HEIGHT: u16 = 10;
/// From this width on, the timeline sits beside the conversation.
pub const WIDE: u16 = 100;

/// The least height of the panes' area (the screen less the input and the status line) for
/// the side panes to stack under the conversation: a 24-row terminal, not a 20-row one.
pub const STACKED_MIN_HEIGHT: u16 = 20;

/// Computes the pane areas for `screen`.
pub fn areas(state: &State, screen: Rect) -> Areas {
    let mut a = Areas {
        screen,
        ..Default::default()
    };
    if screen.width < MIN_WIDTH || screen.height < MIN_HEIGHT {
        a.too_small = true;
        return a;
    }
    let input_h = input::height(state).min(screen.height / 3).max(3);
    let [main, input_area, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(input_h),
        Constraint::Length(1),
    ])
    .areas(screen);
    a.input = input_area;
    a.status = status;
    let show_reasoning = state.show_reasoning && reasoning::has_content(state);
    let show_tool = tool_output::has_content(state);
    let wide = screen.width >= WIDE;
    // Stacked in a short terminal, the side panes would leave the conversation a few rows (at
    // 60×20 it had 6 while the timeline kept its 6): below this height they hide, as they do by
    // width (F3 still toggles them once there is room).
    let cramped = !wide && main.height < STACKED_MIN_HEIGHT;
    if state.side_collapsed || cramped || (!wide && state.view.transcript.steps.is_empty()) {
        a.conversation = main;
        return a;
    }
    let (conv, side) = if wide {
        let [c, s] = Layout::horizontal([Constraint::Percentage(60), Constraint::Percentage(40)])
            .areas(main);
        (c, s)
    } else {
        let [c, s] = Layout::vertical([Constraint::Min(3), Constraint::Percentage(45)]).areas(main);
        (c, s)
    };
    a.conversation = conv;
    let mut panes = vec![Constraint::Fill(4)];
    if show_reasoning {
        panes.push(Constraint::Fill(3));
    }
    if show_tool {
        panes.push(Constraint::Fill(3));
    }
    let rects = if wide {
        Layout::vertical(panes).split(side)
    } else {
        Layout::horizontal(panes).split(side)
    };
    let mut it = rects.iter().copied();
    a.timeline = it.next();
    if show_reasoning {
        a.reasoning = it.next();
    }
    if show_tool {
        a.tool_output = it.next();
    }
    a
}

/// Lays out the screen and refreshes every cache drawing needs.
pub fn prepare(state: &mut State, caches: &mut Caches, screen: Rect) {
    state.areas = areas(state, screen);
    if state.areas.too_small {
        return;
    }
    if !state.focusable().contains(&state.focus) {
        state.focus = super::state::Focus::Input;
    }
    conversation::prepare(state, state.areas.conversation);
    super::find::locate(state, state.areas.conversation);
    if let Some(r) = state.areas.timeline {
        timeline::prepare(state, caches, r);
    }
    if let Some(r) = state.areas.reasoning {
        reasoning::prepare(state, caches, r);
    }
    if let Some(r) = state.areas.tool_output {
        tool_output::prepare(state, caches, r);
    }
}
