//! The journal's entries: one JSON line per message appended after the snapshot, saying where
//! it belongs, and their replay onto the snapshot.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::agent::session::{Message, Session};

/// One entry as written.
#[derive(Serialize)]
struct EntryOut<'a> {
    session: &'a str,
    index: usize,
    prev: &'a str,
    updated_at: &'a DateTime<Utc>,
    message: &'a Message,
}

/// One entry as read.
#[derive(Deserialize)]
pub(super) struct EntryIn {
    /// The id of the session it belongs to.
    pub session: String,
    /// The message's position in the session (0 is the system prompt).
    pub index: usize,
    /// The id of the message before it.
    pub prev: String,
    /// The session's time of change once it is appended.
    pub updated_at: DateTime<Utc>,
    /// The message.
    pub message: Message,
}

/// Messages to append to a session whose first `base` messages are saved already.
#[derive(Clone, Debug)]
pub(super) struct Append {
    /// The session's id.
    pub session_id: String,
    /// How many messages are saved already.
    pub base: usize,
    /// The id of the last of them.
    pub prev: String,
    /// The session's time of change after the append.
    pub updated_at: DateTime<Utc>,
    /// The new messages.
    pub messages: Vec<Message>,
}

impl Append {
    /// The journal lines of these messages, each ending in a newline. JSON text in one line
    /// never holds a raw newline (strings escape it), so the newline ends the entry.
    pub fn encode(&self) -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::new();
        let mut prev = self.prev.as_str();
        for (i, message) in self.messages.iter().enumerate() {
            serde_json::to_writer(
                &mut out,
                &EntryOut {
                    session: &self.session_id,
                    index: self.base + i,
                    prev,
                    updated_at: &self.updated_at,
                    message,
                },
            )?;
            out.push(b'\n');
            prev = &message.id;
        }
        Ok(out)
    }

    /// How many messages the session holds after the append.
    pub fn len_after(&self) -> usize {
        self.base + self.messages.len()
    }
}

/// What replaying a journal found.
#[derive(Debug, Default, PartialEq)]
pub(super) struct Replay {
    /// Entries appended to the session.
    pub applied: usize,
    /// The bytes up to the end of the last appended entry.
    pub valid_len: usize,
    /// Set when a whole line is not an entry, or an entry does not follow the one before:
    /// what is wrong. The replay stops there.
    pub damage: Option<String>,
}

/// How an entry relates to the session so far.
enum Fit {
    /// It is the next message.
    Next,
    /// It is in the session already (the snapshot was written with it, and a crash came before
    /// the journal was removed).
    AlreadyIn,
    /// It continues something else: a journal left from before the snapshot was rewritten
    /// (another session, or messages that were replaced).
    Elsewhere,
}

fn fit(session: &Session, entry: &EntryIn) -> Fit {
    if entry.session != session.id {
        return Fit::Elsewhere;
    }
    let len = session.messages.len();
    if entry.index < len {
        if session.messages[entry.index].id == entry.message.id {
            return Fit::AlreadyIn;
        }
        return Fit::Elsewhere;
    }
    let follows = entry.index == len
        && session
            .messages
            .last()
            .is_some_and(|last| last.id == entry.prev);
    if follows { Fit::Next } else { Fit::Elsewhere }
}

/// Appends the entries of `bytes` that continue `session`. An entry counts once its newline is
/// written: a last line without one is a write cut short by a kill, and is ignored. Entries
/// already in the session are skipped, so a replay is idempotent. Entries that continue
/// something else are skipped while none has been appended (a journal the snapshot superseded);
/// after one was, they mean damage.
pub(super) fn replay(session: &mut Session, bytes: &[u8]) -> Replay {
    let mut out = Replay::default();
    let mut start = 0;
    let mut line_no = 0;
    while let Some(newline) = bytes[start..].iter().position(|&b| b == b'\n') {
        line_no += 1;
        let end = start + newline + 1;
        let entry: EntryIn = match serde_json::from_slice(&bytes[start..end - 1]) {
            Ok(entry) => entry,
            Err(e) => {
                out.damage = Some(format!("has a damaged entry on line {line_no} ({e})"));
                return out;
            }
        };
        match fit(session, &entry) {
            Fit::Next => {
                session.updated_at = entry.updated_at;
                session.messages.push(entry.message);
                out.applied += 1;
                out.valid_len = end;
            }
            Fit::AlreadyIn => {}
            Fit::Elsewhere if out.applied == 0 => {}
            Fit::Elsewhere => {
                out.damage = Some(format!(
                    "has an entry on line {line_no} that does not follow the one before it"
                ));
                return out;
            }
        }
        start = end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn append(session: &Session, from: usize) -> Append {
        Append {
            session_id: session.id.clone(),
            base: from,
            prev: session.messages[from - 1].id.clone(),
            updated_at: session.updated_at,
            messages: session.messages[from..].to_vec(),
        }
    }

    fn grown() -> (Session, Session) {
        let base = Session::new();
        let mut full = base.clone();
        full.push(Message::user("one"));
        full.push(Message::assistant("two\nlines", None, vec![]));
        (base, full)
    }

    #[test]
    fn entries_replay_onto_their_snapshot_once() {
        let (base, full) = grown();
        let lines = append(&full, 1).encode().unwrap();
        assert_eq!(lines.iter().filter(|&&b| b == b'\n').count(), 2);
        let mut s = base.clone();
        let r = replay(&mut s, &lines);
        assert_eq!(s, full);
        assert_eq!((r.applied, r.valid_len, r.damage), (2, lines.len(), None));
        // Replayed onto a snapshot that holds them already: nothing changes.
        let mut again = full.clone();
        assert_eq!(replay(&mut again, &lines).applied, 0);
        assert_eq!(again, full);
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_a_damaged_one_is_not() {
        let (base, full) = grown();
        let lines = append(&full, 1).encode().unwrap();
        let first_end = lines.iter().position(|&b| b == b'\n').unwrap() + 1;
        for cut in first_end..lines.len() {
            let mut s = base.clone();
            let r = replay(&mut s, &lines[..cut]);
            assert_eq!((r.applied, r.valid_len, r.damage), (1, first_end, None));
        }
        let mut damaged = lines[..first_end].to_vec();
        damaged.extend_from_slice(b"{\"session\": tru\n");
        damaged.extend_from_slice(&lines[first_end..]);
        let mut s = base.clone();
        let r = replay(&mut s, &damaged);
        assert_eq!(r.applied, 1);
        assert!(r.damage.unwrap().contains("line 2"));
    }

    #[test]
    fn entries_of_another_session_or_history_are_skipped_before_any_fits() {
        let (_, full) = grown();
        let stale = append(&full, 1).encode().unwrap();
        let mut other = Session::new();
        let r = replay(&mut other, &stale);
        assert_eq!((r.applied, r.damage), (0, None));
        assert_eq!(other.messages.len(), 1);
        // After an entry that fitted, one that does not is damage.
        let mut mine = Session::new();
        let mut next = mine.clone();
        next.push(Message::user("mine"));
        let mut bytes = append(&next, 1).encode().unwrap();
        bytes.extend_from_slice(&stale);
        let r = replay(&mut mine, &bytes);
        assert_eq!(r.applied, 1);
        assert!(r.damage.unwrap().contains("does not follow"));
    }
}
