//! The event loop: one `tokio::select!` over terminal input, agent events, the frame deadline
//! and termination signals. Draws only when something changed; sleeps while idle.

use std::time::{Duration, Instant};

use crossterm::event::Event;
use futures::{FutureExt, StreamExt};
use ratatui::layout::Rect;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc::UnboundedReceiver;

use super::files::FileLister;
use super::frame::FrameSchedule;
use super::key_jobs::KeyJobs;
use super::keymap::{self, Action};
use super::notify::{Attention, Notifier};
use super::panes::Caches;
use super::state::State;
use super::terminal::{self, Tui};
use super::update::{self, Effect, KeyReport};
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
    keys: &KeyJobs,
    key_reports: &mut UnboundedReceiver<KeyReport>,
    files: &mut FileLister,
) -> Result<(), TuiError> {
    let mut notifier = Notifier::new(state.notify);
    let mut schedule = FrameSchedule::default();
    // The side panes' caches: the layout pass keeps them, drawing reads them.
    let mut caches = Caches::default();
    let mut input = super::input::input();
    let mut sigterm = signal(SignalKind::terminate())?;
    let mut sighup = signal(SignalKind::hangup())?;
    let mut hangup = terminal::hangup();
    let mut watching_hangup = true;
    // Agent events are taken as they come: a fast stream arrives in batches (the model's
    // connection is read at a pace, see `llm::wire`), and streamed text is drawn with the batch
    // that finds its frame due (see `FrameSchedule::request_streamed`), so a stream costs a
    // wake-up a batch, not one a token and another for each frame.
    schedule.request(Instant::now());
    let mut give_back_after_frame = false;
    loop {
        let deadline = schedule.deadline();
        let was_busy = state.busy();
        let was_opening = state.view.opening.is_some();
        tokio::select! {
            // Polled in this order, each turn stopping at the first that is ready: frames come
            // at most every `MIN_INTERVAL` (a typed key's at once), and a key is taken before
            // agent events, so a flood of them cannot keep it waiting. (The input is polled only
            // once crossterm woke it: see `input`.)
            biased;
            // A frame that is due is drawn in this turn, not through the timer: that would
            // wake the thread once more for it a millisecond later.
            _ = async { match deadline {
                Some(at) if at <= Instant::now() => {}
                Some(at) => tokio::time::sleep_until(at.into()).await,
                None => std::future::pending().await,
            } } => {
                // What arrived since the last turn is shown now, not a frame later (a bounded
                // batch: a flood of events cannot hold keys and frames up).
                state.key_set = keys.is_set(&state.preset);
                let mut effects = Vec::new();
                if let Drained::More { need } = drain(state, events, MAX_EVENTS_PER_BATCH, &mut effects) {
                    request_for(&mut schedule, need, Instant::now());
                }
                perform(effects, agent, keys, files);
                let now = Instant::now();
                // Laid out inside `draw`, for the viewport's size.
                terminal.draw(|f| {
                    layout::prepare(state, &mut caches, f.area());
                    view::draw(f, state, &caches, now);
                })?;
                schedule.drawn(now);
                if std::mem::take(&mut give_back_after_frame) {
                    super::memory::give_back();
                }
                if state.busy() {
                    schedule.request(now + TICK);
                }
                // A hint still shown goes away by itself: one frame when it expires (a request
                // made with the key was fulfilled by this frame).
                if let Some((_, until)) = &state.flash
                    && *until > now
                {
                    schedule.request(*until);
                }
            }
            ev = input.next() => {
                let mut next = ev;
                for _ in 0..MAX_INPUT_PER_BATCH {
                    match next {
                        // Whether the person looks at the terminal decides whether to notify.
                        Some(Ok(Event::FocusLost)) => notifier.focus(false),
                        Some(Ok(Event::FocusGained)) => notifier.focus(true),
                        Some(Ok(ev)) => {
                            on_input(terminal, state, ev, agent, keys, files, &mut schedule)?;
                        }
                        Some(Err(e)) => return Err(e.into()),
                        None => return Ok(()),
                    }
                    if state.quit {
                        break;
                    }
                    // What else is typed already (a burst, a paste without bracketed paste) is
                    // taken now, so it costs one frame, not one a key. (Polled without the
                    // loop's waker: the next `select!` registers it again before it waits.)
                    match input.next().now_or_never() {
                        Some(ev) => next = ev,
                        None => break,
                    }
                }
            }
            ev = events.recv() => match ev {
                Some(ev) => {
                    // The agent reads the key file again before a turn: the state follows.
                    state.key_set = keys.is_set(&state.preset);
                    // A turn that ends hands over to the oldest queued message at once.
                    let need = FrameNeed::of(&ev);
                    let mut effects = update::on_event(state, ev, Instant::now());
                    // Drain what else arrived so a fast stream costs one frame, not one per token.
                    let drained = drain(state, events, MAX_EVENTS_PER_BATCH, &mut effects);
                    perform(effects, agent, keys, files);
                    request_for(&mut schedule, need.max(drained.need()), Instant::now());
                }
                None => return Err(TuiError::AgentStopped),
            },
            // The `@` popup's file list, found off the loop.
            Some(batch) = files.recv() => {
                update::on_files(state, batch, Instant::now());
                schedule.request(Instant::now());
            },
            Some(report) = key_reports.recv() => {
                update::on_key_report(state, report);
                schedule.request(Instant::now());
            }
            _ = sigterm.recv() => return Ok(()),
            _ = sighup.recv() => return Ok(()),
            gone = &mut hangup, if watching_hangup => match gone {
                Ok(()) => return Ok(()),
                // No watcher (it could not start): SIGHUP still ends the program.
                Err(_) => watching_hangup = false,
            },
        }
        // A turn's passing allocations (a streamed answer's) leave freed memory behind, and
        // so does telling a long session again. Given back once the frame that shows it is
        // drawn, so that frame's code is not mapped again page by page on the way to it.
        if (was_busy && !state.busy()) || (was_opening && state.view.opening.is_none()) {
            give_back_after_frame = true;
        }
        if let Some(why) = state.unavailable.take() {
            return Err(TuiError::SessionUnavailable(why));
        }
        // The title follows what MiniClaw needs from the person; a turn's end or a waiting
        // call also notifies when they look away. A terminal that cannot be written to is
        // found out by the next frame.
        if let Some(signal) = notifier.update(
            Attention::of(!state.approvals.is_empty(), state.busy()),
            state.view.session_title.as_deref(),
        ) {
            let _ = terminal::write_signal(&signal);
        }
        if state.quit {
            return Ok(());
        }
        if terminal::panicked() {
            return Err(TuiError::Panicked);
        }
    }
}

