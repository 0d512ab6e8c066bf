//! The UI without a terminal, for benchmarks and tools: its state driven by prompts, keys and
//! agent events, laid out and drawn into any ratatui backend. The rest of the UI is
//! crate-private; this is its public face besides [`super::run`].

use std::time::Instant;

use crossterm::event::KeyEvent;
use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::layout::Rect;
use ratatui::text::Line;

use super::state::{FileBatch, State};
use super::{Theme, TuiOptions, keymap, layout, markdown, panes, update, view, wrap};
use crate::agent::{AgentEvent, Session};

/// The UI's state with the operations the event loop performs on it.
pub struct Screen {
    state: State,
    caches: panes::Caches,
}

impl Screen {
    /// The screen at start, showing the notices of `options`.
    pub fn new(options: &TuiOptions) -> Self {
        Self {
            state: State::new(options),
            caches: panes::Caches::default(),
        }
    }

    /// Types `text` into the input and presses Enter.
    pub fn send(&mut self, text: &str, now: Instant) {
        self.state.composer.set_input(text);
        update::apply(&mut self.state, keymap::Action::Send, now);
    }

    /// Presses a key.
    pub fn key(&mut self, key: KeyEvent, now: Instant) {
        let ctx = update::key_context(&self.state, now);
        let action = keymap::map_key(&ctx, key);
        update::apply(&mut self.state, action, now);
    }

    /// Applies an agent event.
    pub fn event(&mut self, event: AgentEvent, now: Instant) {
        let _ = update::on_event(&mut self.state, event, now);
    }

    /// Applies a batch of the `@` popup's file listing.
    pub fn files(&mut self, batch: FileBatch, now: Instant) {
        update::on_files(&mut self.state, batch, now);
    }

    /// The listing of workspace files the `@` popup waits for, while one is under way.
    pub fn listing(&self) -> Option<u64> {
        let files = &self.state.composer.files;
        files.listing.then_some(files.generation)
    }

    /// The rows the completion popup shows (none while it is closed).
    pub fn popup_rows(&self) -> Vec<String> {
        self.state
            .composer
            .popup
            .iter()
            .flat_map(|p| p.rows.iter().map(|r| r.choice.label.clone()))
            .collect()
    }

    /// Shows a saved session as it was seen live.
    pub fn show_session(&mut self, session: &Session, now: Instant) {
        update::show_session(&mut self.state, session, now);
    }

    /// Lays the panes out for `area` and brings their caches up to date.
    pub fn prepare(&mut self, area: Rect) {
        layout::prepare(&mut self.state, &mut self.caches, area);
    }

    /// Lays out and draws a whole frame.
    pub fn draw<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        now: Instant,
    ) -> Result<(), B::Error> {
        let (state, caches) = (&mut self.state, &mut self.caches);
        terminal.draw(|f| {
            layout::prepare(state, caches, f.area());
            view::draw(f, state, caches, now);
        })?;
        Ok(())
    }

    /// Draws the status line alone.
    pub fn draw_status<B: Backend>(
        &self,
        terminal: &mut Terminal<B>,
        now: Instant,
    ) -> Result<(), B::Error> {
        terminal.draw(|f| panes::status::draw(f, &self.state, f.area(), now))?;
        Ok(())
    }
}

/// An answer's markdown rendered for `width` columns, as the conversation shows it.
pub fn render_markdown(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    markdown::render(text, width, theme)
}

/// Lines wrapped to `width` columns as the side panes wrap them.
pub fn wrap_lines(lines: &[Line<'static>], width: usize) -> Vec<Line<'static>> {
    wrap::wrap_lines(lines.iter(), width)
}
