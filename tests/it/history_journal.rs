//! The history's journal: appended steps, their replay, compaction, crash leftovers, damage and
//! planted links, through the public API (`load`, `HistoryStore`, `HistoryWriter`).

use std::fs;
use std::path::{Path, PathBuf};

use miniclaw::agent::history::{self, CompactionPolicy, HistoryStore, HistoryWriter};
use miniclaw::agent::{AgentEvent, EventSink, Message, Session};
use miniclaw::llm::{FunctionCall, ToolCall};

/// Appends only: the journal is never folded in.
const APPEND_ONLY: CompactionPolicy = CompactionPolicy {
    small_history_bytes: 0,
    max_journal_percent: u64::MAX / 200,
};

/// Folds the journal in as soon as it outgrows the snapshot, whatever the size.
const FOLD_OFTEN: CompactionPolicy = CompactionPolicy {
    small_history_bytes: 0,
    max_journal_percent: 100,
};

fn paths() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(history::HISTORY_FILE);
    let journal = history::journal_path(&path);
    (dir, path, journal)
}

/// One step of every kind of field: a call with reasoning, its result, then a cut answer.
fn step(s: &mut Session, n: usize) {
    let id = format!("call-{n}");
    s.push(Message::assistant(
        "",
        Some(format!("thinking {n}")),
        vec![ToolCall {
            id: id.clone(),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!(r#"{{"relative_path":"f{n}.txt"}}"#),
            },
        }],
    ));
    s.push(Message::tool(
        id,
        format!("line one\nline \"two\" 内容 {}", "x".repeat(n * 97 % 3_000)),
    ));
    let mut answer = Message::assistant(format!("answer {n}"), None, vec![]);
    if n.is_multiple_of(3) {
        answer.incomplete = Some(miniclaw::agent::session::Incomplete::Interrupted);
    }
    s.push(answer);
}

/// Loads `path`, checks it holds `expected`, and returns the store that continues it.
fn loads_as(path: &Path, expected: &Session) -> HistoryStore {
    let loaded = history::load(path).unwrap();
    assert_eq!(loaded.notice, None);
    assert_eq!(&loaded.session, expected);
    loaded.store
}

fn journal_lines(journal: &Path) -> usize {
    fs::read(journal)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count())
        .unwrap_or(0)
}

/// A session saved whole once, then `steps` steps appended; the store continues it.
fn appended(path: &Path, steps: usize) -> (HistoryStore, Session) {
    let mut store = HistoryStore::open(path).with_policy(APPEND_ONLY);
    let mut s = Session::new();
    s.push(Message::user("first"));
    store.save(&s).unwrap();
    for n in 0..steps {
        step(&mut s, n);
        store.save(&s).unwrap();
    }
    (store, s)
}

#[test]
fn appended_steps_go_to_the_journal_and_load_back_after_the_snapshot() {
    let (_dir, path, journal) = paths();
    let mut store = HistoryStore::open(&path).with_policy(APPEND_ONLY);
    let mut s = Session::new();
    s.push(Message::user("first"));
    store.save(&s).unwrap();
    let snapshot = fs::read(&path).unwrap();
    assert!(!journal.exists());
    for n in 0..4 {
        step(&mut s, n);
        store.save(&s).unwrap();
        loads_as(&path, &s);
    }
    assert_eq!(
        fs::read(&path).unwrap(),
        snapshot,
        "the snapshot is untouched"
    );
    assert_eq!(journal_lines(&journal), 12, "one line per appended message");
    // Saving again without a change writes nothing.
    let before = fs::read(&journal).unwrap();
    store.save(&s).unwrap();
    assert_eq!(fs::read(&journal).unwrap(), before);
}

