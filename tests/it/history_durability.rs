//! Killing a history writer at any moment leaves a history that loads: a child process saves
//! ever-changing sessions in a loop and is killed (SIGKILL) at random points, many times. One
//! child saves whole files; the other saves as the agent does, appending to the journal and
//! folding it into new snapshots, starting new sessions and clearing now and then.
//!
//! The random points come from a seed printed by each test (shown with its failure, or with
//! `--nocapture`); `MINICLAW_TEST_SEED=N` runs them again from seed N: the same moments to kill
//! at and the same writers' choices (where a kill lands still depends on the machine's speed).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use miniclaw::agent::history::{self, CompactionPolicy};
use miniclaw::agent::{Message, Session};
use miniclaw::llm::Role;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const CHILD_ENV: &str = "MINICLAW_TEST_HISTORY_WRITER";
/// The seed of a child's own random choices.
const CHILD_SEED_ENV: &str = "MINICLAW_TEST_HISTORY_SEED";
/// Replays a run: the seed its output printed.
const SEED_ENV: &str = "MINICLAW_TEST_SEED";

/// The seed of this run: `MINICLAW_TEST_SEED` if set, else a fresh one. Printed either way.
fn seed(test: &str) -> u64 {
    let seed = match std::env::var(SEED_ENV) {
        Ok(text) => text
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{SEED_ENV}={text:?} is not a number")),
        Err(_) => rand::random(),
    };
    eprintln!("{test}: seed {seed} (replay with {SEED_ENV}={seed})");
    seed
}

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

/// The journal child's job: continue the loaded session, one numbered message per save, as
/// `"<pid> <n> …"`, so the parent can tell a lost or repeated entry; after each save returns,
/// `"<pid> <n>"` goes to the progress file, so the parent can tell a lost save.
#[test]
fn journal_writer_child() {
    let Ok(path) = std::env::var(CHILD_ENV) else {
        return;
    };
    let path = Path::new(&path);
    let loaded = history::load(path).unwrap();
    let mut session = loaded.session;
    // Folded often, so kills land in compactions as well as in appends.
    let mut store = loaded.store.with_policy(CompactionPolicy {
        small_history_bytes: 0,
        max_journal_percent: 50,
    });
    let pid = std::process::id();
    let child_seed = std::env::var(CHILD_SEED_ENV)
        .ok()
        .and_then(|s| s.parse().ok());
    let mut rng = StdRng::seed_from_u64(child_seed.unwrap_or(0));
    let mut n = 0usize;
    loop {
        n += 1;
        let size = if rng.random_range(0..5) == 0 {
            20_000
        } else {
            n % 700
        };
        session.push(Message::user(format!("{pid} {n} {}", "内容".repeat(size))));
        // Each child lives for a few dozen saves, so the session grows across children until
        // it is replaced (a whole rewrite) or cleared.
        if session.messages.len() > 60 {
            session = Session::new();
        } else if rng.random_range(0..60) == 0 {
            store.clear().unwrap();
            session = Session::new();
        }
        store.save(&session).unwrap();
        std::fs::write(progress_path(path), format!("{pid} {n}")).unwrap();
    }
}

/// `name`, a test of this module, as the test harness names it (the module path without the
/// crate's name).
fn test_name(name: &str) -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!("{module}::{name}")
}

fn progress_path(history: &Path) -> std::path::PathBuf {
    history.with_file_name("progress")
}

/// Runs `child` against a fresh history `rounds` times, killing it at a random moment (drawn
/// from `seed`, as are the seeds of the children's own choices), and checks the history after
/// each kill; returns how many kills left a history to load.
fn kill_repeatedly(
    child: &str,
    seed: u64,
    rounds: usize,
    max_ms: u64,
    check: impl Fn(&Session, &Path, u32),
) -> usize {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let exe = std::env::current_exe().unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut loads = 0;
    for _ in 0..rounds {
        let mut child = Command::new(&exe)
            .args([
                "--exact",
                &test_name(child),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD_ENV, &path)
            .env(CHILD_SEED_ENV, rng.random::<u64>().to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(rng.random_range(5..max_ms)));
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
            check(&loaded.session, &path, child.id());
            loads += 1;
        }
        let corrupt = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .any(|e| e.file_name().to_string_lossy().contains("corrupt"));
        assert!(!corrupt);
    }
    loads
}

#[test]
fn killing_the_writer_at_random_points_never_leaves_a_broken_history() {
    let seed = seed("the writer");
    let loads = kill_repeatedly("writer_child", seed, 40, 80, |_, _, _| {});
    assert!(loads > 10, "the writer barely ran ({loads} loads)");
}

/// `"<pid> <n>"` at the start of `text`.
fn numbered(text: &str) -> (u32, usize) {
    let mut words = text.split(' ');
    let pid = words.next().and_then(|w| w.parse().ok()).unwrap();
    let n = words.next().and_then(|w| w.parse().ok()).unwrap();
    (pid, n)
}

/// The numbered messages of a session run on without a gap or a repeat (within one child's
/// run each number follows the one before, and a child that continued the history starts at
/// 1), and the last save that returned is there: the history ends with it or with the save
/// after it (or that save started a new session, or a child killed before its progress line
/// saved its first).
fn numbered_in_order(session: &Session, history: &Path, _killed: u32) {
    let mut last: Option<(u32, usize)> = None;
    for m in session.messages.iter().filter(|m| m.role == Role::User) {
        let (pid, n) = numbered(&m.content);
        if let Some((last_pid, last_n)) = last {
            let expected = if last_pid == pid { last_n + 1 } else { 1 };
            assert_eq!(n, expected, "after {last_pid} {last_n} came {pid} {n}");
        }
        last = Some((pid, n));
    }
    let Ok(progress) = std::fs::read_to_string(progress_path(history)) else {
        return;
    };
    if progress.is_empty() {
        return; // killed between the progress file's truncation and its write
    }
    let (acked_pid, acked_n) = numbered(&progress);
    if let Some((pid, n)) = last {
        let acked_or_next = pid == acked_pid && (n == acked_n || n == acked_n + 1);
        // A child's first save may be the history's end without its progress line: killed
        // right after it, in this round or in an earlier one whose successor was killed before
        // it saved anything.
        let first_of_killed = acked_pid != pid && n == 1;
        assert!(
            acked_or_next || first_of_killed,
            "the last save that returned was {acked_pid} {acked_n}, the history ends with {pid} {n}"
        );
    }
}

#[test]
fn killing_the_journal_writer_at_random_points_never_loses_or_repeats_an_entry() {
    let seed = seed("the journal writer");
    let loads = kill_repeatedly("journal_writer_child", seed, 50, 150, numbered_in_order);
    assert!(loads > 10, "the writer barely ran ({loads} loads)");
}
