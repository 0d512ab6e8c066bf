use super::*;
use crate::agent::history::{CompactionPolicy, HistoryStore, load, save};
use crate::llm::{FunctionCall, ToolCall};
use std::fs;

/// A session of `turns` turns, each a prompt, a call, its `bytes`-long result and an answer.
fn grown(turns: usize, bytes: usize) -> Session {
    let mut s = Session::new();
    s.title = None;
    for t in 0..turns {
        s.push(Message::user(format!(
            "question {t}: \"quoted\"\nsecond line"
        )));
        let call = ToolCall {
            id: format!("call-{t}"),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!("{{\"path\":\"f{t}\"}}"),
            },
        };
        s.push(Message::assistant("", Some("thinking".into()), vec![call]));
        let body = format!(
            "{{\"ok\":true,\"text\":\"{}\\n    {{\\n  ]\"}}",
            "x".repeat(bytes)
        );
        s.push(Message::tool(format!("call-{t}"), body));
        s.push(Message::assistant(format!("answer {t}"), None, vec![]));
    }
    s
}

/// The end of `full` from the first prompt `glimpse` begins with.
fn tail_of(full: &Session, glimpse: &Glimpse) -> Vec<Message> {
    let first = &glimpse.session.messages[0];
    let at = full
        .messages
        .iter()
        .position(|m| m.id == first.id)
        .expect("in the session");
    full.messages[at..].to_vec()
}

fn history(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join(crate::paths::HISTORY_FILE)
}

#[test]
fn a_long_snapshot_is_glimpsed_from_its_end_as_load_reads_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(&dir);
    // Far more than a window: the glimpse reads only the end.
    let session = grown(400, 2000);
    save(&path, &session).unwrap();
    assert!(fs::metadata(&path).unwrap().len() > 3 * WINDOW);
    let g = glimpse(&path).expect("a glimpse");
    let loaded = load(&path).unwrap().session;
    assert_eq!(g.session.id, loaded.id);
    assert_eq!(g.title, loaded.title());
    assert_eq!(g.title.as_deref(), Some("question 0: \"quoted\""));
    assert_eq!(g.session.messages[0].role, Role::User);
    assert!(g.session.messages.len() >= 8, "several turns");
    assert!(
        g.session.messages.len() < loaded.messages.len() / 2,
        "only the end"
    );
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
    // A small history is glimpsed whole, from its first prompt.
    let small = grown(2, 10);
    save(&path, &small).unwrap();
    let g = glimpse(&path).unwrap();
    assert_eq!(g.session.messages, small.messages[1..].to_vec());
}

#[test]
fn the_journal_continues_the_glimpse_as_it_continues_the_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(&dir);
    let policy = CompactionPolicy {
        small_history_bytes: 0,
        max_journal_percent: 1000,
    };
    let mut session = grown(100, 2000);
    let mut store = HistoryStore::open(&path).with_policy(policy);
    store.save(&session).unwrap();
    let mut store = load(&path).unwrap().store.with_policy(policy);
    for t in 0..3 {
        session.push(Message::user(format!("later {t}")));
        session.push(Message::assistant(
            format!("later answer {t}"),
            None,
            vec![],
        ));
        store.save(&session).unwrap();
    }
    assert!(fs::metadata(journal_path(&path)).unwrap().len() > 0);
    let g = glimpse(&path).unwrap();
    let loaded = load(&path).unwrap().session;
    assert_eq!(loaded, session);
    assert_eq!(
        g.session.messages.last().unwrap().content.as_str(),
        "later answer 2"
    );
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
    // A journal longer than a window: its own last entries stand for the end.
    for t in 3..200 {
        session.push(Message::user(format!("later {t} {}", "y".repeat(2000))));
        session.push(Message::assistant(
            format!("later answer {t}"),
            None,
            vec![],
        ));
        store.save(&session).unwrap();
    }
    assert!(fs::metadata(journal_path(&path)).unwrap().len() > WINDOW);
    let g = glimpse(&path).unwrap();
    let loaded = load(&path).unwrap().session;
    assert_eq!(loaded, session);
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
    assert!(g.session.messages.len() < 300);
}

