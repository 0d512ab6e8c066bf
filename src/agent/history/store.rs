//! Keeping the files in step with a session: what is on disk, what changed since, and how it is
//! written (appended to the journal, or folded into a new snapshot).

use std::fs::File;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use super::journal::{self, Append};
use super::{HistoryError, files, journal_path};
use crate::agent::session::Session;

/// When the journal is folded into a new snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactionPolicy {
    /// A history (snapshot and journal together) up to this size is written whole at every
    /// save: that costs about what an append costs, and `history.json` alone then holds it.
    pub small_history_bytes: u64,
    /// The journal is folded in once it would exceed this share of the snapshot, in percent:
    /// loading then reads at most that much more, and each byte is rewritten a bounded number
    /// of times however long the conversation grows.
    pub max_journal_percent: u64,
}

impl Default for CompactionPolicy {
    fn default() -> Self {
        Self {
            small_history_bytes: 256 * 1024,
            max_journal_percent: 100,
        }
    }
}

impl CompactionPolicy {
    /// Whether a snapshot of `snapshot` bytes with a journal of `journal` bytes is folded.
    fn compacts(&self, snapshot: u64, journal: u64) -> bool {
        snapshot.saturating_add(journal) <= self.small_history_bytes
            || journal.saturating_mul(100) > snapshot.saturating_mul(self.max_journal_percent)
    }
}

/// The session as saved: enough to tell whether a session in memory only grew since.
#[derive(Clone, Debug)]
pub(super) struct Known {
    session_id: String,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
    ids: Vec<String>,
}

impl Known {
    /// What saving `session` leaves on disk.
    pub fn of(session: &Session) -> Self {
        Self {
            session_id: session.id.clone(),
            created_at: session.created_at,
            updated_at: session.updated_at,
            ids: session.messages.iter().map(|m| m.id.clone()).collect(),
        }
    }

    /// Whether `session` is this one with (maybe) messages appended. Messages are never edited
    /// in place once pushed, so equal ids mean equal messages; comparing ids costs microseconds
    /// even for thousands of messages.
    fn grown_into(&self, session: &Session) -> bool {
        self.session_id == session.id
            && self.created_at == session.created_at
            && !self.ids.is_empty()
            && session.messages.len() >= self.ids.len()
            && self
                .ids
                .iter()
                .zip(&session.messages)
                .all(|(id, m)| *id == m.id)
    }
}

/// What a save has to write.
#[derive(Debug)]
pub(super) enum Change {
    /// Nothing changed.
    Nothing,
    /// Messages were appended.
    Append(Append),
    /// Anything else (a new or cleared session, repaired or replaced messages, or nothing known
    /// of the disk): the whole session.
    Rewrite(Box<Session>),
}

/// Tells what changed since the last save, on the caller's side: it compares ids and copies
/// only the new messages.
#[derive(Debug, Default)]
pub(super) struct Tracker {
    known: Option<Known>,
}

impl Tracker {
    /// What saving `session` has to write; from then on the tracker assumes it was written.
    pub fn change(&mut self, session: &Session) -> Change {
        if let Some(known) = &mut self.known
            && known.grown_into(session)
        {
            let base = known.ids.len();
            if session.messages.len() > base {
                let messages = session.messages[base..].to_vec();
                let prev = known.ids[base - 1].clone();
                known.ids.extend(messages.iter().map(|m| m.id.clone()));
                known.updated_at = session.updated_at;
                return Change::Append(Append {
                    session_id: session.id.clone(),
                    base,
                    prev,
                    updated_at: session.updated_at,
                    messages,
                });
            }
            if known.updated_at == session.updated_at {
                return Change::Nothing;
            }
        }
        self.known = Some(Known::of(session));
        Change::Rewrite(Box::new(session.clone()))
    }

    /// Forgets what is on disk (a save failed, or the files were removed): the next save
    /// writes the whole session.
    pub fn forget(&mut self) {
        self.known = None;
    }
}

/// The journal beside the snapshot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Journal {
    /// None that counts: whatever sits at its name is superseded by the snapshot and is
    /// replaced by the next append.
    Fresh,
    /// Its first `len` bytes are entries that continue the snapshot (a torn entry may follow,
    /// cut off before the next append).
    Extends {
        /// Bytes of whole entries.
        len: u64,
    },
}

