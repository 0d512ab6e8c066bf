//! The frame scheduler: anyone may ask for a frame "now" or "after d"; requests coalesce into one
//! deadline, at most one frame per `MIN_INTERVAL`. Text streaming in asks for its frame at most
//! every `STREAM_INTERVAL`: what the eye sees as smooth, at half the drawing. Nothing ticks while
//! no one asks.

use std::time::{Duration, Instant};

/// The shortest time between two frames (about 60 frames a second).
pub const MIN_INTERVAL: Duration = Duration::from_millis(16);

/// The shortest time between two frames asked for only by streamed text (30 a second).
pub const STREAM_INTERVAL: Duration = Duration::from_millis(33);

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

    /// Adds a request for text that streamed in: like [`FrameSchedule::request`], but never
    /// sooner than `STREAM_INTERVAL` after the last frame. A keystroke's request still wins.
    pub fn request_streamed(&mut self, at: Instant) {
        let earliest = self.last_draw.map_or(at, |last| last + STREAM_INTERVAL);
        self.request(at.max(earliest));
    }

    /// The soonest a frame asked for now could be drawn (`None`: at once).
    pub fn soonest_urgent(&self) -> Option<Instant> {
        self.last_draw.map(|last| last + MIN_INTERVAL)
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
    fn streamed_text_waits_longer_but_a_keystroke_does_not() {
        let t0 = Instant::now();
        let mut s = FrameSchedule::default();
        s.request_streamed(t0);
        assert_eq!(s.deadline(), Some(t0), "the first frame is not held back");
        s.drawn(t0);
        s.request_streamed(t0 + Duration::from_millis(1));
        assert_eq!(s.deadline(), Some(t0 + STREAM_INTERVAL));
        s.request(t0 + Duration::from_millis(2));
        assert_eq!(
            s.deadline(),
            Some(t0 + MIN_INTERVAL),
            "a key is shown at once"
        );
        s.drawn(t0 + MIN_INTERVAL);
        s.request_streamed(t0 + Duration::from_millis(100));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(100)));
    }
}
