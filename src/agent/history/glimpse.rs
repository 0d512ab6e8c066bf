//! A glimpse of the history: the session's last turns, read from the ends of its files without
//! reading what lies between, so a long session's first frame shows its last page at once while
//! [`super::load`] reads the whole history beside it and then takes over.
//!
//! The snapshot is the pretty JSON `files::write_snapshot` writes. A JSON string never holds a
//! raw newline, so in that layout a line that is exactly `    {` opens a message (the only
//! array at the top level is `messages`, and its elements are the only objects indented by four
//! spaces), and the line `  ]` closes the list. The glimpse parses the messages of the last
//! stretch of the file between such lines, and the journal's last whole lines (one entry each).
//! A file laid out otherwise (edited by hand, written by something else) simply has no glimpse:
//! the first frame then waits for the whole history, as it always did.
//!
//! A glimpse is only ever shown, never saved or sent: the agent works on what `load` returns.

use std::fs::File;
use std::path::Path;

use super::journal::EntryIn;
use super::{files, journal_path};
use crate::agent::session::{Message, Session, title_from_prompt};
use crate::llm::Role;

/// How much of the end of a file is read first; grown fourfold, up to [`MAX_WINDOW`], while the
/// stretch holds no prompt to begin a turn with.
const WINDOW: u64 = 256 * 1024;

/// The most read from the end of a file for a glimpse.
const MAX_WINDOW: u64 = 4 * 1024 * 1024;

/// How much of the beginning of the snapshot is read for the session's id and title.
const HEAD: u64 = 64 * 1024;

/// The line that opens a message in the snapshot (its `{` at offset 5).
const OPENS: &[u8] = b"\n    {\n";

/// The line that closes the list of messages.
const CLOSES: &[u8] = b"\n  ]";

/// The start of the list of messages, after the session's own fields.
const MESSAGES: &[u8] = b"\n  \"messages\": [\n";

/// The session's last turns as the files hold them.
#[derive(Debug)]
pub struct Glimpse {
    /// The session: its id, times and title, and its messages from a prompt on to the end.
    pub session: Session,
    /// Its title as the whole session would give it (the `/rename` name or the first prompt).
    pub title: Option<String>,
}

/// The glimpse of the history at `path`, or none when its files are not laid out as MiniClaw
/// writes them, are not plain files, or hold no prompt near their end.
pub fn glimpse(path: &Path) -> Option<Glimpse> {
    let (file, len) = files::open_plain(path).ok()?;
    let head = read_at(&file, 0, HEAD.min(len))?;
    let (mut session, first) = header(&head)?;
    let title = session
        .title
        .clone()
        .filter(|t| !t.trim().is_empty())
        .or_else(|| first.map(|m| title_from_prompt(m.shown())));
    // None, or a link or a pipe: the load moves such a file aside and goes on without it.
    let journal = files::open_plain(&journal_path(path)).ok();
    let mut window = WINDOW;
    // Whether a journal longer than the window continues the snapshot: the same at every size.
    let mut continues = None;
    loop {
        let from = len.saturating_sub(window);
        let tail = read_at(&file, from, len - from)?;
        // No whole message in the window (the last one is larger than it): a wider one.
        let Some(mut messages) = last_messages(&tail, from == 0) else {
            if from == 0 || window >= MAX_WINDOW {
                return None;
            }
            window *= 4;
            continue;
        };
        let (more, whole_journal) = match &journal {
            Some(journal) => {
                journal_tail(journal, window, &session, messages.last(), &mut continues)?
            }
            None => (Journal::Continues(Vec::new()), true),
        };
        match more {
            Journal::Continues(more) => messages.extend(more),
            Journal::Replaces(newer) => messages = newer,
        }
        if let Some(start) = messages.iter().position(|m| m.role == Role::User) {
            messages.drain(..start);
            session.messages = messages;
            return Some(Glimpse { session, title });
        }
        if (from == 0 && whole_journal) || window >= MAX_WINDOW {
            return None;
        }
        window *= 4;
    }
}

/// `len` bytes of `file` from `offset`.
fn read_at(file: &File, offset: u64, len: u64) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0; usize::try_from(len).ok()?];
    file.read_exact_at(&mut bytes, offset).ok()?;
    Some(bytes)
}

fn find(bytes: &[u8], what: &[u8], from: usize) -> Option<usize> {
    bytes
        .get(from..)?
        .windows(what.len())
        .position(|w| w == what)
        .map(|at| at + from)
}

/// The session's own fields (with no messages) from the start of the snapshot, and its first
/// prompt when the start holds it whole.
fn header(head: &[u8]) -> Option<(Session, Option<Message>)> {
    let list = find(head, MESSAGES, 0)?;
    let mut fields = head[..list].to_vec();
    fields.extend_from_slice(b"\n  \"messages\": []\n}");
    let session: Session = serde_json::from_slice(&fields).ok()?;
    let first = messages_from(head, list + MESSAGES.len() - 1)
        .0
        .into_iter()
        .find(|m| m.role == Role::User);
    Some((session, first))
}

