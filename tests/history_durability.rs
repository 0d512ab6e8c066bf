//! Killing a history writer at any moment leaves a history that loads: a child process saves
//! ever-changing sessions in a loop and is killed (SIGKILL) at random points, many times.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use miniclaw::agent::{Message, Session, history};
use rand::Rng;

const CHILD_ENV: &str = "MINICLAW_TEST_HISTORY_WRITER";

/// The child's job: save forever. Outside the kill test this does nothing.
#[test]
fn writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let path = Path::new(&path);
    let mut session = history::load(path).unwrap().session;
    let mut n = 0usize;
    loop {
        n += 1;
        // Vary the size so renames replace files of different lengths.
        session.push(Message::user(format!(
            "message {n} {}",
            "内容".repeat(n % 500)
        )));
        if session.messages.len() > 200 {
            session = Session::new();
        }
        history::save(path, &session).unwrap();
    }
}

#[test]
fn killing_the_writer_at_random_points_never_leaves_a_broken_history() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let mut loads = 0;
    for _ in 0..40 {
        let mut child = Command::new(&exe)
            .args(["--exact", "writer_child", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(5..80)));
        child.kill().unwrap(); // SIGKILL: no chance to clean up
        child.wait().unwrap();
        if path.exists() {
            let loaded = history::load(&path).unwrap();
            assert!(
                loaded.notice.is_none(),
                "history was corrupt after a kill: {:?}",
                loaded.notice
            );
            assert!(!loaded.session.messages.is_empty());
            loads += 1;
        }
        let corrupt = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("corrupt"));
        assert!(!corrupt);
    }
    assert!(loads > 10, "the writer barely ran ({loads} loads)");
}
