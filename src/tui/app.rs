//! The event loop: one `tokio::select!` over terminal input, agent events, the frame deadline
//! and termination signals. Draws only when something changed; sleeps while idle.

use std::time::{Duration, Instant};

use crossterm::event::{Event, EventStream};
use futures::StreamExt;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use super::frame::{FrameRequester, FrameSchedule};
use super::keymap::{self, Action};
use super::state::State;
use super::terminal::{self, Tui};
use super::update::{self, Effect};
use super::{TuiError, layout, view};
use crate::agent::{AgentEvent, AgentHandle};

/// How often the spinner and elapsed time move while a turn runs.
const TICK: Duration = Duration::from_millis(100);

/// Runs until the person quits, a signal arrives, or something fails.
pub async fn event_loop(
    terminal: &mut Tui,
    state: &mut State,
    agent: &AgentHandle,
    events: &mut UnboundedReceiver<AgentEvent>,
) -> Result<(), TuiError> {
    let (frames, mut frame_rx) = FrameRequester::new();
    let mut schedule = FrameSchedule::default();
    let mut input = EventStream::new();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut hangup = terminal::hangup();
    let mut watching_hangup = true;
    frames.schedule_frame();
    loop {
        let deadline = schedule.deadline();
        tokio::select! {
            _ = async { match deadline {
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            } } => {
                let now = Instant::now();
                let size = terminal.size()?;
                layout::prepare(state, ratatui::layout::Rect::new(0, 0, size.width, size.height));
                terminal.draw(|f| view::draw(f, state, now))?;
                schedule.drawn(now);
                if state.busy() {
                    frames.schedule_frame_in(TICK);
                }
            }
            Some(at) = frame_rx.recv() => schedule.request(at),
            ev = input.next() => match ev {
                Some(Ok(ev)) => {
                    let now = Instant::now();
                    let ctx = update::key_context(state, now);
                    let action = match ev {
                        Event::Key(k) => keymap::map_key(&ctx, k),
                        Event::Mouse(m) => keymap::map_mouse(&ctx, m),
                        Event::Paste(p) => keymap::map_paste(&ctx, p),
                        _ => Action::None, // a resize only needs the redraw below
                    };
                    let effects = update::apply(state, action, now);
                    perform(effects, agent);
                    frames.schedule_frame();
                    // A flash hint goes away by itself: one frame when it expires.
                    if let Some((_, until)) = &state.flash {
                        frames.schedule_frame_in(until.saturating_duration_since(now));
                    }
                }
                Some(Err(e)) => return Err(e.into()),
                None => return Ok(()),
            },
            ev = events.recv() => match ev {
                Some(ev) => {
                    update::on_event(state, ev, Instant::now());
                    // Drain what else arrived so a fast stream costs one frame, not one per token.
                    while let Ok(ev) = events.try_recv() {
                        update::on_event(state, ev, Instant::now());
                    }
                    frames.schedule_frame();
                }
                None => return Err(TuiError::AgentStopped),
            },
            _ = sigterm.recv() => return Ok(()),
            _ = sighup.recv() => return Ok(()),
            gone = &mut hangup, if watching_hangup => match gone {
                Ok(()) => return Ok(()),
                // No watcher (it could not start): SIGHUP still ends the program.
                Err(_) => watching_hangup = false,
            },
        }
        if state.quit {
            return Ok(());
        }
        if terminal::panicked() {
            return Err(TuiError::Panicked);
        }
    }
}

fn perform(effects: Vec<Effect>, agent: &AgentHandle) {
    for effect in effects {
        match effect {
            Effect::Command(c) => agent.send(c),
            Effect::SetPreset(preset) => agent.set_preset(preset),
            Effect::Interrupt => agent.interrupt(),
            // A clipboard that cannot be written is not worth stopping for.
            Effect::Copy(text) => {
                let _ = terminal::copy_osc52(&text);
            }
            Effect::Quit => {}
        }
    }
}