/// At most this many input events, the one that woke the loop and those already waiting, are
/// taken before a frame.
const MAX_INPUT_PER_BATCH: usize = 256;

/// A key, mouse, paste or resize: its action applied, its effects carried out, a frame asked.
fn on_input(
    terminal: &mut Tui,
    state: &mut State,
    ev: Event,
    agent: &AgentHandle,
    keys: &KeyJobs,
    files: &mut FileLister,
    schedule: &mut FrameSchedule,
) -> Result<(), TuiError> {
    // The viewport is fixed (see `terminal::init`): it follows the terminal here.
    if let Event::Resize(cols, rows) = ev {
        terminal.resize(Rect::new(0, 0, cols, rows))?;
    }
    let now = Instant::now();
    let ctx = update::key_context(state, now);
    // What the person typed is drawn at once, even right after a frame; the mouse (whose
    // moves come by the hundred) and a resize keep to the frame rate.
    let typed = matches!(ev, Event::Key(_) | Event::Paste(_));
    let action = match ev {
        Event::Key(k) => keymap::map_key(&ctx, k),
        Event::Mouse(m) => keymap::map_mouse(&ctx, m),
        Event::Paste(p) => keymap::map_paste(&ctx, p),
        _ => Action::None, // a resize only needs the redraw below
    };
    let effects = update::apply(state, action, now);
    perform(effects, agent, keys, files);
    if typed {
        schedule.request_now(now);
    } else {
        schedule.request(now);
    }
    // A flash hint goes away by itself: one frame when it expires.
    if let Some((_, until)) = &state.flash {
        schedule.request(now + until.saturating_duration_since(now));
    }
    Ok(())
}

