//! The terminal's input as a stream that is polled only when it has something to say.
//!
//! crossterm's `EventStream` answers every poll by trying, with a zero timeout, the lock its
//! reader thread holds while it waits for input, and parking_lot spins seven `sched_yield`s
//! before that try gives up. The event loop polls every branch it waits on each time it goes
//! round, so a stream woke it ~150 times a second and each time paid those yields (11,000 in a
//! 10-second answer). [`Input`] hands crossterm a waker of its own and polls it again only once
//! that waker has been woken, or after it gave an event (more may be buffered).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use crossterm::event::EventStream;
use futures::Stream;
use futures::task::AtomicWaker;

/// Whether the inner stream may have something, and who to tell when it does.
#[derive(Default)]
struct Signal {
    /// Set when crossterm woke us (and at the start, and after an event): poll it then.
    ready: AtomicBool,
    /// The event loop's task, woken in turn.
    outer: AtomicWaker,
}

impl Wake for Signal {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.ready.store(true, Ordering::Release);
        self.outer.wake();
    }
}

/// A stream that polls `S` only after `S` woke it (see the module's doc).
pub struct Gated<S> {
    inner: S,
    signal: Arc<Signal>,
    waker: Waker,
}

impl<S> Gated<S> {
    /// Wraps `inner`; the first poll reaches it.
    pub fn new(inner: S) -> Self {
        let signal = Arc::new(Signal::default());
        signal.ready.store(true, Ordering::Release);
        let waker = Waker::from(signal.clone());
        Self {
            inner,
            signal,
            waker,
        }
    }
}

impl<S: Stream + Unpin> Stream for Gated<S> {
    type Item = S::Item;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        let this = self.get_mut();
        // Registered before the flag is read, so a wake in between is not lost.
        this.signal.outer.register(cx.waker());
        if !this.signal.ready.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let mut inner_cx = Context::from_waker(&this.waker);
        match Pin::new(&mut this.inner).poll_next(&mut inner_cx) {
            Poll::Ready(item) => {
                // More may already be buffered: the next poll asks again.
                this.signal.ready.store(true, Ordering::Release);
                Poll::Ready(item)
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

/// The terminal's events, polled only when crossterm has woken the loop.
pub type Input = Gated<EventStream>;

/// The terminal's event stream, gated.
pub fn input() -> Input {
    Gated::new(EventStream::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// A stream that counts its polls and is ready only when told.
    struct Counting {
        polls: Arc<AtomicUsize>,
        items: Vec<u32>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Stream for Counting {
        type Item = u32;
        fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<u32>> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            match self.items.pop() {
                Some(item) => Poll::Ready(Some(item)),
                None => {
                    *self.waker.lock().unwrap() = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        }
    }

    #[test]
    fn the_inner_stream_is_polled_again_only_after_it_woke_the_gate() {
        let polls = Arc::new(AtomicUsize::new(0));
        let inner_waker = Arc::new(std::sync::Mutex::new(None));
        let mut gated = Gated::new(Counting {
            polls: polls.clone(),
            items: vec![2, 1],
            waker: inner_waker.clone(),
        });
        let outer_woken = Arc::new(Woken::default());
        let outer = Waker::from(outer_woken.clone());
        let mut cx = Context::from_waker(&outer);
        let mut next = || Pin::new(&mut gated).poll_next(&mut cx);

        // What is buffered comes out poll after poll, then the inner stream says Pending.
        assert_eq!(next(), Poll::Ready(Some(1)));
        assert_eq!(next(), Poll::Ready(Some(2)));
        assert_eq!(next(), Poll::Pending);
        assert_eq!(polls.load(Ordering::SeqCst), 3);
        // Polled again and again while nothing woke it: the inner stream is left alone.
        for _ in 0..100 {
            assert_eq!(next(), Poll::Pending);
        }
        assert_eq!(polls.load(Ordering::SeqCst), 3);
        assert_eq!(outer_woken.count.load(Ordering::SeqCst), 0);

        // The inner stream wakes its waker: the loop's task is woken, and the next poll reaches it.
        let waker = inner_waker.lock().unwrap().take().expect("it kept a waker");
        waker.wake();
        assert_eq!(outer_woken.count.load(Ordering::SeqCst), 1);
        assert_eq!(next(), Poll::Pending);
        assert_eq!(polls.load(Ordering::SeqCst), 4);
    }

    #[derive(Default)]
    struct Woken {
        count: AtomicUsize,
    }

    impl Wake for Woken {
        fn wake(self: Arc<Self>) {
            self.count.fetch_add(1, Ordering::SeqCst);
        }
    }
}
