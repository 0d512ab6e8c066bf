//! End to end: the real `miniclaw-tui` started without any key, in a pseudo-terminal with an
//! empty home, against the local scripted model server. The key dialog asks for the key, checks
//! it, saves it to `<config dir>/miniclaw/.env` (0600), and the next message carries it; a key
//! written to that file while the program runs is used by the next send.

use crate::pty::{CTRL_D, ENTER, ESC, Launch, Pty, WAIT};
use crate::support;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use support::{MockServer, RecordedRequest, SseBuilder};

/// The program without a key, its home, config and workspace inside `dir`.
fn start(dir: &Path, base_url: &str) -> Pty {
    Launch::ui(dir, base_url).start()
}

/// Where the program keeps keys for this home.
fn key_file(dir: &Path) -> PathBuf {
    dir.join("home/.config/miniclaw/.env")
}

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// The chat requests the server saw, waiting until there are `n`.
fn chats(server: &MockServer, n: usize, screen: impl Fn() -> String) -> Vec<RecordedRequest> {
    let start = Instant::now();
    loop {
        let chats: Vec<RecordedRequest> = server
            .requests()
            .into_iter()
            .filter(|r| r.path == "/chat/completions")
            .collect();
        if chats.len() >= n {
            return chats;
        }
        assert!(
            start.elapsed() < WAIT,
            "the server saw {} chat requests, not {n}; the screen was:\n{}",
            chats.len(),
            screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(30));
    }
}

/// Replaces the key file's content as an editor would, while the program runs.
fn write_key_file(dir: &Path, text: &str) {
    let path = key_file(dir);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, text).unwrap();
}

#[test]
fn the_key_dialog_checks_saves_and_the_next_message_uses_the_key() {
    const WRONG: &str = "sk-wrong-0000";
    const KEY: &str = "sk-dialog-0123456789abcdef";
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("keyed-answer-done")]);
    server.refuse_key(WRONG);
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path(), &server.url());
    s.wait_for("MiniClaw needs a DeepSeek API key");
    s.wait_for("no API key: /key");

    // A refused key is typed again.
    s.send(WRONG);
    s.wait_for(&"•".repeat(WRONG.len()));
    s.send(ENTER);
    s.wait_for("refused this key (401)");

    // The right key: masked as typed, checked, saved.
    s.send(KEY);
    s.wait_for(&"•".repeat(KEY.len()));
    s.send(ENTER);
    s.wait_for("The model server accepted the key.");
    s.wait_for("(y/n)");
    s.send("y");
    s.wait_for("Saved the key to");
    let file = key_file(dir.path());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("DEEPSEEK_API_KEY={KEY}\n")
    );
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    s.wait_until("the status line without the missing key", |screen| {
        !screen.contains("no API key: /key")
    });

    // The next message carries the key.
    s.submit("hello with a key");
    s.wait_for("keyed-answer-done");
    let chat = &chats(&server, 1, || s.screen())[0];
    assert_eq!(
        chat.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    // The checks went to the configured server, one for each key typed.
    let checks: Vec<Option<String>> = server
        .requests()
        .iter()
        .filter(|r| r.method == "GET" && r.path == "/models")
        .map(|r| r.header("authorization").map(str::to_string))
        .collect();
    assert_eq!(
        checks,
        vec![
            Some(format!("Bearer {WRONG}")),
            Some(format!("Bearer {KEY}"))
        ]
    );
    s.wait_for("│ idle │");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);

    // The key was never drawn, nor sent to the model, nor written anywhere else.
    let raw = String::from_utf8_lossy(&s.raw()).into_owned();
    assert!(!raw.contains(KEY) && !raw.contains("0123456789abcdef"));
    assert!(!chat.body.contains(KEY));
    let history = std::fs::read_to_string(dir.path().join("ws/history.json")).unwrap();
    assert!(!history.contains(KEY));
    let log = dir.path().join("home/.local/share/miniclaw/miniclaw.log");
    assert!(
        !std::fs::read_to_string(log)
            .unwrap_or_default()
            .contains(KEY)
    );
}

#[test]
fn a_key_written_to_the_key_file_while_running_is_used_by_the_next_send() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("first-keyed-answer"),
        SseBuilder::answer("second-keyed-answer"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = start(dir.path(), &server.url());
    s.wait_for("MiniClaw needs a DeepSeek API key");
    // Esc leaves the dialog; the notice naming the key file stays, and the UI is usable.
    s.send(ESC);
    s.wait_until("the dialog closed", |screen| {
        !screen.contains("MiniClaw needs a DeepSeek API key")
    });
    s.wait_for("No DeepSeek API key: set DEEPSEEK_API_KEY in");
    assert!(s.screen().contains(".config/miniclaw/.env"));

    // Sending without a key opens the dialog again; nothing reaches the server.
    s.submit("too early");
    s.wait_for("MiniClaw needs a DeepSeek API key");
    s.send(ESC);
    s.wait_until("the dialog closed", |screen| {
        !screen.contains("MiniClaw needs a DeepSeek API key")
    });
    assert!(server.requests().is_empty());

    write_key_file(dir.path(), "# mine\nDEEPSEEK_API_KEY=sk-written-later-1\n");
    s.submit("now with a key");
    s.wait_for("first-keyed-answer");
    let first = chats(&server, 1, || s.screen());
    assert_eq!(
        first[0].header("authorization"),
        Some("Bearer sk-written-later-1")
    );

    // Changed again: the next send reads it again.
    s.wait_for("│ idle │");
    write_key_file(dir.path(), "DEEPSEEK_API_KEY=sk-written-later-2\n");
    s.submit("and a new key");
    s.wait_for("second-keyed-answer");
    let both = chats(&server, 2, || s.screen());
    assert_eq!(
        both[1].header("authorization"),
        Some("Bearer sk-written-later-2")
    );
    s.wait_for("│ idle │");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}
