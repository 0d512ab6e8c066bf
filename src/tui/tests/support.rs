//! Helpers the in-crate UI tests share.

use std::time::Instant;

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;

use crate::agent::AgentEvent;
use crate::llm::Preset;
use crate::tui::keymap::Action;
use crate::tui::panes::Caches;
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
        recent_models: vec![],
        resume_picker: false,
        approval: crate::approval::ApprovalMode::Auto,
        approval_source: crate::approval::ApprovalSource::Default,
        run_command: Ok(()),
        skills: Default::default(),
        custom_commands: Default::default(),
    });
    s.composer.set_input("think hard");
    update::apply(&mut s, Action::Send, Instant::now());
    s
}

/// Applies agent events.
pub fn feed(state: &mut State, events: impl IntoIterator<Item = AgentEvent>) {
    for e in events {
        let _ = update::on_event(state, e, Instant::now());
    }
}

thread_local! {
    /// The side panes' caches of the test running on this thread (each test has its own
    /// thread): kept from frame to frame as the event loop keeps them.
    static CACHES: std::cell::RefCell<Caches> = std::cell::RefCell::default();
}

/// Runs `f` with this test's side pane caches.
pub fn with_caches<T>(f: impl FnOnce(&mut Caches) -> T) -> T {
    CACHES.with(|c| f(&mut c.borrow_mut()))
}

/// Lays out and draws the screen at `width` × `height` with the caches as they are.
pub fn draw(state: &mut State, width: u16, height: u16, now: Instant) -> Buffer {
    let mut term = Terminal::new(TestBackend::new(width, height)).unwrap();
    with_caches(|caches| {
        layout::prepare(state, caches, Rect::new(0, 0, width, height));
        term.draw(|f| view::draw(f, state, caches, now)).unwrap();
    });
    term.backend().buffer().clone()
}

/// Draws the screen with the caches, then with the reasoning and tool output caches
/// forgotten, and checks that both are the same; the caches are put back (so later frames
/// keep extending them).
pub fn assert_cached_equals_fresh(state: &mut State, width: u16, height: u16) -> Buffer {
    let now = Instant::now();
    let cached = draw(state, width, height, now);
    let (reasoning, tool_output) = with_caches(|c| {
        (
            std::mem::take(&mut c.reasoning),
            std::mem::take(&mut c.tool_output),
        )
    });
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
    with_caches(|c| {
        c.reasoning = reasoning;
        c.tool_output = tool_output;
    });
    cached
}
