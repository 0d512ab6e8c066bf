//! The frame scheduler: anyone may ask for a frame "now" or "after d"; requests coalesce into one
//! deadline, at most one frame per `MIN_INTERVAL`. Nothing ticks while no one asks. The event
//! loop asks its [`FrameSchedule`] directly; a [`FrameRequester`] is for asking from elsewhere.

use std::time::{Duration, Instant};

use tokio::sync::mpsc;

/// The shortest time between two frames (about 60 frames a second).
pub const MIN_INTERVAL: Duration = Duration::from_millis(16);

/// A cloneable handle to ask for a frame.
#[derive(Clone, Debug)]
pub struct FrameRequester {
    tx: mpsc::UnboundedSender<Instant>,
}

impl FrameRequester {
    /// A requester and the receiver the event loop feeds into its [`FrameSchedule`].
    pub fn new() -> (Self, mpsc::UnboundedReceiver<Instant>) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Self { tx }, rx)
    }

    /// Asks for a frame as soon as allowed.
    pub fn schedule_frame(&self) {
        let _ = self.tx.send(Instant::now());
    }

    /// Asks for a frame after `delay` (e.g. the next spinner tick).
    pub fn schedule_frame_in(&self, delay: Duration) {
        let _ = self.tx.send(Instant::now() + delay);
    }
}

/// The single pending frame deadline, kept by the event loop.
#[derive(Debug, Default)]
pub struct FrameSchedule {
    next: Option<Instant>,
    last_draw: Option<Instant>,
}

impl FrameSchedule {
    /// Adds a request: the earliest deadline wins, but never sooner than `MIN_INTERVAL` after the
    /// last frame.
    pub fn request(&mut self, at: Instant) {
        let earliest = self.last_draw.map_or(at, |last| last + MIN_INTERVAL);
        let at = at.max(earliest);
        self.next = Some(self.next.map_or(at, |n| n.min(at)));
    }

    /// When the next frame is due, if any is.
    pub fn deadline(&self) -> Option<Instant> {
        self.next
    }

    /// Records a frame drawn at `now`; the pending request is fulfilled.
    pub fn drawn(&mut self, now: Instant) {
        self.next = None;
        self.last_draw = Some(now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_coalesce_and_respect_the_frame_rate() {
        let t0 = Instant::now();
        let mut s = FrameSchedule::default();
        assert_eq!(s.deadline(), None);
        s.request(t0 + Duration::from_millis(100));
        s.request(t0 + Duration::from_millis(5));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(5)));
        s.drawn(t0 + Duration::from_millis(5));
        assert_eq!(s.deadline(), None);
        s.request(t0 + Duration::from_millis(6));
        assert_eq!(
            s.deadline(),
            Some(t0 + Duration::from_millis(5) + MIN_INTERVAL)
        );
    }

    #[test]
    fn the_requester_sends_deadlines() {
        let (r, mut rx) = FrameRequester::new();
        r.clone().schedule_frame();
        r.schedule_frame_in(Duration::from_secs(1));
        let a = rx.try_recv().unwrap();
        let b = rx.try_recv().unwrap();
        assert!(b > a);
    }
}
