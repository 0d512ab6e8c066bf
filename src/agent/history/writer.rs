//! Saving off the async runtime: the agent's saves go, in order, to a thread of their own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

use tokio::sync::oneshot;

use super::HistoryError;
use super::store::{Change, Disk, HistoryStore, Tracker};
use crate::agent::session::Session;
use crate::events::{AgentEvent, EventSink};

/// What the writer thread is asked to do.
enum Job {
    /// Write a change; a failure is reported on the sink.
    Apply(Change, EventSink),
    /// Answer once every earlier job is done.
    Flush(oneshot::Sender<()>),
    /// Delete the files after every earlier job, and say how that went.
    Clear(oneshot::Sender<Result<(), HistoryError>>),
}

/// Saves a session's history on a thread of its own, so the async runtime never waits for the
/// disk. A save costs the caller an id comparison and a copy of the new messages; the thread
/// then appends them to the journal (or writes the snapshot) in the order the saves were made.
/// The thread ends once the writer is dropped and the queued saves are done.
#[derive(Debug)]
pub struct HistoryWriter {
    tracker: Tracker,
    jobs: mpsc::Sender<Job>,
    /// Set by the thread when a write failed: the next save writes the whole session.
    failed: Arc<AtomicBool>,
}

impl HistoryWriter {
    /// Starts the thread that writes `store`'s files.
    pub fn start(store: HistoryStore) -> Result<Self, HistoryError> {
        let HistoryStore { tracker, disk } = store;
        let path = disk.path().to_path_buf();
        let (jobs, queue) = mpsc::channel();
        let failed = Arc::new(AtomicBool::new(false));
        let flag = failed.clone();
        std::thread::Builder::new()
            .name("history-writer".into())
            .spawn(move || run(disk, &queue, &flag))
            .map_err(|source| HistoryError::Io { path, source })?;
        Ok(Self {
            tracker,
            jobs,
            failed,
        })
    }

    /// Queues a save of `session` (of what changed since the last save); returns at once. A
    /// failure is reported on `events` as "Could not save the history: …".
    pub fn save(&mut self, session: &Session, events: &EventSink) {
        if self.failed.swap(false, Ordering::AcqRel) {
            self.tracker.forget();
        }
        let change = self.tracker.change(session);
        if matches!(change, Change::Nothing) {
            return;
        }
        if self.jobs.send(Job::Apply(change, events.clone())).is_err() {
            self.tracker.forget();
            events.send(AgentEvent::Error {
                message: format!(
                    "Could not save the history: {}",
                    HistoryError::WriterStopped
                ),
            });
        }
    }

    /// Waits, without blocking the runtime, until every queued save is written or has failed.
    pub async fn flush(&self) {
        let (done, answer) = oneshot::channel();
        if self.jobs.send(Job::Flush(done)).is_ok() {
            let _ = answer.await;
        }
    }

    /// Waits until every queued save is written; if one failed, saves `session` whole once more
    /// and waits for that too, so a passing failure does not leave the turn unsaved.
    pub async fn settle(&mut self, session: &Session, events: &EventSink) {
        self.flush().await;
        if self.failed.load(Ordering::Acquire) {
            self.save(session, events);
            self.flush().await;
        }
    }

    /// Deletes the history and its journal once the queued saves are done, and waits for that
    /// without blocking the runtime. Between turns the queue is empty (every turn waits for its
    /// saves), so this returns as soon as the two files are removed.
    pub async fn clear(&mut self) -> Result<(), HistoryError> {
        self.tracker.forget();
        self.failed.store(false, Ordering::Release);
        let (done, answer) = oneshot::channel();
        self.jobs
            .send(Job::Clear(done))
            .map_err(|_| HistoryError::WriterStopped)?;
        answer.await.map_err(|_| HistoryError::WriterStopped)?
    }
}

/// The writer thread: runs the jobs in order until the writer is dropped.
fn run(mut disk: Disk, queue: &mpsc::Receiver<Job>, failed: &AtomicBool) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Apply(change, events) => match disk.apply(change) {
                Ok(()) => {}
                // Refused after an earlier failure, which was reported and set the flag; the
                // caller's next save rewrites everything.
                Err(HistoryError::OutOfStep) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "history save failed");
                    failed.store(true, Ordering::Release);
                    events.send(AgentEvent::Error {
                        message: format!("Could not save the history: {e}"),
                    });
                }
            },
            Job::Flush(done) => {
                let _ = done.send(());
            }
            Job::Clear(done) => {
                let _ = done.send(disk.clear());
            }
        }
    }
}
