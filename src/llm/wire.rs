//! The model server's connections, on a thread of their own that reads a fast stream at a pace.
//!
//! A fast stream sends a packet every millisecond or so. Read on the program's runtime thread,
//! every packet woke that thread (an `epoll_wait` return, ~25 µs on a virtual machine) even
//! while the reader paused: a socket registered with a runtime reports each arrival to whoever
//! waits in it. Here the connections live on a runtime of their own, and after each batch of a
//! stream its thread sleeps outside the runtime for [`READ_PACE`]: what arrives meanwhile waits
//! in the socket and wakes nobody, and the next batch takes it all at once. The caller gets one
//! message per hand-over, at most every [`HAND_OVER_PACE`] while a stream runs fast.
//!
//! A streamed chat over a plain connection skips reqwest and this runtime: it is read directly
//! at the same pace (see `direct`). Everything else comes here: key checks, and a chat
//! through a proxy or a resolver of the client's own.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use reqwest::{RequestBuilder, Response};
use tokio::sync::{Notify, mpsc, oneshot};

use super::reply::{
    BATCH_CAP, Body, HAND_OVER_PACE, QUEUED_BATCHES, READ_PACE, Reply, SendError, WireError,
    ends_stream,
};

/// How many turns of the runtime a batch waits for its next piece: the connection's task hands
/// the body over piece by piece, and may first have to read it from the socket.
const GATHER_TURNS: usize = 3;

/// Sends `request` from the connections' thread and returns the response's head; its body
/// follows in batches. Dropping the returned future, or the body, abandons the request.
pub(crate) async fn send(request: RequestBuilder) -> Result<Reply, SendError> {
    let (head, reply) = oneshot::channel();
    let wire = wire();
    let task = exchange(request, head, wire.map(|w| w.paced.clone()));
    match wire {
        Some(wire) => drop(wire.runtime.spawn(task)),
        // No thread of its own (it could not start): the stream is read here, without pauses.
        None => drop(tokio::spawn(task)),
    }
    match reply.await {
        Ok(Ok(reply)) => Ok(reply),
        Ok(Err(e)) => Err(SendError::Http(e)),
        Err(_) => Err(SendError::Lost),
    }
}

/// The runtime the connections live on, and what its thread waits for to pause.
struct Wire {
    runtime: tokio::runtime::Handle,
    paced: Arc<Pace>,
}

/// How a batch passed on tells the connections' thread to pause.
#[derive(Default)]
struct Pace {
    /// Whether a batch was passed on since the thread last woke.
    due: AtomicBool,
    told: Notify,
}

impl Pace {
    /// A batch was passed on.
    fn tell(&self) {
        self.due.store(true, Ordering::Release);
        self.told.notify_one();
    }

    /// Until a batch is passed on after this call began. (A telling from before it, kept by
    /// `Notify` as a permit, does not count: that batch's pause was already slept.)
    async fn wait(&self) {
        self.due.store(false, Ordering::Release);
        while !self.due.swap(false, Ordering::AcqRel) {
            self.told.notified().await;
        }
    }
}

/// The connections' thread, started on the first request (`None` if it could not start).
fn wire() -> Option<&'static Wire> {
    static WIRE: OnceLock<Option<Wire>> = OnceLock::new();
    WIRE.get_or_init(|| start().ok()).as_ref()
}

fn start() -> std::io::Result<Wire> {
    let paced = Arc::new(Pace::default());
    let pace = paced.clone();
    let (handle, started) = std::sync::mpsc::channel();
    // The runtime is built on its own thread and stays there: dropped on an async task (as a
    // failed start would drop it here), it would panic.
    std::thread::Builder::new()
        .name("model-wire".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(runtime) => runtime,
                Err(e) => {
                    let _ = handle.send(Err(e));
                    return;
                }
            };
            if handle.send(Ok(runtime.handle().clone())).is_err() {
                return;
            }
            // The runtime runs its tasks only inside `block_on`: between batches the thread
            // sleeps outside it, where no packet can wake it.
            loop {
                runtime.block_on(pace.wait());
                std::thread::sleep(READ_PACE);
            }
        })?;
    let runtime = started
        .recv()
        .map_err(|_| std::io::Error::other("the connections' thread ended at its start"))??;
    Ok(Wire { runtime, paced })
}

/// One request on the connections' runtime: sends it, hands the head back, passes the body on.
async fn exchange(
    request: RequestBuilder,
    mut head: oneshot::Sender<Result<Reply, reqwest::Error>>,
    paced: Option<Arc<Pace>>,
) {
    let response = tokio::select! {
        biased;
        _ = head.closed() => return,
        sent = request.send() => sent,
    };
    let response = match response {
        Ok(response) => response,
        Err(e) => {
            let _ = head.send(Err(e));
            return;
        }
    };
    let (batches, body) = mpsc::channel(QUEUED_BATCHES);
    let reply = Reply {
        status: response.status(),
        headers: response.headers().clone(),
        body: Body::reqwest(body),
    };
    if head.send(Ok(reply)).is_ok() {
        pass_on(response, batches, paced).await;
    }
}

