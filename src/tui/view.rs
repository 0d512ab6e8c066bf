//! Drawing a frame from the state (after [`super::layout::prepare`]); never changes the state.

use std::time::Instant;

use ratatui::Frame;
use ratatui::text::Line;
use ratatui::widgets::{Paragraph, Wrap};

use super::layout::{MIN_HEIGHT, MIN_WIDTH};
use super::panes::{
    Caches, approval, conversation, dialog, help, input, key_dialog, picker, popup, reasoning,
    status, timeline, tool_output,
};
use super::state::{Overlay, State};

/// Draws every pane and the open overlay; `now` drives the spinner and elapsed time.
pub fn draw(frame: &mut Frame<'_>, state: &State, caches: &Caches, now: Instant) {
    let a = &state.areas;
    if a.too_small {
        let text = vec![
            Line::styled("Terminal too small", state.theme.error),
            Line::raw(format!(
                "MiniClaw needs at least {MIN_WIDTH}×{MIN_HEIGHT}; this one is {}×{}.",
                a.screen.width, a.screen.height
            )),
            Line::raw("Enlarge the window, or press Ctrl+D to quit."),
        ];
        frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), frame.area());
        return;
    }
    conversation::draw(frame, state, a.conversation, now);
    super::find::highlight(frame, state, a.conversation);
    if let Some(r) = a.timeline {
        timeline::draw(frame, state, caches, r);
    }
    if let Some(r) = a.reasoning {
        reasoning::draw(frame, state, caches, r);
    }
    if let Some(r) = a.tool_output {
        tool_output::draw(frame, state, caches, r);
    }
    input::draw(frame, state, a.input);
    status::draw(frame, state, a.status, now);
    popup::draw(frame, state, a.conversation);
    match state.overlay {
        Overlay::Help { .. } => help::draw(frame, state, a.screen),
        Overlay::ConfirmClear | Overlay::ConfirmUndo => dialog::draw(frame, state, a.screen),
        Overlay::Picker(_) => picker::draw(frame, state, a.conversation),
        Overlay::Approval => approval::draw(frame, state, a.screen),
        Overlay::Key(_) => key_dialog::draw(frame, state, a.screen),
        Overlay::None => {}
    }
}