/// What the files hold, as far as sizes go.
#[derive(Clone, Copy, Debug)]
pub(super) struct Facts {
    /// The snapshot's size.
    pub snapshot_bytes: u64,
    /// The journal.
    pub journal: Journal,
}

/// What loading found on disk, for the store that continues from it.
#[derive(Clone, Debug)]
pub(super) struct OnDisk {
    pub known: Known,
    pub facts: Facts,
}

/// The files: writes each change, folding the journal into a new snapshot when the policy says.
#[derive(Debug)]
pub(super) struct Disk {
    path: PathBuf,
    journal_path: PathBuf,
    policy: CompactionPolicy,
    /// `None` until a whole rewrite, at start without a loaded history and after a failure:
    /// appends are refused then, since they could not be trusted to continue the files.
    facts: Option<Facts>,
    /// The journal, open for appending.
    file: Option<File>,
}

impl Disk {
    fn new(path: &Path, facts: Option<Facts>) -> Self {
        Self {
            path: path.to_path_buf(),
            journal_path: journal_path(path),
            policy: CompactionPolicy::default(),
            facts,
            file: None,
        }
    }

    /// The snapshot's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `change`. After a failure, appends are refused until a whole rewrite.
    pub fn apply(&mut self, change: Change) -> Result<(), HistoryError> {
        let result = match change {
            Change::Nothing => Ok(()),
            Change::Append(append) => self.append(&append),
            Change::Rewrite(session) => self.rewrite(&session),
        };
        if result.is_err() {
            self.facts = None;
            self.file = None;
        }
        result
    }

    /// Writes `session` as the new snapshot, then removes the journal. A crash between the two
    /// leaves a journal whose entries are in the snapshot already or continue something else:
    /// loading skips them.
    pub fn rewrite(&mut self, session: &Session) -> Result<(), HistoryError> {
        self.file = None;
        let snapshot_bytes = files::write_snapshot(&self.path, session)?;
        files::remove_durably(&self.journal_path)?;
        self.facts = Some(Facts {
            snapshot_bytes,
            journal: Journal::Fresh,
        });
        Ok(())
    }

    fn append(&mut self, append: &Append) -> Result<(), HistoryError> {
        let facts = self.facts.ok_or(HistoryError::OutOfStep)?;
        let lines = append.encode()?;
        let journal_len = match facts.journal {
            Journal::Fresh => 0,
            Journal::Extends { len } => len,
        };
        let after = journal_len + lines.len() as u64;
        if self.policy.compacts(facts.snapshot_bytes, after) {
            return self.compact(facts, &lines, append.len_after());
        }
        let file = match self.file.take() {
            Some(file) => file,
            None => match facts.journal {
                Journal::Fresh => files::create_journal(&self.journal_path)?,
                Journal::Extends { len } => files::open_journal(&self.journal_path, len)?,
            },
        };
        let file = self.file.insert(file);
        files::append_durably(file, &self.journal_path, &lines)?;
        self.facts = Some(Facts {
            journal: Journal::Extends { len: after },
            ..facts
        });
        Ok(())
    }

    /// Folds the journal and the new `lines` into a new snapshot. The session is read back from
    /// the files, on this (the writer's) thread, rather than copied from memory on the caller's:
    /// only what is on disk, replayed as loading would, goes into it.
    fn compact(
        &mut self,
        facts: Facts,
        lines: &[u8],
        len_after: usize,
    ) -> Result<(), HistoryError> {
        self.file = None;
        let damaged = |path: &Path, reason: String| HistoryError::Damaged {
            path: path.to_path_buf(),
            reason,
        };
        let text = files::read_plain(&self.path).map_err(files::io_err(&self.path))?;
        let mut session: Session = serde_json::from_slice(&text)
            .map_err(|e| damaged(&self.path, format!("it no longer parses ({e})")))?;
        drop(text);
        let mut entries = match facts.journal {
            Journal::Fresh => Vec::new(),
            Journal::Extends { len } => {
                let mut bytes = files::read_plain(&self.journal_path)
                    .map_err(files::io_err(&self.journal_path))?;
                let whole = usize::try_from(len).unwrap_or(usize::MAX);
                if bytes.len() < whole {
                    return Err(damaged(
                        &self.journal_path,
                        "it is shorter than written".into(),
                    ));
                }
                bytes.truncate(whole);
                bytes
            }
        };
        entries.extend_from_slice(lines);
        let replay = journal::replay(&mut session, &entries);
        if let Some(why) = replay.damage {
            return Err(damaged(&self.journal_path, format!("it {why}")));
        }
        if session.messages.len() != len_after {
            return Err(damaged(
                &self.journal_path,
                "its entries do not continue the snapshot".into(),
            ));
        }
        self.rewrite(&session)
    }

