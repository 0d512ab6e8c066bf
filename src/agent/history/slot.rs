//! Where the open session is saved, and the lock that makes it this process's alone.
//!
//! A workspace's active session is `history.json`. A second MiniClaw in the same folder (a
//! second window, a headless run while the UI is open) cannot have that one, but it need not
//! stop: its session is saved straight into the archive, as `.miniclaw/sessions/<id>.json`,
//! locked by `<id>.json.lock`. Each session is locked on its own, so two processes work side by
//! side on different sessions and only the same session is refused; a session one process has
//! open cannot be reopened by another.

use std::path::{Path, PathBuf};

use super::archive::Archive;
use super::lock::{HistoryLock, LockError};
use super::store::CompactionPolicy;

/// The file the open session is saved in, held locked.
#[derive(Debug)]
pub struct Slot {
    path: PathBuf,
    /// Whether this is the workspace's `history.json` (else a file in the archive).
    active: bool,
    _lock: HistoryLock,
}

impl Slot {
    /// The workspace's active session, `history_path`; `Held` when another process has it.
    pub fn active(history_path: &Path) -> Result<Self, LockError> {
        Ok(Self {
            _lock: HistoryLock::acquire(history_path)?,
            path: history_path.to_path_buf(),
            active: true,
        })
    }

    /// Session `id`'s own file in the archive of the workspace holding `history_path`;
    /// `Held` when another process has that session open.
    pub fn in_archive(history_path: &Path, id: &str) -> Result<Self, LockError> {
        let archive = Archive::beside(history_path);
        let path = archive.path_of(id).ok_or_else(|| LockError::Io {
            path: id.to_string(),
            source: std::io::Error::other("not a session id"),
        })?;
        archive.ensure_folder().map_err(|e| LockError::Io {
            path: archive.dir().display().to_string(),
            source: std::io::Error::other(e.to_string()),
        })?;
        Ok(Self {
            _lock: HistoryLock::acquire(&path)?,
            path,
            active: false,
        })
    }

    /// The file the session is saved in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether this is the workspace's `history.json`.
    pub fn is_active(&self) -> bool {
        self.active
    }

    /// How the session's file is saved: an archived session's file is always whole (no journal
    /// beside it), so listing and reopening it read one file, as for any archived session.
    pub fn policy(&self) -> CompactionPolicy {
        if self.active {
            CompactionPolicy::default()
        } else {
            CompactionPolicy {
                small_history_bytes: u64::MAX,
                max_journal_percent: 0,
            }
        }
    }
}