#[test]
fn a_store_continues_the_history_load_found_and_appends_to_its_journal() {
    let (_dir, path, journal) = paths();
    let (store, mut s) = appended(&path, 2);
    drop(store);
    let loaded = history::load(&path).unwrap();
    assert_eq!(loaded.session, s);
    let snapshot = fs::read(&path).unwrap();
    let mut store = loaded.store.with_policy(APPEND_ONLY);
    step(&mut s, 7);
    store.save(&s).unwrap();
    assert_eq!(
        fs::read(&path).unwrap(),
        snapshot,
        "appended, not rewritten"
    );
    assert_eq!(journal_lines(&journal), 9);
    loads_as(&path, &s);
}

#[test]
fn a_torn_last_line_is_ignored_and_cut_off_before_the_next_append() {
    let (_dir, path, journal) = paths();
    let (store, mut s) = appended(&path, 2);
    drop(store);
    let whole = fs::read(&journal).unwrap();
    let last_start = whole[..whole.len() - 1]
        .iter()
        .rposition(|&b| b == b'\n')
        .unwrap()
        + 1;
    for cut in [
        last_start + 1,
        (last_start + whole.len()) / 2,
        whole.len() - 1,
    ] {
        fs::write(&journal, &whole[..cut]).unwrap();
        let mut without_last = s.clone();
        without_last.messages.pop();
        let loaded = history::load(&path).unwrap();
        assert_eq!(loaded.notice, None, "a torn entry is not damage");
        assert_eq!(loaded.session.messages, without_last.messages);
    }
    // The store continuing from that load cuts the torn entry off and appends after it.
    let loaded = history::load(&path).unwrap();
    let mut resumed = loaded.session;
    let mut store = loaded.store.with_policy(APPEND_ONLY);
    resumed.push(Message::user("after the kill"));
    store.save(&resumed).unwrap();
    loads_as(&path, &resumed);
    s.messages.pop();
    assert_eq!(resumed.messages[..s.messages.len()], s.messages[..]);
}

#[test]
fn a_damaged_journal_is_kept_aside_and_the_entries_before_the_damage_kept() {
    let (dir, path, journal) = paths();
    let (store, s) = appended(&path, 2);
    drop(store);
    let whole = fs::read(&journal).unwrap();
    // After the first step's three entries.
    let step_end = whole
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(2)
        .unwrap()
        .0
        + 1;
    let mut damaged = whole[..step_end].to_vec();
    damaged.extend_from_slice(b"{\"session\": \"garbled\n");
    damaged.extend_from_slice(&whole[step_end..]);
    fs::write(&journal, &damaged).unwrap();

    let loaded = history::load(&path).unwrap();
    let notice = loaded.notice.unwrap();
    assert!(
        notice.contains("journal") && notice.contains("line 4") && notice.contains("corrupt-"),
        "{notice}"
    );
    // The snapshot (system prompt and "first") and the entries before the damage.
    assert_eq!(loaded.session.messages[..], s.messages[..5]);
    assert!(!journal.exists());
    let aside: Vec<_> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .contains(".journal.corrupt-")
        })
        .collect();
    assert_eq!(aside.len(), 1);
    assert_eq!(
        fs::read(aside[0].path()).unwrap(),
        damaged,
        "kept as it was"
    );
    // Saving goes on: the kept entry is written again, to a new journal.
    let mut session = loaded.session;
    let mut store = HistoryStore::open(&path).with_policy(APPEND_ONLY);
    session.push(Message::user("go on"));
    store.save(&session).unwrap();
    loads_as(&path, &session);
}

#[cfg(unix)]
#[test]
fn a_link_or_a_fifo_as_the_journal_is_moved_aside_not_followed() {
    let (dir, path, journal) = paths();
    let (store, s) = appended(&path, 1);
    drop(store);
    // The real journal elsewhere, the link in its place: its entries would fit, but a link is
    // never read.
    let elsewhere = dir.path().join("elsewhere.journal");
    fs::rename(&journal, &elsewhere).unwrap();
    let kept = fs::read(&elsewhere).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &journal).unwrap();
    let loaded = history::load(&path).unwrap();
    assert!(loaded.notice.unwrap().contains("symbolic link"));
    assert_eq!(loaded.session.messages[..], s.messages[..2]);
    assert!(
        fs::symlink_metadata(&journal).is_err(),
        "the link moved aside"
    );
    assert_eq!(fs::read(&elsewhere).unwrap(), kept, "its target untouched");

    // A FIFO would block a plain open forever.
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &journal,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let loaded = history::load(&path).unwrap();
    assert!(loaded.notice.unwrap().contains("not a regular file"));
    assert!(fs::symlink_metadata(&journal).is_err());
}