#[test]
fn a_stale_or_torn_journal_adds_only_what_load_would() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(&dir);
    let session = grown(20, 100);
    save(&path, &session).unwrap();
    // Another session's journal, and a torn last line.
    let mut other = grown(1, 10);
    other.push(Message::user("SHOULD NOT SHOW"));
    let mut lines = super::super::journal::Append {
        session_id: other.id.clone(),
        base: 5,
        prev: other.messages[4].id.clone(),
        updated_at: other.updated_at,
        messages: vec![other.messages[5].clone()],
    }
    .encode()
    .unwrap();
    let next = Message::user("mine, torn");
    let mine = super::super::journal::Append {
        session_id: session.id.clone(),
        base: session.messages.len(),
        prev: session.messages.last().unwrap().id.clone(),
        updated_at: session.updated_at,
        messages: vec![next],
    }
    .encode()
    .unwrap();
    lines.extend_from_slice(&mine[..mine.len() - 1]);
    fs::write(journal_path(&path), &lines).unwrap();
    let g = glimpse(&path).unwrap();
    let loaded = load(&path).unwrap().session;
    assert_eq!(loaded.messages.len(), session.messages.len());
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
    assert!(!format!("{:?}", g.session.messages).contains("SHOULD NOT SHOW"));
}

#[test]
fn files_not_as_miniclaw_writes_them_have_no_glimpse() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(&dir);
    let session = grown(5, 100);
    // Compact JSON: another layout.
    fs::write(&path, serde_json::to_vec(&session).unwrap()).unwrap();
    assert!(glimpse(&path).is_none());
    // Cut short: the list never closes.
    let pretty = serde_json::to_vec_pretty(&session).unwrap();
    fs::write(&path, &pretty[..pretty.len() - 200]).unwrap();
    assert!(glimpse(&path).is_none());
    // A message in the end that does not parse.
    let text = String::from_utf8(pretty.clone()).unwrap();
    let broken = text.replacen("\"role\": \"assistant\"", "\"role\": 7", 100);
    fs::write(&path, broken).unwrap();
    assert!(glimpse(&path).is_none());
    // No prompt at all.
    fs::write(&path, serde_json::to_vec_pretty(&Session::new()).unwrap()).unwrap();
    assert!(glimpse(&path).is_none());
    // A link to a real history, and a FIFO (which must not block).
    let elsewhere = dir.path().join("elsewhere.json");
    fs::write(&elsewhere, &pretty).unwrap();
    fs::remove_file(&path).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
    assert!(glimpse(&path).is_none());
    fs::remove_file(&path).unwrap();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    assert!(glimpse(&path).is_none());
    // None at all.
    fs::remove_file(&path).unwrap();
    assert!(glimpse(&path).is_none());
}

fn turn(s: &mut Session, t: usize, pad: usize) {
    s.push(Message::user(format!("q{t} {}", "y".repeat(pad))));
    s.push(Message::assistant(format!("answer {t}"), None, vec![]));
}

/// A session of `snapshot` turns saved whole, then `journal` more turns appended one save at a
/// time (some 2 KB a turn, never compacted into the snapshot); its store.
fn journaled(path: &std::path::Path, snapshot: usize, journal: usize) -> (Session, HistoryStore) {
    let policy = CompactionPolicy {
        small_history_bytes: 0,
        max_journal_percent: 1000,
    };
    let mut session = Session::new();
    for t in 0..snapshot {
        turn(&mut session, t, 2000);
    }
    HistoryStore::open(path)
        .with_policy(policy)
        .save(&session)
        .unwrap();
    let mut store = load(path).unwrap().store.with_policy(policy);
    for t in snapshot..snapshot + journal {
        turn(&mut session, t, 2000);
        store.save(&session).unwrap();
    }
    assert!(fs::metadata(journal_path(path)).unwrap().len() > WINDOW);
    (session, store)
}

