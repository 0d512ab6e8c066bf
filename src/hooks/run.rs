//! Running one hook command: `sh -c COMMAND` in the workspace, the event's JSON on stdin, its
//! output read up to a cap, and the whole process group killed at the timeout (a hook that
//! started a background child cannot keep MiniClaw waiting).

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// The most of a hook's stdout and of its stderr that is read (the rest is drained unread).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// How a hook's run ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ran {
    /// It exited (`code` is `None` when a signal ended it).
    Exited {
        /// Its exit status.
        code: Option<i32>,
        /// Its standard output (at most [`MAX_OUTPUT_BYTES`], lossily decoded).
        stdout: String,
        /// Its standard error (likewise).
        stderr: String,
    },
    /// It ran past its timeout and was killed.
    TimedOut(Duration),
    /// The turn was interrupted while it ran; it was killed.
    Interrupted,
    /// It could not be started.
    NotStarted(String),
}

/// Runs `command` with `input` on its stdin, in `cwd`, with `env` added to the environment
/// MiniClaw has (which holds no key: they were taken out at start).
pub async fn run(
    command: &str,
    input: &[u8],
    cwd: &Path,
    env: &[(&str, &str)],
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ran {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return Ran::NotStarted(e.to_string()),
    };
    let group = child.id();
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let input = input.to_vec();
    // Written on its own, so a hook that does not read its input (or prints first) cannot
    // deadlock against a full pipe; a hook that exits without reading is no error.
    let writer = async move {
        if let Some(mut stdin) = stdin {
            let _ = stdin.write_all(&input).await;
            let _ = stdin.shutdown().await;
        }
    };
    // Once the shell exits, what it left running in its group is ended too: a background
    // child holding the pipes open cannot keep MiniClaw waiting.
    let exited = async {
        let status = child.wait().await;
        kill_group(group);
        status
    };
    let work = async {
        let (_, out, err, status) =
            tokio::join!(writer, read_capped(stdout), read_capped(stderr), exited);
        (out, err, status)
    };
    let ended = tokio::select! {
        done = tokio::time::timeout(timeout, work) => done.ok(),
        _ = cancel.cancelled() => {
            kill_group(group);
            return Ran::Interrupted;
        }
    };
    match ended {
        Some((stdout, stderr, status)) => match status {
            Ok(status) => Ran::Exited {
                code: status.code(),
                stdout,
                stderr,
            },
            Err(e) => Ran::NotStarted(e.to_string()),
        },
        None => {
            kill_group(group);
            Ran::TimedOut(timeout)
        }
    }
}

/// Reads `pipe` to its end, keeping the first [`MAX_OUTPUT_BYTES`].
async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>) -> String {
    let Some(mut pipe) = pipe else {
        return String::new();
    };
    let mut kept = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    String::from_utf8_lossy(&kept).into_owned()
}

fn kill_group(group: Option<u32>) {
    if let Some(pid) = group.and_then(|g| i32::try_from(g).ok()) {
        // SAFETY: a plain system call on the group this hook was started in.
        unsafe {
            libc::killpg(pid, libc::SIGKILL);
        }
    }
}
