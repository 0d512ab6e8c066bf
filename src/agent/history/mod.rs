//! The history: `history.json`, a snapshot of the session, and `history.json.journal`, the
//! messages appended since. Loaded at start, saved after every step at a cost in proportion to
//! what changed, and moved aside rather than overwritten when damaged.
//!
//! On disk:
//! - `history.json` is a whole [`Session`] (pretty JSON, the schema it always had). It is only
//!   ever replaced: a temporary file is written and synced, renamed over it, the folder synced.
//! - `history.json.journal` has one JSON line per message appended after that snapshot:
//!   `{"session":ID,"index":N,"prev":ID,"updated_at":T,"message":{…}}`, where `index` is the
//!   message's position and `prev` the id of the message before it. A save appends its lines
//!   and syncs the file's data (fdatasync) before it counts as done.
//! - Loading reads the snapshot and appends the journal's entries that continue it. When the
//!   journal outgrows the snapshot (or the whole history is small), or the session changed in a
//!   way that is not an append (a new or cleared conversation, repaired messages), a new
//!   snapshot is written and the journal removed ("compaction").
//!
//! Why a kill at any moment leaves a history that loads, with every save that returned:
//! - the snapshot is replaced atomically, so it is always the old one or the new one, whole;
//! - an entry counts once its newline is written, so a kill in an append leaves at most a torn
//!   last line, which loading ignores (and the next append cuts off);
//! - compaction renames the new snapshot in before it removes the journal; a kill between
//!   leaves entries that are in the snapshot already (same index, same id: skipped, so replay
//!   is idempotent) or that continue another session or replaced messages (skipped: the
//!   snapshot was written from the session that held them);
//! - clearing removes the snapshot before the journal; a journal without a snapshot is ignored.
//!
//! A journal line that is whole but not an entry, or an entry that does not follow the one
//! before it, is damage: the journal is moved aside with a notice, like a damaged snapshot, and
//! the conversation goes on from the entries before it. Both files are opened without following
//! a link or blocking on a pipe; either one that is a link or not a plain file is moved aside.

mod archive;
mod checkpoints;
mod files;
mod glimpse;
mod journal;
mod lock;
mod slot;
mod store;
mod writer;

use std::path::{Path, PathBuf};

pub use archive::{Archive, ArchiveError, SESSIONS_DIR, short_id, summary};
pub use checkpoints::{
    CHECKPOINTS_DIR, Checkpoints, FileMark, RememberedInstructions, TurnChanges, TurnMark, hash,
};
pub use glimpse::{Glimpse, glimpse};
pub use lock::{HistoryLock, LockError};
pub use slot::Slot;
pub use store::{CompactionPolicy, HistoryStore};
pub use writer::HistoryWriter;

use super::session::Session;
use store::{Facts, Journal, Known, OnDisk};

pub use crate::paths::HISTORY_FILE;

/// What the journal's name adds to the history's.
pub const JOURNAL_SUFFIX: &str = ".journal";

/// The journal beside the history at `path`: `history.json.journal`. (A `history.json.*` name,
/// which the tools may not write.)
pub fn journal_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(JOURNAL_SUFFIX);
    path.with_file_name(name)
}