/// At most this many agent events are applied before keys are read and a frame is drawn again.
const MAX_EVENTS_PER_BATCH: usize = 4096;

/// Applies up to `limit` events that are already waiting, adding what they ask for to
/// `effects`; returns whether the limit was reached (more may be waiting).
fn drain(
    state: &mut State,
    events: &mut UnboundedReceiver<AgentEvent>,
    limit: usize,
    effects: &mut Vec<Effect>,
) -> Drained {
    let mut need = FrameNeed::Streamed;
    for _ in 0..limit {
        match events.try_recv() {
            Ok(ev) => {
                need = need.max(FrameNeed::of(&ev));
                effects.extend(update::on_event(state, ev, Instant::now()));
            }
            Err(_) => return Drained::All { need },
        }
    }
    Drained::More { need }
}

/// How soon applied agent events need the frame that shows them (the greatest need of a batch
/// wins).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum FrameNeed {
    /// Only text streamed in: drawn at the streaming rate.
    Streamed,
    /// Something changed what happens (a step, a call): drawn soon, within the frame rate.
    Soon,
    /// The turn ended: drawn at once, so its last text waits for no frame interval (the budget
    /// from the stream's last byte to the screen is 33 ms, and the pace of reading alone can
    /// take 20 of them).
    Now,
}

impl FrameNeed {
    fn of(event: &AgentEvent) -> Self {
        if event.is_stream_delta() {
            Self::Streamed
        } else if matches!(event, AgentEvent::TurnFinished { .. }) {
            Self::Now
        } else {
            Self::Soon
        }
    }
}

/// What [`drain`] did, and the frame the events it applied need.
enum Drained {
    /// Every queued event was applied.
    All { need: FrameNeed },
    /// The batch's limit was reached with events still queued.
    More { need: FrameNeed },
}

impl Drained {
    fn need(&self) -> FrameNeed {
        match self {
            Self::All { need } | Self::More { need } => *need,
        }
    }
}

/// Asks for the frame that shows applied agent events, as soon as they need it.
fn request_for(schedule: &mut FrameSchedule, need: FrameNeed, now: Instant) {
    match need {
        FrameNeed::Now => schedule.request_now(now),
        FrameNeed::Soon => schedule.request(now),
        FrameNeed::Streamed => schedule.request_streamed(now),
    }
}