    /// Removes the snapshot, then the journal: a crash between leaves a journal with no
    /// snapshot to continue, which loading ignores.
    pub fn clear(&mut self) -> Result<(), HistoryError> {
        self.file = None;
        self.facts = None;
        files::remove_durably(&self.path)?;
        files::remove_durably(&self.journal_path)
    }
}

/// A history file kept in step with a session: each save writes only what changed since the
/// last one (appended messages go to the journal). It does the file work on the calling
/// thread; the agent uses a [`super::HistoryWriter`], which does it on a thread of its own.
#[derive(Debug)]
pub struct HistoryStore {
    pub(super) tracker: Tracker,
    pub(super) disk: Disk,
}

impl HistoryStore {
    /// A store of the history at `path` that knows nothing of its files: its first save
    /// writes the whole session. [`super::load`] returns one that continues what it read.
    pub fn open(path: &Path) -> Self {
        Self {
            tracker: Tracker::default(),
            disk: Disk::new(path, None),
        }
    }

    /// A store continuing what loading `path` found on disk: its first save appends.
    pub(super) fn continuing(path: &Path, on_disk: OnDisk) -> Self {
        let OnDisk { known, facts } = on_disk;
        Self {
            tracker: Tracker { known: Some(known) },
            disk: Disk::new(path, Some(facts)),
        }
    }

    /// Folds the journal as `policy` says (tests and benches; the default suits the agent).
    pub fn with_policy(mut self, policy: CompactionPolicy) -> Self {
        self.disk.policy = policy;
        self
    }

    /// Saves `session`: appends its new messages to the journal and syncs it, or writes it
    /// whole when it changed otherwise or the journal is due to be folded in.
    pub fn save(&mut self, session: &Session) -> Result<(), HistoryError> {
        let change = self.tracker.change(session);
        self.disk
            .apply(change)
            .inspect_err(|_| self.tracker.forget())
    }

    /// Deletes the history and its journal (missing files are fine).
    pub fn clear(&mut self) -> Result<(), HistoryError> {
        self.tracker.forget();
        self.disk.clear()
    }

    /// The snapshot's path.
    pub fn path(&self) -> &Path {
        self.disk.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::Message;

    #[test]
    fn only_appended_messages_are_an_append() {
        let mut s = Session::new();
        let mut t = Tracker::default();
        assert!(matches!(t.change(&s), Change::Rewrite(_)), "nothing known");
        assert!(matches!(t.change(&s), Change::Nothing));
        s.push(Message::user("a"));
        s.push(Message::user("b"));
        match t.change(&s) {
            Change::Append(a) => {
                assert_eq!((a.base, a.messages.len()), (1, 2));
                assert_eq!(a.prev, s.messages[0].id);
            }
            other => panic!("{other:?}"),
        }
        s.messages.remove(1);
        assert!(matches!(t.change(&s), Change::Rewrite(_)), "a message went");
        s.messages[1] = Message::user("c");
        assert!(
            matches!(t.change(&s), Change::Rewrite(_)),
            "a message replaced"
        );
        assert!(matches!(t.change(&Session::new()), Change::Rewrite(_)));
        t.forget();
        assert!(matches!(t.change(&s), Change::Rewrite(_)));
    }

    #[test]
    fn small_histories_are_written_whole_and_large_journals_folded() {
        let p = CompactionPolicy::default();
        assert!(p.compacts(10_000, 500));
        assert!(!p.compacts(1 << 30, 1 << 20));
        assert!(p.compacts(1 << 30, (1 << 30) + 1));
    }
}
