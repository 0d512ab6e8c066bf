//! Waiting and retrying, as the person sees it in the real binary: the status line names why it
//! waits, and a stream cut mid-answer is asked for again once, saying so, without a doubled answer.

use crate::pty::{CTRL_D, Launch};
use crate::support::{MockServer, Reply, SseBuilder};

#[test]
fn a_rate_limit_is_named_in_the_status_line() {
    let (server, _rt) = MockServer::start_blocking(vec![
        Reply::error_retry_after(429, "slow down", 3),
        SseBuilder::answer("Done waiting."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    s.wait_for("deepseek-flash");
    s.submit("hello");
    s.wait_for("rate limited · retrying in");
    s.wait_for("Done waiting.");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn a_stream_cut_mid_answer_is_asked_again_once_and_the_screen_says_so() {
    let cut = SseBuilder::new()
        .role()
        .content(&["Half of the ans"])
        .build();
    let (server, _rt) = MockServer::start_blocking(vec![cut, SseBuilder::answer("Whole answer.")]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    s.wait_for("deepseek-flash");
    s.submit("hello");
    s.wait_for("Whole answer.");
    let screen = s.screen();
    assert!(
        screen.contains("The stream was cut off mid-answer"),
        "{screen}"
    );
    assert!(
        !screen.contains("Half of the ans"),
        "what was dropped is not shown: {screen}"
    );
    assert_eq!(server.requests().len(), 2);
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}