/// A compaction (or any rewrite) that renamed its new snapshot in, then was killed before
/// it removed the journal: load skips every entry (all already in the snapshot).
#[test]
fn a_long_journal_a_cut_short_compaction_left_behind_adds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let (mut session, _store) = journaled(&path, 100, 200);
    // The compaction's new snapshot: everything, and the turn whose save triggered it.
    session.push(Message::user("FINAL QUESTION"));
    session.push(Message::assistant("FINAL ANSWER", None, vec![]));
    fs::write(&path, serde_json::to_vec_pretty(&session).unwrap()).unwrap();
    let loaded = load(&path).unwrap().session;
    assert_eq!(
        loaded, session,
        "load: the snapshot, the stale journal skipped"
    );
    let g = glimpse(&path).expect("a glimpse");
    let last = g.session.messages.last().unwrap().content.to_string();
    assert_eq!(
        last, "FINAL ANSWER",
        "the glimpse ends where the session does"
    );
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
}

/// A field after `messages` (another writer, a planted file): load ignores it, and the glimpse
/// does not take its elements for the session's last messages. (MiniClaw writes `messages`
/// last; a list after it longer than the widest window could not be told apart from it, and
/// would be shown until the whole session took its place.)
#[test]
fn a_list_after_the_messages_is_never_taken_for_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let mut session = Session::new();
    for t in 0..200 {
        turn(&mut session, t, 2000);
    }
    let mut fake = Session::new();
    for _ in 0..10 {
        fake.push(Message::user("NOT IN THE SESSION"));
        fake.push(Message::assistant("FAKE ANSWER", None, vec![]));
    }
    let mut value = serde_json::to_value(&session).unwrap();
    value["zz_extra"] = serde_json::to_value(&fake.messages[1..]).unwrap();
    fs::write(&path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
    assert!(fs::metadata(&path).unwrap().len() > WINDOW);
    let loaded = load(&path).unwrap();
    assert!(loaded.notice.is_none());
    assert_eq!(loaded.session, session);
    assert!(
        glimpse(&path).is_none(),
        "not laid out as MiniClaw writes it"
    );
    // Without the field, the same session is glimpsed.
    save(&path, &session).unwrap();
    let g = glimpse(&path).expect("a glimpse");
    assert_eq!(g.session.messages, tail_of(&session, &g));
}

#[test]
fn a_long_journal_whose_last_turn_is_large_is_glimpsed_from_a_wider_window() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let (mut session, mut store) = journaled(&path, 300, 200);
    session.push(Message::user("read both"));
    for i in 0..2 {
        let call = crate::llm::ToolCall {
            id: format!("r{i}"),
            kind: "function".into(),
            function: crate::llm::FunctionCall {
                name: "read_text_file".into(),
                arguments: "{}".into(),
            },
        };
        session.push(Message::assistant("", None, vec![call]));
        session.push(Message::tool(
            format!("r{i}"),
            "line\n".repeat(150 * 1024 / 5),
        ));
    }
    session.push(Message::assistant("done", None, vec![]));
    store.save(&session).unwrap();
    let j = fs::metadata(journal_path(&path)).unwrap().len();
    assert!(j > WINDOW);
    let g = glimpse(&path).expect("a glimpse: the first frame would wait for the whole history");
    let loaded = load(&path).unwrap().session;
    assert_eq!(loaded, session);
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
}

/// A turn that ended on a result larger than the first window (an observation of 256 KiB takes
/// more in the file once its quotes are escaped): no message starts in that window, so a wider
/// one is read.
#[test]
fn a_last_message_larger_than_the_window_is_glimpsed_from_a_wider_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = history(&dir);
    let mut session = grown(100, 2000);
    session.push(Message::user("read the big one"));
    let call = ToolCall {
        id: "big".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_text_file".into(),
            arguments: "{}".into(),
        },
    };
    session.push(Message::assistant("", None, vec![call]));
    let text = "\"quoted\" ".repeat(240 * 1024 / 9);
    let body = serde_json::json!({"ok": true, "text": text}).to_string();
    session.push(Message::tool("big", body));
    save(&path, &session).unwrap();
    let g = glimpse(&path).expect("a glimpse from a wider window");
    let loaded = load(&path).unwrap().session;
    assert_eq!(g.session.messages, tail_of(&loaded, &g));
    assert_eq!(g.session.messages.last(), loaded.messages.last());
    assert!(
        g.session
            .messages
            .iter()
            .any(|m| m.content.as_str() == "read the big one")
    );
}
