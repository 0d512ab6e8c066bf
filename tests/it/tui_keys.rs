//! End to end, issue 22's keys and signals in the real binary in a pseudo-terminal, against the
//! local scripted model server: Ctrl+R's reverse search through an archived session's prompts,
//! Shift+Enter under the kitty keyboard protocol (and the keys named without it), `/status`,
//! what quitting prints, and the title, OSC 9 and bell when the person looks away.

use crate::pty::{CTRL_D, ENTER, ESC, Launch, Pty};
use crate::support;

use std::path::Path;

use support::{MockServer, SseBuilder};

const CTRL_R: &str = "\x12";
/// Shift+Enter as the kitty keyboard protocol sends it.
const SHIFT_ENTER_KITTY: &str = "\x1b[13;2u";
/// What a terminal reporting focus sends when it loses it.
const FOCUS_LOST: &str = "\x1b[O";

fn start(dir: &Path, base_url: &str) -> Pty {
    Launch::ui(dir, base_url).key("sk-keys").start()
}

/// What the program wrote after it left the alternate screen for the last time.
fn after_leaving(p: &Pty) -> String {
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    let left = raw
        .rfind("\x1b[?1049l")
        .expect("the alternate screen was left");
    raw[left..].to_string()
}

/// The active session's id, from the history file.
fn session_id(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("ws/history.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["id"].as_str().unwrap().to_string()
}

#[test]
fn ctrl_r_finds_an_archived_sessions_prompt_cleaned_and_enter_puts_it_in_the_editor() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("first-answer."),
        SseBuilder::answer("second-answer."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    p.submit("deploy the parser");
    p.wait_for("first-answer.");
    p.wait_for("│ idle │");
    p.submit("/new");
    p.wait_for("A new session started");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
    // The archived session's prompt is made hostile, as a planted file could hold it.
    let sessions = dir.path().join("ws/.miniclaw/sessions");
    let file = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .next()
        .unwrap()
        .path();
    let text = std::fs::read_to_string(&file).unwrap();
    let planted = text.replace(
        "deploy the parser",
        "deploy \\u001b]0;pwned\\u0007\\u001b[2Jthe parser",
    );
    assert_ne!(planted, text);
    std::fs::write(&file, planted).unwrap();

    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    p.send("my draft");
    p.wait_for("my draft");
    p.send(CTRL_R);
    p.wait_for("(reverse-i-search)`'");
    p.send("deploy");
    p.wait_for("(reverse-i-search)`deploy': deploy the parser");
    // Esc gives the draft back.
    p.send(ESC);
    p.wait_until("the draft back, the search gone", |s| {
        s.contains("my draft") && !s.contains("reverse-i-search")
    });
    p.send(CTRL_R);
    p.send("parser");
    p.wait_for("`parser': deploy the parser");
    p.send(ENTER);
    p.wait_until("the prompt in the editor", |s| {
        !s.contains("reverse-i-search") && s.contains("deploy the parser")
    });
    // In the editor, not sent: one more Enter sends it.
    assert!(server.requests().len() == 1, "nothing sent yet");
    p.send(ENTER);
    p.wait_for("second-answer.");
    let requests = server.requests();
    let last = requests.last().unwrap().json();
    let prompt = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt.contains("deploy the parser"), "{prompt:?}");
    assert!(
        !prompt.contains('\x1b') && !prompt.contains('\x07'),
        "{prompt:?}"
    );
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    assert!(
        !raw.contains("pwned"),
        "the planted title never reached the terminal"
    );
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn shift_enter_adds_a_line_where_the_terminal_speaks_the_kitty_protocol() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = Launch::ui(dir.path(), &server.url())
        .key("sk-keys")
        .kitty_keyboard()
        .start();
    p.wait_for("Message · Enter sends · Shift+Enter newline");
    p.send("first");
    p.wait_for("first");
    p.send(SHIFT_ENTER_KITTY);
    p.send("second");
    p.wait_until("two lines in the input", |s| {
        s.lines().any(|l| l.starts_with("┃first")) && s.lines().any(|l| l.starts_with("┃second"))
    });
    assert!(server.requests().is_empty(), "Shift+Enter sent nothing");
    // Ctrl+C clears the input, a second one quits.
    p.send("\x03");
    p.wait_for("Ctrl+C again quits");
    p.send("\x03");
    assert_eq!(p.wait_exit(), 0);
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    let pushed = raw.find("\x1b[>1u").expect("the kitty flags were pushed");
    let popped = raw.rfind("\x1b[<1u").expect("and popped on the way out");
    assert!(popped > pushed);
}

#[test]
fn without_the_kitty_protocol_the_flags_are_not_pushed_and_the_keys_are_named() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("Message · Enter sends · Alt+Enter / Ctrl+J newline");
    p.send("\x1bOP"); // F1
    p.wait_for("MiniClaw keys");
    p.wait_for("Alt+Enter / Ctrl+J  new line in the message");
    assert!(!p.screen().contains("Shift+Enter"), "{}", p.screen());
    p.send(ESC);
    p.wait_until("the help closed", |s| !s.contains("MiniClaw keys"));
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
    let raw = String::from_utf8_lossy(&p.raw()).to_string();
    assert!(
        !raw.contains("\x1b[>1u"),
        "no flags for a terminal without the protocol"
    );
}

