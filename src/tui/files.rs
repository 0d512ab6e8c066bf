//! Listing the workspace's files for the `@` popup, off the event loop: a blocking task walks
//! the workspace (the walk `search_files` uses) and sends the paths back in batches, so the
//! first ones show while the rest are still being found. A new listing stops the one before.

use std::sync::Arc;

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio_util::sync::CancellationToken;

use super::state::FileBatch;
use crate::tools::Sandbox;
use crate::tools::search::workspace_files;

/// Paths in one batch: small enough that the first rows come at once.
pub const BATCH: usize = 512;
/// The most files listed (a workspace holding more shows the first ones).
pub const MAX_FILES: usize = 200_000;

/// Lists the workspace on request; the event loop reads the batches from [`FileLister::recv`].
pub struct FileLister {
    sandbox: Option<Arc<Sandbox>>,
    tx: UnboundedSender<FileBatch>,
    rx: UnboundedReceiver<FileBatch>,
    cancel: CancellationToken,
}

impl FileLister {
    /// A lister for the workspace of `sandbox` (`None`: every listing is empty).
    pub fn new(sandbox: Option<Arc<Sandbox>>) -> Self {
        let (tx, rx) = unbounded_channel();
        Self {
            sandbox,
            tx,
            rx,
            cancel: CancellationToken::new(),
        }
    }

    /// Starts listing `generation`, stopping the listing before it.
    pub fn start(&mut self, generation: u64) {
        self.cancel.cancel();
        self.cancel = CancellationToken::new();
        let (sandbox, tx, cancel) = (self.sandbox.clone(), self.tx.clone(), self.cancel.clone());
        tokio::task::spawn_blocking(move || {
            let mut send = |batch: FileBatch| {
                let _ = tx.send(batch);
            };
            match sandbox {
                Some(sandbox) => walk(&sandbox, generation, &cancel, &mut send),
                None => send(FileBatch {
                    generation,
                    paths: Vec::new(),
                    done: true,
                }),
            }
        });
    }

    /// The next batch of a listing.
    pub async fn recv(&mut self) -> Option<FileBatch> {
        self.rx.recv().await
    }
}

/// Walks the workspace and hands its paths to `send` in batches of [`BATCH`], the last one
/// marked done (also when the walk failed or was stopped: the popup stops waiting).
pub fn walk(
    sandbox: &Sandbox,
    generation: u64,
    cancel: &CancellationToken,
    send: &mut dyn FnMut(FileBatch),
) {
    let mut each = |paths: Vec<String>| {
        send(FileBatch {
            generation,
            paths,
            done: false,
        })
    };
    if let Err(e) = workspace_files(sandbox, cancel, BATCH, MAX_FILES, &mut each) {
        tracing::warn!(error = %e, "could not list the workspace for the @ popup");
    }
    send(FileBatch {
        generation,
        paths: Vec::new(),
        done: true,
    });
}
