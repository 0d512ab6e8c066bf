//! Two MiniClaws in one folder: each session is locked on its own, so a second window or a
//! headless run beside the UI works in a session of its own, and only the same session is
//! refused. The real binary, twice, in pseudo-terminals and as a headless process.

use std::path::Path;

use crate::headless_bin::{headless, text};
use crate::pty::{CTRL_D, ESC, Launch};
use crate::support::{MockServer, SseBuilder, wait};

/// The text of every session file in the archive of workspace `ws`.
fn archived(ws: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(ws.join(".miniclaw/sessions")) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "json"))
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect()
}

#[test]
fn two_windows_and_a_headless_run_work_side_by_side_in_sessions_of_their_own() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("one."),
        SseBuilder::answer("two."),
        SseBuilder::answer("three."),
        SseBuilder::answer("four."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let mut first = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    first.wait_for("deepseek-flash");
    first.submit("question from the first window");
    first.wait_for("one.");

    let mut second = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    second.wait_for("has this folder's open session");
    second.submit("question from the second window");
    second.wait_for("two.");
    // /resume waits for the turn's end, which comes a moment after its answer shows.
    second.wait_for("│ idle │");
    // Not the first window's conversation: its request carried only its own prompt.
    let requests = server.requests();
    let sent = requests[1].json()["messages"].to_string();
    assert!(sent.contains("question from the second window"), "{sent}");
    assert!(!sent.contains("question from the first window"), "{sent}");
    // The first window's session is listed in the second's picker, marked, not opened.
    second.submit("/resume");
    second.wait_for("open in another MiniClaw");
    assert!(second.screen().contains("question from the first window"));
    second.send(ESC);

    // A headless run while both are open.
    let out = headless(&ws, &server.url())
        .args(["-p", "question from a script"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("three."),
        "{}",
        text(&out.stdout)
    );

    // The first window goes on in its own session.
    first.submit("another from the first window");
    first.wait_for("four.");
    let fourth = server.requests()[3].json()["messages"].to_string();
    assert!(
        fourth.contains("question from the first window"),
        "{fourth}"
    );
    assert!(!fourth.contains("second window"), "{fourth}");
    assert!(!fourth.contains("from a script"), "{fourth}");

    second.send(CTRL_D);
    assert_eq!(second.wait_exit(), 0);
    first.send(CTRL_D);
    assert_eq!(first.wait_exit(), 0);
    let active = std::fs::read_to_string(ws.join("history.json")).unwrap();
    assert!(active.contains("another from the first window"), "{active}");
    assert!(!active.contains("second window"), "{active}");
    let kept = archived(&ws);
    assert!(
        kept.iter()
            .any(|s| s.contains("question from the second window") && !s.contains("first")),
        "the second window's session is kept in the archive: {kept:?}"
    );
    let sessions = ws.join(".miniclaw/sessions");
    let locks: Vec<_> = std::fs::read_dir(&sessions)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().ends_with(".lock"))
        .collect();
    assert!(locks.is_empty(), "no lock file is left: {locks:?}");
    assert!(!ws.join("history.json.lock").exists());
}

#[test]
fn the_same_session_is_refused_while_another_process_has_it_open() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("one."),
        SseBuilder::answer("two."),
        SseBuilder::answer("three."),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        headless(ws.path(), &server.url())
            .args(args)
            .output()
            .unwrap()
    };
    assert!(run(&["-p", "alpha question"]).status.success());
    let alpha = crate::headless_bin::history_id(ws.path());
    let alpha = alpha.as_str().unwrap().to_string();
    assert!(run(&["--new", "-p", "beta question"]).status.success());

    // Another process (here: this test) has the archived "alpha" session open.
    let held = miniclaw::agent::history::Slot::in_archive(&ws.path().join("history.json"), &alpha)
        .unwrap();
    let out = run(&["--resume", "alpha", "-p", "go on"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("has this session open"), "{stderr}");
    assert!(
        stderr.contains(&format!("pid {}", std::process::id())),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 2, "nothing was sent");

    drop(held);
    let out = run(&["--resume", "alpha", "-p", "go on"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests()[2].json()["messages"].to_string();
    assert!(sent.contains("alpha question"), "{sent}");
}

#[test]
fn a_window_reopening_a_session_open_in_another_says_so_and_keeps_its_own() {
    let (server, _rt) =
        MockServer::start_blocking(vec![SseBuilder::answer("one."), SseBuilder::answer("two.")]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let mut first = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    first.wait_for("deepseek-flash");
    let mut second = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    second.wait_for("has this folder's open session");
    second.submit("a question named zebra");
    second.wait_for("one.");
    // The second window's session is in the archive, saved whole after its turn.
    wait::until("the second window's session in the archive", || {
        archived(&ws).iter().any(|s| s.contains("zebra"))
    });
    first.submit("/resume zebra");
    first.wait_for("has this session open");
    first.submit("still mine");
    first.wait_for("two.");
    let sent = server.requests()[1].json()["messages"].to_string();
    assert!(!sent.contains("zebra"), "{sent}");
    second.send(CTRL_D);
    assert_eq!(second.wait_exit(), 0);
    first.send(CTRL_D);
    assert_eq!(first.wait_exit(), 0);
}

#[test]
fn planted_archive_links_and_lock_files_are_refused_not_followed() {
    let (server, _rt) =
        MockServer::start_blocking(vec![SseBuilder::answer("one."), SseBuilder::answer("two.")]);
    let ws = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    // A cloned repository ships `.miniclaw/sessions` as a link out of the folder, and a lock
    // file whose "pid" is an escape sequence.
    std::fs::create_dir_all(ws.path().join(".miniclaw")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.path().join(".miniclaw/sessions")).unwrap();
    let _active = miniclaw::agent::history::Slot::active(&ws.path().join("history.json")).unwrap();
    std::fs::write(ws.path().join("history.json.lock"), "\x1b]0;owned\x07").unwrap();
    let out = headless(ws.path(), &server.url())
        .args(["-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("link"), "{stderr}");
    assert!(!stderr.contains('\x1b'), "{stderr:?}");
    assert_eq!(
        std::fs::read_dir(outside.path()).unwrap().count(),
        0,
        "nothing was written through the link"
    );
    assert!(server.requests().is_empty());

    // Without the link the run works in a session of its own, says who has the active one
    // (the planted "pid" is not shown), and `--continue` goes on with that run's session.
    std::fs::remove_file(ws.path().join(".miniclaw/sessions")).unwrap();
    let out = headless(ws.path(), &server.url())
        .args(["-p", "first from a script"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("Another MiniClaw has this folder's active session"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("owned") && !stderr.contains('\x1b'),
        "{stderr:?}"
    );
    let out = headless(ws.path(), &server.url())
        .args(["-c", "-p", "and then"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let sent = server.requests()[1].json()["messages"].to_string();
    assert!(sent.contains("first from a script"), "{sent}");
}