/// Carries out what the reducer asked for.
pub(super) fn perform(
    effects: Vec<Effect>,
    agent: &AgentHandle,
    keys: &KeyJobs,
    files: &mut FileLister,
) {
    for effect in effects {
        match effect {
            Effect::Command(c) => agent.send(c),
            Effect::SetPreset(preset) => {
                // Remembered for the next start, off the event loop (a file write).
                if let Some(path) = crate::remembered::path() {
                    let model = preset.model().to_string();
                    let label = preset.to_string();
                    let provider = (!preset.is_deepseek()).then(|| preset.provider().to_string());
                    tokio::task::spawn_blocking(move || {
                        let remember = |c: &mut crate::remembered::Choices| {
                            super::update::note_recent(&mut c.recent_models, &label);
                            c.model = Some(model.clone());
                            c.provider = provider.clone();
                        };
                        if let Err(e) = crate::remembered::remember(&path, remember) {
                            tracing::warn!(error = %e, "could not remember the model");
                        }
                    });
                }
                agent.set_preset(preset);
            }
            Effect::Interrupt => agent.interrupt(),
            Effect::Answer(id, decision) => agent.answer(&id, decision),
            Effect::SetApproval(mode, folder) => {
                agent.set_approval(mode);
                // For this folder only: a mode chosen in one project must not deny writes in
                // another.
                if let Some(path) = crate::remembered::folders::path() {
                    tokio::task::spawn_blocking(move || {
                        let set = |r: &mut crate::remembered::folders::FolderRecord| {
                            r.approval = Some(mode)
                        };
                        if let Err(e) = crate::remembered::folders::remember(&path, &folder, set) {
                            tracing::warn!(error = %e, "could not remember the approval mode");
                        }
                    });
                }
            }
            Effect::ForgetCommandRule(rule) => agent.forget_command_rule(rule),
            // A clipboard that cannot be written is not worth stopping for.
            Effect::Copy(text) => {
                let _ = terminal::copy_osc52(&text);
            }
            Effect::CheckKey(key) => keys.check(key),
            Effect::UseKey { key, save } => keys.use_key(key, save),
            Effect::ListFiles(generation) => files.start(generation),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::{Theme, TuiOptions};

    fn options() -> TuiOptions {
        TuiOptions {
            workspace: "ws".into(),
            preset: crate::llm::Preset::Flash,
            max_steps: 6,
            mouse: false,
            theme: Theme::monochrome(),
            notices: vec![],
            tools: vec![],
            recent_models: vec![],
            resume_picker: false,
            approval: crate::approval::ApprovalMode::Auto,
            approval_source: crate::approval::ApprovalSource::Default,
            run_command: Ok(()),
            skills: Default::default(),
            custom_commands: Default::default(),
        }
    }

    #[test]
    fn a_flood_of_events_is_applied_in_bounded_batches() {
        let mut state = State::new(&options());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for i in 0..10 {
            tx.send(AgentEvent::Notice(format!("n{i}"))).unwrap();
        }
        let mut effects = Vec::new();
        assert!(
            matches!(
                drain(&mut state, &mut rx, 4, &mut effects),
                Drained::More {
                    need: FrameNeed::Soon
                }
            ),
            "the limit was reached"
        );
        assert_eq!(state.view.entries.len(), 4);
        assert!(matches!(
            drain(&mut state, &mut rx, 4, &mut effects),
            Drained::More { .. }
        ));
        assert!(
            matches!(
                drain(&mut state, &mut rx, 4, &mut effects),
                Drained::All {
                    need: FrameNeed::Soon
                }
            ),
            "all drained"
        );
        assert_eq!(state.view.entries.len(), 10);
    }

    #[test]
    fn streamed_text_alone_is_not_urgent_and_a_turn_end_is_drawn_at_once() {
        let mut state = State::new(&options());
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        tx.send(AgentEvent::ContentDelta("a".into())).unwrap();
        tx.send(AgentEvent::ReasoningDelta("b".into())).unwrap();
        let mut effects = Vec::new();
        let drained = drain(&mut state, &mut rx, 8, &mut effects);
        assert_eq!(drained.need(), FrameNeed::Streamed);
        tx.send(AgentEvent::ContentDelta("c".into())).unwrap();
        tx.send(AgentEvent::StepFinished(crate::events::StepEnd::Answer))
            .unwrap();
        let drained = drain(&mut state, &mut rx, 8, &mut effects);
        assert_eq!(drained.need(), FrameNeed::Soon);
        tx.send(AgentEvent::ContentDelta("d".into())).unwrap();
        tx.send(AgentEvent::TurnFinished {
            outcome: crate::events::TurnOutcome::Answered,
            usage: None,
            last_usage: None,
        })
        .unwrap();
        tx.send(AgentEvent::Notice("after".into())).unwrap();
        let drained = drain(&mut state, &mut rx, 8, &mut effects);
        assert_eq!(drained.need(), FrameNeed::Now, "the greatest need wins");
        // Drawn at once, though a frame was drawn a moment ago.
        let t0 = Instant::now();
        let mut schedule = FrameSchedule::default();
        schedule.drawn(t0);
        request_for(&mut schedule, drained.need(), t0);
        assert_eq!(schedule.deadline(), Some(t0));
    }
}
