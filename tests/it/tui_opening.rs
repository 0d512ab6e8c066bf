//! End to end: a long session opens on its last page, read from the end of its history, while
//! the whole history is read beside the first frames; the agent then goes on with all of it.
//! A history whose end reads but whose middle is damaged, or one that is a link, is still kept
//! aside as before: its glimpse never stands for a session that does not load.

use crate::pty::{Launch, Pty};
use crate::support;

use std::path::Path;

use miniclaw::agent::history::{self, CompactionPolicy};
use miniclaw::agent::{Message, Session};
use miniclaw::llm::{FunctionCall, ToolCall};
use support::{MockServer, SseBuilder};

/// A session of `turns` turns, each a prompt, a call with a 4 KB result and an answer.
fn long_session(turns: usize) -> Session {
    let mut s = Session::new();
    for t in 0..turns {
        s.push(Message::user(format!("question {t}")));
        let call = ToolCall {
            id: format!("c{t}"),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!("{{\"path\":\"src/f{t}.rs\"}}"),
            },
        };
        s.push(Message::assistant("", None, vec![call]));
        let text = format!("let value = compute({t}); // \"quoted\"\n").repeat(100);
        let result =
            serde_json::json!({"ok": true, "path": format!("src/f{t}.rs"), "content": text});
        s.push(Message::tool(format!("c{t}"), result.to_string()));
        s.push(Message::assistant(format!("answer-{t}."), None, vec![]));
    }
    s
}

fn start(dir: &Path, base_url: &str) -> Pty {
    Launch::ui(dir, base_url).key("sk-opening").start()
}

#[test]
fn a_long_session_opens_on_its_last_page_and_the_agent_goes_on_with_all_of_it() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("fresh-answer.")]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws/history.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // 2,000 turns in the snapshot, two more in its journal, as a long day leaves them.
    let mut session = long_session(2000);
    history::save(&path, &session).unwrap();
    let policy = CompactionPolicy {
        small_history_bytes: 0,
        max_journal_percent: 100,
    };
    let mut store = history::load(&path).unwrap().store.with_policy(policy);
    for t in 0..2 {
        session.push(Message::user(format!("late question {t}")));
        session.push(Message::assistant(
            format!("late-answer-{t}."),
            None,
            vec![],
        ));
        store.save(&session).unwrap();
    }
    assert!(path.with_file_name("history.json.journal").exists());
    // Far past any context window: not compacted by itself, so the reply answers the prompt.
    let config = dir.path().join("home/.config/miniclaw");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[context]\ncompact_at = 0\n").unwrap();
    let mut p = start(dir.path(), &server.url());
    // The first frame: the last page, the timeline still being read.
    p.wait_for("late-answer-1.");
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    assert!(
        raw.contains("Reading the session"),
        "the glimpse was drawn first"
    );
    // Then the whole session: every step in the timeline.
    p.wait_for("Timeline (4002)");
    assert!(p.screen().contains("late-answer-1."), "{}", p.screen());
    // The agent holds all of it: the next request goes on from the journal's last turn, and
    // the history afterwards holds every turn and the new one.
    p.submit("one more");
    p.wait_for("fresh-answer.");
    p.wait_for("│ idle │");
    let body = &server.requests()[0].body;
    assert!(body.contains("late question 1") && body.contains("one more"));
    let saved = history::load(&path).unwrap().session;
    assert_eq!(saved.prompts().count(), 2003);
    assert_eq!(
        saved.messages[..session.messages.len()],
        session.messages[..]
    );
}

#[test]
fn a_history_damaged_in_its_middle_or_linked_elsewhere_is_kept_aside_whatever_its_end_shows() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws/history.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let mut session = long_session(300);
    session.push(Message::user("the last question"));
    session.push(Message::assistant("GLIMPSED-ANSWER", None, vec![]));
    history::save(&path, &session).unwrap();
    // Damage far from the end: the glimpse reads, the whole does not.
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = bytes.len() / 3;
    bytes[middle..middle + 4].copy_from_slice(b"\"}]{");
    std::fs::write(&path, &bytes).unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("could not be read");
    p.wait_until("the glimpse gone", |s| !s.contains("GLIMPSED-ANSWER"));
    let aside = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains(".corrupt-"))
        .count();
    assert_eq!(aside, 1, "kept aside, not overwritten");
    p.send("\x04");
    p.wait_exit();
    // A link to another project's session: not glimpsed, not followed.
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = dir.path().join("elsewhere.json");
    let mut other = long_session(3);
    other.push(Message::user("SECRET-OF-ANOTHER-PROJECT"));
    history::save(&elsewhere, &other).unwrap();
    std::fs::create_dir_all(dir.path().join("ws")).unwrap();
    std::os::unix::fs::symlink(&elsewhere, dir.path().join("ws/history.json")).unwrap();
    let p = start(dir.path(), &server.url());
    p.wait_for("symbolic link");
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    assert!(
        !raw.contains("SECRET-OF-ANOTHER-PROJECT"),
        "the link was followed"
    );
}

#[test]
fn escapes_in_the_glimpsed_turns_never_reach_the_terminal() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ws/history.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    // A long session (so its first frame is the glimpse) whose last turn carries escapes in
    // its prompt, its call's result and its answer.
    let mut session = long_session(300);
    session.push(Message::user("LAST-PROMPT\x1b]0;pwned\x07 and \x1b[2J"));
    let call = ToolCall {
        id: "evil".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_text_file".into(),
            arguments: "{\"path\":\"x\x1b]52;c;cm0gLXJmIH4=\x07\"}".into(),
        },
    };
    session.push(Message::assistant("", None, vec![call]));
    let result =
        serde_json::json!({"ok": true, "content": "RESULT\x1b]52;c;cm0gLXJmIH4=\x07\u{9b}2J"});
    session.push(Message::tool("evil", result.to_string()));
    session.push(Message::assistant(
        "GLIMPSED-END\x1b]0;pwned\x07\x1b[2J\u{9b}2J",
        None,
        vec![],
    ));
    history::save(&path, &session).unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("GLIMPSED-END");
    p.wait_for("Timeline (602)");
    let raw = p.raw();
    assert!(
        String::from_utf8_lossy(&raw).contains("Reading the session"),
        "the glimpse was drawn first"
    );
    for (what, bytes) in [
        ("OSC 52", &b"\x1b]52"[..]),
        ("a title", b"\x1b]0;pwned"),
        ("C1 CSI", "\u{9b}".as_bytes()),
    ] {
        assert!(
            !raw.windows(bytes.len()).any(|w| w == bytes),
            "{what} reached the terminal"
        );
    }
    p.send("\x04");
    p.wait_exit();
}