/// The whole messages that open at or after `from` in `bytes`, in order, and where the list
/// closes when they run to its close. They stop at the first that does not parse (the last one
/// of a stretch cut short, or a layout this does not know).
fn messages_from(bytes: &[u8], from: usize) -> (Vec<Message>, Option<usize>) {
    let mut out = Vec::new();
    let mut at = from;
    while let Some(open) = find(bytes, OPENS, at) {
        let start = open + OPENS.len() - 2;
        // Up to the next opening line (less its comma) or the close of the list.
        let (end, closes) = match find(bytes, OPENS, start) {
            Some(next) if bytes[next - 1] == b',' => (next - 1, false),
            Some(_) => return (out, None),
            None => match find(bytes, CLOSES, start) {
                Some(close) => (close, true),
                None => (bytes.len(), false),
            },
        };
        match serde_json::from_slice::<Message>(&bytes[start..end]) {
            Ok(m) => out.push(m),
            Err(_) => return (out, None),
        }
        if closes {
            return (out, Some(end));
        }
        at = end;
    }
    (out, None)
}

/// The messages of the end of the snapshot: from the first that opens in `tail` (the whole list
/// when `whole`) to the close of the list, which closes the file; none unless every one of them
/// parses and the file ends so (a list after `messages` is not the session's).
fn last_messages(tail: &[u8], whole: bool) -> Option<Vec<Message>> {
    let from = if whole { find(tail, MESSAGES, 0)? } else { 0 };
    let (messages, close) = messages_from(tail, from);
    let rest = tail.get(close? + CLOSES.len()..)?;
    let ends = rest
        .strip_prefix(b"\n}")?
        .iter()
        .all(u8::is_ascii_whitespace);
    ends.then_some(messages)
}

/// What the journal adds to the end of the snapshot.
enum Journal {
    /// These messages follow the snapshot's last (none when there is no journal).
    Continues(Vec<Message>),
    /// The journal is longer than the window: its last entries, which follow each other, stand
    /// for the end of the session by themselves.
    Replaces(Vec<Message>),
}

/// The entries at the end of the `journal` (the file and its size) beside the snapshot whose
/// session is `session` and whose last message is `last`, read from at most `window` bytes
/// before its end; and whether that reached its start. `continues` holds whether a journal
/// longer than the window continues the snapshot, once that was read. Entries count as
/// `super::journal::replay` counts them: those of another session, and those before the first
/// that follows `last`, are skipped; the run ends at the first that does not follow the one
/// before (damage, which the load moves aside).
fn journal_tail(
    (file, len): &(File, u64),
    window: u64,
    session: &Session,
    last: Option<&Message>,
    continues: &mut Option<bool>,
) -> Option<(Journal, bool)> {
    let len = *len;
    let from = len.saturating_sub(window);
    // A journal longer than the window counts only if it continues this snapshot at all: one
    // the snapshot superseded (left behind by a compaction cut short) adds nothing to it.
    if from > 0 {
        let follows = match *continues {
            Some(known) => known,
            None => *continues.insert(first_entry_follows(file, len, session, last)?),
        };
        if !follows {
            return Some((Journal::Continues(Vec::new()), true));
        }
    }
    let bytes = read_at(file, from, len - from)?;
    // A window that starts inside the journal starts after its first newline.
    let begin = if from == 0 {
        0
    } else {
        match bytes.iter().position(|&b| b == b'\n') {
            Some(newline) => newline + 1,
            None => bytes.len(),
        }
    };
    let mut run: Vec<Message> = Vec::new();
    let mut prev: Option<(String, usize)> = None;
    for line in bytes[begin..].split_inclusive(|&b| b == b'\n') {
        // A last line without its newline is a write cut short.
        let Some(line) = line.strip_suffix(b"\n") else {
            break;
        };
        let Ok(entry) = serde_json::from_slice::<EntryIn>(line) else {
            break;
        };
        if entry.session != session.id {
            if run.is_empty() {
                continue;
            }
            break;
        }
        let follows = match &prev {
            Some((id, index)) => entry.prev == *id && entry.index == index + 1,
            // From the start of the journal, the first entry follows the snapshot; from inside
            // it, any entry of the session begins the run.
            None if from == 0 => last.is_some_and(|m| m.id == entry.prev),
            None => true,
        };
        if !follows {
            if run.is_empty() {
                continue;
            }
            break;
        }
        prev = Some((entry.message.id.clone(), entry.index));
        run.push(entry.message);
    }
    Some(if from == 0 {
        (Journal::Continues(run), true)
    } else {
        (Journal::Replaces(run), false)
    })
}

/// Whether the journal's first entry follows the snapshot's `last` message (as every entry a
/// journal begins with does until a compaction supersedes it); none when its first line is
/// longer than [`MAX_WINDOW`] or cannot be read.
fn first_entry_follows(
    file: &File,
    len: u64,
    session: &Session,
    last: Option<&Message>,
) -> Option<bool> {
    let mut size = HEAD;
    loop {
        let bytes = read_at(file, 0, size.min(len))?;
        if let Some(newline) = bytes.iter().position(|&b| b == b'\n') {
            let follows = serde_json::from_slice::<EntryIn>(&bytes[..newline])
                .is_ok_and(|e| e.session == session.id && last.is_some_and(|m| m.id == e.prev));
            return Some(follows);
        }
        if size >= len.min(MAX_WINDOW) {
            return None;
        }
        size *= 4;
    }
}

#[cfg(test)]
mod tests;
