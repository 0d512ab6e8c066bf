//! Sessions from scripts: `--new` archives the active session, `--resume NAME` and `--resume`
//! (the newest) reopen one, with the real binary against the local model server.

use crate::headless_bin;
use crate::support;

use headless_bin::{headless, history_id, text};
use serde_json::Value;
use support::{MockServer, SseBuilder};

/// One headless turn on `ws` with `args`; returns the JSON report (and fails with stderr shown).
fn turn(ws: &std::path::Path, url: &str, args: &[&str]) -> Value {
    let out = headless(ws, url)
        .args(args)
        .args(["--output-format", "json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}\n{}", text(&out.stdout), text(&out.stderr)));
    assert!(out.status.success(), "{report}\n{}", text(&out.stderr));
    report
}

/// The user prompts of a recorded request.
fn prompts(request: &support::RecordedRequest) -> Vec<String> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn new_archives_and_resume_reopens_by_title_or_the_newest() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("one."),
        SseBuilder::answer("two."),
        SseBuilder::answer("three."),
        SseBuilder::answer("four."),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let first = turn(ws.path(), &server.url(), &["-p", "alpha question"]);
    let first_id = history_id(ws.path());
    assert_eq!(first["session_id"], first_id);

    let second = turn(ws.path(), &server.url(), &["--new", "-p", "beta question"]);
    assert_ne!(second["session_id"], first_id, "a new session");
    let requests = server.requests();
    assert_eq!(
        prompts(&requests[1]),
        ["beta question"],
        "nothing of the first"
    );

    // By a part of its title: the first session comes back and goes on.
    let third = turn(
        ws.path(),
        &server.url(),
        &["--resume", "alpha", "-p", "gamma"],
    );
    assert_eq!(third["session_id"], first_id);
    assert_eq!(prompts(&server.requests()[2]), ["alpha question", "gamma"]);
    // Without a name: the newest archived one (the beta session).
    let fourth = turn(ws.path(), &server.url(), &["--resume", "-p", "delta"]);
    assert_eq!(fourth["session_id"], second["session_id"]);
    assert_eq!(prompts(&server.requests()[3]), ["beta question", "delta"]);
}

#[test]
fn resuming_what_is_not_there_is_refused_with_a_clear_message() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let ws = tempfile::tempdir().unwrap();
    let out = headless(ws.path(), &server.url())
        .args(["--resume", "nothing-like-it", "-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("no earlier session matches \"nothing-like-it\""),
        "{err}"
    );
    assert!(server.requests().is_empty());
    let out = headless(ws.path(), &server.url())
        .args(["--new", "--resume", "x", "-p", "hi"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "--new and --resume conflict");
}

/// What a script gets by default: each `-p` starts a new session (the first run's is archived,
/// not sent again); `-c` goes on with the newest, and stderr says which one a run uses.
#[test]
fn each_run_starts_fresh_and_continue_goes_on_with_the_newest() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("one."),
        SseBuilder::answer("two."),
        SseBuilder::answer("three."),
    ]);
    let ws = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let out = headless(ws.path(), &server.url())
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let err = run(&["-p", "alpha question"]);
    assert!(err.contains("session: new (-c goes on"), "{err}");
    let first_id = history_id(ws.path());

    let err = run(&["-p", "beta question"]);
    assert_ne!(history_id(ws.path()), first_id, "a new session");
    assert_eq!(prompts(&server.requests()[1]), ["beta question"]);
    assert!(
        err.contains("Archived \u{201c}alpha question\u{201d}"),
        "{err}"
    );

    let second_id = history_id(ws.path());
    let err = run(&["-c", "-p", "gamma"]);
    assert_eq!(history_id(ws.path()), second_id, "the same session");
    assert_eq!(prompts(&server.requests()[2]), ["beta question", "gamma"]);
    assert!(
        err.contains("session: continued \u{201c}beta question\u{201d}"),
        "{err}"
    );
}