#[cfg(unix)]
#[test]
fn appends_never_write_through_a_link_planted_as_the_journal() {
    let (dir, path, journal) = paths();
    let outside = dir.path().join("precious.txt");
    fs::write(&outside, "precious data").unwrap();

    // Planted where a new journal is about to start.
    let mut store = HistoryStore::open(&path).with_policy(APPEND_ONLY);
    let mut s = Session::new();
    store.save(&s).unwrap();
    std::os::unix::fs::symlink(&outside, &journal).unwrap();
    s.push(Message::user("one"));
    store.save(&s).unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), "precious data");
    assert!(fs::symlink_metadata(&journal).unwrap().is_file());

    // Planted in place of a journal that is being continued: the append fails, nothing is
    // written through it, and the next save writes the whole history instead.
    drop(store);
    let mut store = history::load(&path).unwrap().store.with_policy(APPEND_ONLY);
    fs::remove_file(&journal).unwrap();
    std::os::unix::fs::symlink(&outside, &journal).unwrap();
    s.push(Message::user("two"));
    assert!(store.save(&s).is_err());
    assert_eq!(fs::read_to_string(&outside).unwrap(), "precious data");
    store.save(&s).unwrap();
    assert_eq!(fs::read_to_string(&outside).unwrap(), "precious data");
    loads_as(&path, &s);
}

#[test]
fn compaction_keeps_the_content_identical() {
    let (_dir, path, journal) = paths();
    let mut store = HistoryStore::open(&path).with_policy(FOLD_OFTEN);
    let mut s = Session::new();
    s.push(Message::user("你好"));
    store.save(&s).unwrap();
    let mut folds = 0;
    let mut appends = 0;
    for n in 0..40 {
        step(&mut s, n);
        let before = fs::read(&path).unwrap();
        store.save(&s).unwrap();
        if fs::read(&path).unwrap() == before {
            appends += 1;
        } else {
            folds += 1;
            assert!(!journal.exists(), "a new snapshot removes the journal");
            let raw: Session = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
            assert_eq!(raw, s, "the snapshot alone holds everything");
        }
        loads_as(&path, &s);
    }
    assert!(
        folds >= 3 && appends >= 10,
        "{folds} folds, {appends} appends"
    );
}

#[test]
fn a_small_history_is_written_whole_so_the_snapshot_holds_it_all() {
    let (_dir, path, journal) = paths();
    let mut store = HistoryStore::open(&path);
    let mut s = Session::new();
    for n in 0..3 {
        step(&mut s, n);
        store.save(&s).unwrap();
        assert!(!journal.exists());
        let raw: Session = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
        assert_eq!(raw, s);
    }
}