/// Reads the body in batches, each what is ready when its first piece came, until it ends, fails
/// or its reader is gone.
async fn pass_on(
    mut response: Response,
    batches: mpsc::Sender<Result<Bytes, WireError>>,
    paced: Option<Arc<Pace>>,
) {
    let mut hand_over = HandOver::default();
    // A batch read but held for the next hand-over.
    let mut held: Option<Batch> = None;
    loop {
        // Held text is handed over when its hand-over is due, whether or not more came: a
        // stream that pauses shows what it sent before the pause.
        let due_at = hand_over.due_at();
        let first = tokio::select! {
            biased;
            _ = batches.closed() => return,
            piece = response.chunk() => piece,
            _ = tokio::time::sleep_until(due_at.into()), if held.is_some() => {
                if let Some(batch) = held.take()
                    && !hand_over.send(&batches, batch).await
                {
                    return;
                }
                continue;
            }
        };
        let mut batch = match (first, held.take()) {
            (Ok(Some(piece)), Some(mut batch)) => {
                batch.push(piece);
                batch
            }
            (Ok(Some(piece)), None) => Batch::new(piece, hand_over.last_len),
            (end, Some(batch)) => {
                if !hand_over.send(&batches, batch).await {
                    return;
                }
                // At the end the closed channel says so; a failure is passed on.
                if let Err(e) = end {
                    let _ = batches.send(Err(WireError::Http(e))).await;
                }
                return;
            }
            // The end: the closed channel says so.
            (Ok(None), None) => return,
            (Err(e), None) => {
                let _ = batches.send(Err(WireError::Http(e))).await;
                return;
            }
        };
        let mut ended = None;
        while batch.len() < BATCH_CAP {
            tokio::select! {
                biased;
                piece = response.chunk() => match piece {
                    Ok(Some(piece)) => batch.push(piece),
                    other => {
                        ended = Some(other);
                        break;
                    }
                },
                // The connection had a few turns to hand over what it holds and did not:
                // nothing more is ready.
                _ = yield_turns(GATHER_TURNS) => break,
            }
        }
        if paced.is_some()
            && ended.is_none()
            && !hand_over.due(Instant::now())
            && batch.len() < BATCH_CAP
            && !batch.ends_stream()
        {
            held = Some(batch);
        } else if !hand_over.send(&batches, batch).await {
            return;
        }
        match ended {
            None => {}
            Some(Err(e)) => {
                let _ = batches.send(Err(WireError::Http(e))).await;
                return;
            }
            Some(Ok(_)) => return,
        }
        if let Some(paced) = &paced {
            paced.tell();
        }
    }
}

/// When batches were last handed over, and how large the last one was.
#[derive(Default)]
struct HandOver {
    at: Option<Instant>,
    /// A fast stream's batches are alike, so the next one's room is made once at this size,
    /// not grown piece by piece (each growth a copy of what it held).
    last_len: usize,
}

impl HandOver {
    /// Whether a batch read at `now` goes at once.
    fn due(&self, now: Instant) -> bool {
        self.at.is_none_or(|at| now >= at + HAND_OVER_PACE)
    }

    /// When the next batch may be handed over (now, before the first).
    fn due_at(&self) -> Instant {
        self.at.map_or_else(Instant::now, |at| at + HAND_OVER_PACE)
    }

    /// Hands `batch` over; `false` when its reader is gone.
    async fn send(
        &mut self,
        batches: &mpsc::Sender<Result<Bytes, WireError>>,
        batch: Batch,
    ) -> bool {
        self.last_len = batch.len();
        self.at = Some(Instant::now());
        batches.send(Ok(batch.finish())).await.is_ok()
    }
}

/// Pieces of a body gathered into one: the first as it came, copied only when a second joins it
/// (into room for `expected` bytes).
enum Batch {
    One { piece: Bytes, expected: usize },
    Joined(BytesMut),
}

impl Batch {
    fn new(piece: Bytes, expected: usize) -> Self {
        Self::One { piece, expected }
    }

    fn len(&self) -> usize {
        match self {
            Self::One { piece, .. } => piece.len(),
            Self::Joined(joined) => joined.len(),
        }
    }

    fn push(&mut self, piece: Bytes) {
        match self {
            Self::One {
                piece: first,
                expected,
            } => {
                let room = (first.len() + piece.len()).max((*expected).min(BATCH_CAP));
                let mut joined = BytesMut::with_capacity(room);
                joined.extend_from_slice(first);
                joined.extend_from_slice(&piece);
                *self = Self::Joined(joined);
            }
            Self::Joined(joined) => joined.extend_from_slice(&piece),
        }
    }

    fn ends_stream(&self) -> bool {
        match self {
            Self::One { piece, .. } => ends_stream(piece),
            Self::Joined(joined) => ends_stream(joined),
        }
    }

    fn finish(self) -> Bytes {
        match self {
            Self::One { piece, .. } => piece,
            Self::Joined(joined) => joined.freeze(),
        }
    }
}

/// Lets the runtime's other tasks run `turns` times.
async fn yield_turns(turns: usize) {
    for _ in 0..turns {
        tokio::task::yield_now().await;
    }
}

#[cfg(test)]
mod tests;