/// Why the history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Reading, writing or renaming failed.
    #[error("history file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The session could not be encoded.
    #[error("history could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
    /// A file no longer holds what was written to it (changed behind MiniClaw's back).
    #[error("history file {path} is not as it was written: {reason}")]
    Damaged {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// An append was refused because an earlier save failed; the next save writes it all.
    #[error("an earlier save failed; the next one writes the whole history")]
    OutOfStep,
    /// The writer thread is gone.
    #[error("the history writer stopped")]
    WriterStopped,
    /// The file work, run off the async runtime, did not finish.
    #[error(transparent)]
    Unfinished(#[from] crate::agent::Unfinished),
}

/// A durable write's failure is an I/O error on the file it failed on.
impl From<crate::durable::DurableError> for HistoryError {
    fn from(e: crate::durable::DurableError) -> Self {
        Self::Io {
            path: e.path,
            source: e.source,
        }
    }
}

/// What loading found.
#[derive(Debug)]
pub struct Loaded {
    /// The session to continue (a fresh one when there was none or it was corrupt).
    pub session: Session,
    /// A warning for the person, e.g. that a corrupt file was moved aside.
    pub notice: Option<String>,
    /// The store that continues the files as they were found (its first save appends).
    pub store: HistoryStore,
}

/// Loads the history: the snapshot and the journal entries that continue it. A snapshot that
/// does not parse is moved aside with its journal, never overwritten, and a new conversation
/// starts; a damaged journal is moved aside and the conversation goes on from the entries
/// before the damage. Files are opened without following a link and without blocking: a link
/// (to another conversation), a pipe or anything but a plain file is moved aside like a corrupt
/// file, with a notice. It returns the [`HistoryStore`] that continues what was found.
pub fn load(path: &Path) -> Result<Loaded, HistoryError> {
    let journal = journal_path(path);
    let text = match files::read_plain(path) {
        Ok(bytes) => bytes,
        // A journal without its snapshot is what a crash in the middle of clearing leaves:
        // nothing to continue, and it is replaced by the first save.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Loaded {
                session: Session::new(),
                notice: None,
                store: HistoryStore::open(path),
            });
        }
        Err(e) => match files::unusable(&e) {
            Some(what) => return start_afresh(path, &journal, what),
            None => return Err(files::io_err(path)(e)),
        },
    };
    let snapshot_bytes = text.len() as u64;
    let mut session = match serde_json::from_slice::<Session>(&text) {
        Ok(session) => session,
        Err(e) => return start_afresh(path, &journal, &format!("could not be read ({e})")),
    };
    drop(text);
    let mut notice = None;
    let mut on_disk = OnDisk {
        known: Known::of(&session),
        facts: Facts {
            snapshot_bytes,
            journal: Journal::Fresh,
        },
    };
    match files::read_plain(&journal) {
        Ok(bytes) => {
            let replay = journal::replay(&mut session, &bytes);
            match replay.damage {
                None => {
                    if replay.applied > 0 {
                        on_disk.known = Known::of(&session);
                        on_disk.facts.journal = Journal::Extends {
                            len: replay.valid_len as u64,
                        };
                    }
                }
                // The entries before the damage stay in the session; the files now hold only
                // the snapshot, so the first save appends them again to a new journal.
                Some(why) => {
                    let aside = files::move_aside(&journal)?;
                    notice = Some(format!(
                        "The history journal {why}; it was kept as {} and the conversation goes on from the last whole entry before it.",
                        aside.display()
                    ));
                }
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => match files::unusable(&e) {
            Some(what) => {
                let aside = files::move_aside(&journal)?;
                notice = Some(format!(
                    "The history journal {what}; it was kept as {} and not read.",
                    aside.display()
                ));
            }
            None => return Err(files::io_err(&journal)(e)),
        },
    }
    session.repair();
    Ok(Loaded {
        session,
        notice,
        store: HistoryStore::continuing(path, on_disk),
    })
}

/// Moves the snapshot at `path` aside, and its journal if there is one (it continues nothing
/// now, and may hold what the person wants back), and starts afresh.
fn start_afresh(path: &Path, journal: &Path, what: &str) -> Result<Loaded, HistoryError> {
    let aside = files::move_aside(path)?;
    let journal_note = if files::exists(journal) {
        format!(
            " (its journal as {})",
            files::move_aside(journal)?.display()
        )
    } else {
        String::new()
    };
    Ok(Loaded {
        session: Session::new(),
        notice: Some(format!(
            "The history file {what}; it was kept as {}{journal_note} and a new conversation started.",
            aside.display()
        )),
        store: HistoryStore::open(path),
    })
}

/// Saves the session whole: a new snapshot (written atomically: a crash at any moment leaves
/// either the old or the new history, whole), then the journal removed.
pub fn save(path: &Path, session: &Session) -> Result<(), HistoryError> {
    HistoryStore::open(path).disk.rewrite(session)
}

/// Deletes the history file and its journal (missing files are fine).
pub fn clear(path: &Path) -> Result<(), HistoryError> {
    HistoryStore::open(path).clear()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::Message;
    use std::fs;

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let mut s = Session::new();
        s.push(Message::user("你好"));
        save(&path, &s).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.session, s);
        assert!(loaded.notice.is_none());
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        fs::write(&path, b"{ not json").unwrap();
        let loaded = load(&path).unwrap();
        assert!(loaded.notice.unwrap().contains("corrupt-"));
        assert_eq!(loaded.session.messages.len(), 1);
        assert!(!path.exists());
        let aside: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(fs::read(aside[0].path()).unwrap(), b"{ not json");
    }

    #[test]
    fn a_link_or_a_fifo_as_the_history_is_moved_aside_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other-conversation.json");
        let mut elsewhere = Session::new();
        elsewhere.push(crate::agent::session::Message::user(
            "SECRET from another project",
        ));
        save(&other, &elsewhere).unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        let path = ws.join("history.json");
        std::os::unix::fs::symlink(&other, &path).unwrap();
        let loaded = load(&path).unwrap();
        assert!(
            !format!("{:?}", loaded.session.messages).contains("SECRET"),
            "the link was followed"
        );
        assert!(loaded.notice.unwrap().contains("symbolic link"));
        assert!(
            other.exists() && !path.exists(),
            "the link itself moved aside"
        );
        // A FIFO would block a plain open forever.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let loaded = load(&path).unwrap();
        assert!(loaded.notice.unwrap().contains("not a regular file"));
        assert!(!path.exists());
    }

    #[test]
    fn clear_deletes_the_file_and_tolerates_absence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        save(&path, &Session::new()).unwrap();
        clear(&path).unwrap();
        assert!(!path.exists());
        clear(&path).unwrap();
    }
}