#[test]
fn leftovers_of_a_kill_between_a_new_snapshot_and_the_journal_removal_are_skipped() {
    let (_dir, path, journal) = paths();
    let (mut store, mut s) = appended(&path, 2);
    let old_journal = fs::read(&journal).unwrap();

    // Folded into the snapshot, and the old journal back as if the kill came before removal.
    history::save(&path, &s).unwrap();
    fs::write(&journal, &old_journal).unwrap();
    // The store continuing from that load starts a new journal instead of appending to it.
    let mut store2 = loads_as(&path, &s).with_policy(APPEND_ONLY);
    step(&mut s, 5);
    store2.save(&s).unwrap();
    assert_eq!(journal_lines(&journal), 3);
    loads_as(&path, &s);

    // A rewritten session (its last message replaced, same id) with the old journal beside it:
    // the old entries start right after its end, but follow the message that was replaced.
    let mut replaced = s.clone();
    replaced.messages.truncate(s.messages.len() - 4);
    replaced.push(Message::user("replaced"));
    assert_eq!(replaced.messages.len(), s.messages.len() - 3);
    let stale = fs::read(&journal).unwrap();
    store2.save(&replaced).unwrap();
    assert!(!journal.exists());
    fs::write(&journal, &stale).unwrap();
    loads_as(&path, &replaced);

    // Cleared: the snapshot went first, the journal is left without one.
    store.clear().unwrap();
    fs::write(&journal, &stale).unwrap();
    let loaded = history::load(&path).unwrap();
    assert_eq!((loaded.notice, loaded.session.messages.len()), (None, 1));
    let mut store3 = loaded.store.with_policy(APPEND_ONLY);
    store3.save(&loaded.session).unwrap();
    assert!(!journal.exists(), "the first save replaces what was left");
    loads_as(&path, &loaded.session);
}

#[test]
fn clearing_leaves_neither_the_history_nor_its_journal() {
    let (_dir, path, journal) = paths();
    let (mut store, _) = appended(&path, 1);
    assert!(path.exists() && journal.exists());
    store.clear().unwrap();
    assert!(!path.exists() && !journal.exists());
    store.clear().unwrap();
    let (_store, _) = appended(&path, 1);
    history::clear(&path).unwrap();
    assert!(!path.exists() && !journal.exists());
}

#[test]
fn a_corrupt_snapshot_is_moved_aside_with_its_journal() {
    let (dir, path, journal) = paths();
    let (store, _) = appended(&path, 1);
    drop(store);
    let entries = fs::read(&journal).unwrap();
    fs::write(&path, b"{ not json").unwrap();
    let loaded = history::load(&path).unwrap();
    let notice = loaded.notice.unwrap();
    assert!(notice.contains("its journal as"), "{notice}");
    assert_eq!(loaded.session.messages.len(), 1);
    assert!(!path.exists() && !journal.exists());
    let kept: Vec<Vec<u8>> = fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| fs::read(e.path()).unwrap())
        .collect();
    assert!(kept.contains(&b"{ not json".to_vec()) && kept.contains(&entries));
}

fn errors(rx: &mut tokio::sync::mpsc::UnboundedReceiver<AgentEvent>) -> Vec<String> {
    let mut out = Vec::new();
    while let Ok(e) = rx.try_recv() {
        if let AgentEvent::Error { message } = e {
            out.push(message);
        }
    }
    out
}

#[tokio::test]
async fn the_writer_saves_in_order_and_reports_a_failure_then_recovers() {
    let (_dir, path, journal) = paths();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = EventSink::new(tx);
    let mut writer =
        HistoryWriter::start(HistoryStore::open(&path).with_policy(APPEND_ONLY)).unwrap();
    let mut s = Session::new();
    writer.save(&s, &events);
    for n in 0..20 {
        step(&mut s, n);
        writer.save(&s, &events);
    }
    writer.flush().await;
    loads_as(&path, &s);
    assert!(errors(&mut rx).is_empty());

    // A folder where the journal belongs: the append fails and says so.
    writer.clear().await.unwrap();
    assert!(!path.exists() && !journal.exists());
    let mut s = Session::new();
    writer.save(&s, &events);
    writer.flush().await;
    fs::create_dir(&journal).unwrap();
    s.push(Message::user("lost?"));
    writer.save(&s, &events);
    writer.flush().await;
    let errs = errors(&mut rx);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].starts_with("Could not save the history: "),
        "{errs:?}"
    );
    // Once the obstacle is gone, settling writes the whole session again.
    fs::remove_dir(&journal).unwrap();
    writer.settle(&s, &events).await;
    assert!(errors(&mut rx).is_empty());
    loads_as(&path, &s);
}
