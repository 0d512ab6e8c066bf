//! The frame scheduler: anyone may ask for a frame "now" or "after d"; requests coalesce into one
//! deadline, at most one frame per `MIN_INTERVAL` (a typed key excepted). Text streaming in asks
//! for its frame at most every `STREAM_INTERVAL`: what the eye sees as smooth, at half the
//! drawing. Nothing ticks while no one asks.

use std::time::{Duration, Instant};

/// The shortest time between two frames (about 60 frames a second).
pub const MIN_INTERVAL: Duration = Duration::from_millis(16);

/// The shortest time between two frames asked for only by streamed text (30 a second).
pub const STREAM_INTERVAL: Duration = Duration::from_millis(33);

/// How long streamed text that came before its frame was due waits past that for more text to
/// bring the frame: a fast stream's next batch comes within it (the model's connection is read
/// every 10 ms and its batches handed over every 50, see `llm::reply`: a batch that came before
/// the frame was due is followed by the next within 50 ms, sooner than 33 + 25, even when
/// reading takes a little more).
pub const STREAM_PATIENCE: Duration = Duration::from_millis(25);

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

    /// Adds a request for a frame at `at` even if the last one was drawn less than
    /// `MIN_INTERVAL` ago: for what the person typed, which is seen at once.
    pub fn request_now(&mut self, at: Instant) {
        self.next = Some(self.next.map_or(at, |n| n.min(at)));
    }

    /// Adds a request for text that streamed in at `at`: at most one such frame every
    /// `STREAM_INTERVAL`. Text that finds its frame due is drawn at once, with the wake-up that
    /// brought it; text that came sooner is drawn by the next text that finds the frame due, or
    /// `STREAM_PATIENCE` after it was due, whichever is first. So a fast stream's frames ride on
    /// its batches instead of waking the program on timers of their own. A keystroke's request
    /// still wins.
    pub fn request_streamed(&mut self, at: Instant) {
        let due = self.last_draw.map_or(at, |last| last + STREAM_INTERVAL);
        self.request(if at >= due { at } else { due + STREAM_PATIENCE });
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
        assert_eq!(
            s.deadline(),
            Some(t0 + STREAM_INTERVAL + STREAM_PATIENCE),
            "text that came early waits for the next batch, or a little past its frame"
        );
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

    #[test]
    fn a_typed_key_is_drawn_even_right_after_a_frame() {
        let t0 = Instant::now();
        let mut s = FrameSchedule::default();
        s.drawn(t0);
        s.request_streamed(t0 + Duration::from_millis(2));
        s.request_now(t0 + Duration::from_millis(3));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(3)));
        // A later request does not put it off.
        s.request(t0 + Duration::from_millis(4));
        assert_eq!(s.deadline(), Some(t0 + Duration::from_millis(3)));
    }

    #[test]
    fn streamed_frames_ride_on_the_batches_that_find_them_due() {
        let t0 = Instant::now();
        let mut s = FrameSchedule::default();
        s.drawn(t0);
        // A batch 16 ms after the frame: too soon, it waits.
        s.request_streamed(t0 + Duration::from_millis(16));
        assert_eq!(s.deadline(), Some(t0 + STREAM_INTERVAL + STREAM_PATIENCE));
        // The next batch finds the frame due: drawn now, with it.
        let next = t0 + STREAM_INTERVAL + Duration::from_millis(1);
        s.request_streamed(next);
        assert_eq!(s.deadline(), Some(next));
        s.drawn(next);
        // A stream that stops: its last text is drawn STREAM_PATIENCE past the frame's time.
        s.request_streamed(next + Duration::from_millis(5));
        assert_eq!(s.deadline(), Some(next + STREAM_INTERVAL + STREAM_PATIENCE));
    }
}
