//! Waiting on a condition with a deadline, never for a guessed time: poll until it holds, and
//! fail naming what was awaited (and what was seen) once the deadline has passed.

use std::time::{Duration, Instant};

/// Generous: the machine may be busy with other builds. Only a failing test waits this long.
pub const WAIT: Duration = Duration::from_secs(30);

/// How often a condition is looked at again.
const POLL: Duration = Duration::from_millis(10);

/// Polls `ready` until it gives a value, for at most `within`; then panics, naming `what` and
/// showing `seen()` (the screen, the requests, …: what the test was looking at).
pub fn poll<T>(
    what: &str,
    within: Duration,
    mut ready: impl FnMut() -> Option<T>,
    seen: impl Fn() -> String,
) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = ready() {
            return value;
        }
        if start.elapsed() > within {
            panic!(
                "timed out after {within:?} waiting for {what}{}",
                context(&seen())
            );
        }
        std::thread::sleep(POLL);
    }
}

/// Waits until `ready` holds, for at most `WAIT`.
pub fn until(what: &str, mut ready: impl FnMut() -> bool) {
    poll(what, WAIT, || ready().then_some(()), String::new);
}

/// Waits until `ready` gives a value, for at most `WAIT`.
pub fn until_some<T>(what: &str, ready: impl FnMut() -> Option<T>) -> T {
    poll(what, WAIT, ready, String::new)
}

/// `until` for async tests: the runtime's other tasks go on between two looks. (The deadline
/// is real time, whatever the runtime's clock.)
pub async fn until_async(what: &str, mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        if start.elapsed() > WAIT {
            panic!("timed out after {WAIT:?} waiting for {what}");
        }
        tokio::time::sleep(POLL).await;
    }
}

fn context(seen: &str) -> String {
    if seen.is_empty() {
        String::new()
    } else {
        format!("; it was:\n{seen}")
    }
}