#[test]
fn slash_status_then_quitting_prints_how_to_resume_and_resume_takes_it_back() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("status-answer.")]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    p.submit("fix the parser");
    p.wait_for("status-answer.");
    p.wait_for("│ idle │");
    p.submit("/status");
    p.wait_for("Model       deepseek-flash (provider deepseek)");
    p.wait_for("Approval    auto");
    p.wait_for("Session     “fix the parser” · id ");
    p.wait_for("MCP         none configured");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
    let id = session_id(dir.path());
    let after = after_leaving(&p);
    assert!(
        after.contains(&format!(
            "To continue this session: miniclaw-tui --resume \"{id}\"  (“fix the parser”)"
        )),
        "{after:?}"
    );
    assert!(
        after.contains("Tokens used: ") && after.contains("over 1 turn"),
        "{after:?}"
    );

    // The command it printed works.
    let mut p = Launch::ui(dir.path(), &server.url())
        .key("sk-keys")
        .args(["--resume", &id])
        .start();
    p.wait_for("That is the session already open.");
    p.wait_for("status-answer.");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn an_empty_session_quits_without_a_resume_line() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
    assert!(!after_leaving(&p).contains("To continue"));
}

#[test]
fn a_turn_that_ends_while_the_terminal_is_unfocused_notifies_and_the_title_follows() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("seen-answer."),
        SseBuilder::answer("away-answer."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    // Focused: the title follows, nothing is sent.
    p.submit("while looking");
    p.wait_for("seen-answer.");
    p.wait_for("│ idle │");
    let raw = |p: &Pty| String::from_utf8_lossy(&p.raw()).to_string();
    p.wait_on("the title back to MiniClaw", || {
        let r = raw(&p);
        let working = r.find("\x1b]2;MiniClaw · working\x07")?;
        r[working..].contains("\x1b]2;MiniClaw\x07").then_some(())
    });
    assert!(!raw(&p).contains("\x1b]9;"), "nothing while focused");
    // Away: the end of the turn is told.
    p.send(FOCUS_LOST);
    p.submit("while away");
    p.wait_for("away-answer.");
    p.wait_on("OSC 9 and a bell", || {
        raw(&p)
            .contains("\x1b]9;MiniClaw: the turn ended · while looking\x07\x07")
            .then_some(())
    });
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
    // The title is given back on the way out (xterm's title stack), before leaving.
    let all = String::from_utf8_lossy(&p.raw()).to_string();
    let pushed = all.find("\x1b[22;2t").expect("the title was pushed");
    let popped = all.rfind("\x1b[23;2t").expect("and popped on exit");
    let left = all.rfind("\x1b[?1049l").unwrap();
    assert!(pushed < popped && popped < left);
}

#[test]
fn always_notifies_while_focused_and_off_never_does() {
    for (setting, told) in [("always", true), ("off", false)] {
        let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("done-answer.")]);
        let dir = tempfile::tempdir().unwrap();
        let mut p = Launch::ui(dir.path(), &server.url())
            .key("sk-keys")
            .env("MINICLAW_NOTIFY", setting)
            .start();
        p.wait_for("deepseek-flash");
        if !told {
            p.send(FOCUS_LOST);
        }
        p.submit("notify me");
        p.wait_for("done-answer.");
        p.wait_for("│ idle │");
        p.send(CTRL_D);
        assert_eq!(p.wait_exit(), 0);
        let raw = String::from_utf8_lossy(&p.raw()).to_string();
        assert_eq!(
            raw.contains("\x1b]9;MiniClaw: the turn ended"),
            told,
            "{setting}"
        );
        assert!(
            raw.contains("\x1b]2;MiniClaw · working\x07"),
            "{setting}: the title follows"
        );
    }
}

#[test]
fn ctrl_f_finds_in_the_conversation_marks_the_match_and_esc_closes_it() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("The zebra-crossing answer."),
        SseBuilder::answer("Another zebra-crossing here."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = start(dir.path(), &server.url());
    p.wait_for("deepseek-flash");
    p.submit("first");
    p.wait_for("The zebra-crossing answer.");
    p.wait_for("│ idle │");
    p.submit("second");
    p.wait_for("Another zebra-crossing here.");
    p.wait_for("│ idle │");
    p.send("\x06"); // Ctrl+F
    p.wait_for("find: ");
    p.send("zebra");
    p.wait_for("find: zebra  2/2");
    p.wait_until("the matches marked", |_| {
        p.reversed().matches("zebra").count() == 2
    });
    p.send(ENTER);
    p.wait_for("find: zebra  1/2");
    p.send(ESC);
    p.wait_until("the find closed", |s| !s.contains("find: zebra"));
    assert!(!p.reversed().contains("zebra"), "{}", p.reversed());
    p.submit("/find Another");
    p.wait_for("find: Another  1/1");
    p.send(ESC);
    // Esc and the next key sent together would read as Alt and that key.
    p.wait_until("the find closed again", |s| !s.contains("find: Another"));
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn a_call_that_waits_for_a_yes_while_the_terminal_is_unfocused_notifies() {
    let write = SseBuilder::new()
        .role()
        .tool_call(
            0,
            "call_0",
            "write_text_file",
            &serde_json::json!({"relative_path": "a.txt", "content": "x\n"}),
            16,
        )
        .finish("tool_calls")
        .done()
        .build();
    let (server, _rt) = MockServer::start_blocking(vec![write, SseBuilder::answer("written.")]);
    let dir = tempfile::tempdir().unwrap();
    let mut p = Launch::ui(dir.path(), &server.url())
        .key("sk-keys")
        .args(["--approval", "ask"])
        .start();
    p.wait_for("approval: ask");
    p.send(FOCUS_LOST);
    p.submit("write a.txt");
    p.wait_on("the title and OSC 9 for the waiting call", || {
        let raw = String::from_utf8_lossy(&p.raw()).to_string();
        (raw.contains("\x1b]2;MiniClaw · waiting for you\x07")
            && raw
                .contains("\x1b]9;MiniClaw: a call waits for your yes or no · write a.txt\x07\x07"))
        .then_some(())
    });
    p.answer("y", "the write approved", |s| s.contains("written."));
    p.wait_for("│ idle │");
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}
