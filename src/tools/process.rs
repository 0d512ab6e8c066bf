//! Runs a child process with bounds: a timeout, an output cap per stream, cancellation, and its
//! output streamed line by line as it comes. Shared by the shell tool and plugin tools.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::error::ToolError;

/// The fallback search path when the environment has none.
pub const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// How far a process may go.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Killed after this long.
    pub timeout: Duration,
    /// At most this many bytes kept of each of stdout and stderr.
    pub output_cap: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            output_cap: 64 * 1024,
        }
    }
}

/// What a finished process left.
#[derive(Clone, Debug, Default)]
pub struct ProcessOutput {
    /// Standard output (at most the cap; invalid UTF-8 replaced).
    pub stdout: String,
    /// Standard error (at most the cap).
    pub stderr: String,
    /// The exit code (`None` when a signal ended it).
    pub exit_code: Option<i32>,
    /// Whether either stream was cut at the cap.
    pub truncated: bool,
}

/// Why a process did not finish normally.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    /// It could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// It ran too long and was killed.
    #[error("timed out after {0} s (the process was stopped)")]
    Timeout(u64),
    /// The turn was interrupted and it was killed.
    #[error("interrupted")]
    Cancelled,
}

impl From<ProcessError> for ToolError {
    fn from(e: ProcessError) -> Self {
        match e {
            ProcessError::Timeout(secs) => ToolError::Timeout(secs),
            ProcessError::Cancelled => ToolError::Cancelled,
            other => ToolError::failed(other.to_string()),
        }
    }
}

/// The PATH given to children: the parent's absolute entries outside `workspace` (so a file the
/// model wrote can never be run in place of a system command), or a fixed default.
pub fn safe_path(workspace: &std::path::Path) -> String {
    let parent = std::env::var_os("PATH").unwrap_or_else(|| DEFAULT_PATH.into());
    // Judged by real location, so a PATH entry that reaches the workspace through a link (or
    // another spelling) is dropped too.
    let real_workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let dirs: Vec<std::path::PathBuf> = std::env::split_paths(&parent)
        .filter(|d| d.is_absolute() && !d.starts_with(workspace))
        .filter(|d| {
            d.canonicalize()
                .map_or(true, |real| !real.starts_with(&real_workspace))
        })
        .collect();
    std::env::join_paths(dirs)
        .ok()
        .and_then(|p| p.into_string().ok())
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| DEFAULT_PATH.to_string())
}

/// Finds `name` in the directories of `path`.
pub fn find_program(name: &str, path: &str) -> Option<std::path::PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

/// Whether `path` is a file the user may run.
fn is_executable(path: &std::path::Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// Runs `cmd` (stdin fed `input`, then closed), streaming each output line to `on_line`.
pub async fn run_bounded(
    mut cmd: Command,
    program: &str,
    input: Option<Vec<u8>>,
    limits: Limits,
    cancel: &CancellationToken,
    on_line: &(dyn Fn(String) + Send + Sync),
) -> Result<ProcessOutput, ProcessError> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    // Dropping the future (interrupt, timeout) must never leave the process running.
    .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: program.to_string(),
        source,
    })?;
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        tokio::spawn(async move {
            // A child that exits without reading its input is fine: ignore the broken pipe.
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let work = async {
        let (out, err, status) = tokio::join!(
            collect(stdout, limits.output_cap, on_line),
            collect(stderr, limits.output_cap, on_line),
            child.wait()
        );
        (out, err, status)
    };
    let ((stdout, out_cut), (stderr, err_cut), status) = tokio::select! {
        r = tokio::time::timeout(limits.timeout, work) => match r {
            Ok(done) => done,
            Err(_) => return Err(ProcessError::Timeout(limits.timeout.as_secs().max(1))),
        },
        _ = cancel.cancelled() => return Err(ProcessError::Cancelled),
    };
    Ok(ProcessOutput {
        stdout,
        stderr,
        exit_code: status.ok().and_then(|s| s.code()),
        truncated: out_cut || err_cut,
    })
}

/// Reads a stream to its end, keeping at most `cap` bytes and reporting kept lines as they come.
/// Bytes past the cap are read and dropped so the child never blocks on a full pipe.
async fn collect<R: AsyncRead + Unpin>(
    reader: Option<R>,
    cap: usize,
    on_line: &(dyn Fn(String) + Send + Sync),
) -> (String, bool) {
    let Some(mut reader) = reader else {
        return (String::new(), false);
    };
    let mut kept: Vec<u8> = Vec::new();
    let mut line: Vec<u8> = Vec::new();
    let mut truncated = false;
    let mut buf = [0u8; 8192];
    loop {
        let n = match reader.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let room = cap.saturating_sub(kept.len());
        let take = n.min(room);
        if take < n {
            truncated = true;
        }
        kept.extend_from_slice(&buf[..take]);
        for &b in &buf[..take] {
            line.push(b);
            // Long lines are sent in pieces so the pane keeps moving.
            if b == b'\n' || line.len() >= 4096 {
                on_line(String::from_utf8_lossy(&line).into_owned());
                line.clear();
            }
        }
    }
    if !line.is_empty() {
        on_line(String::from_utf8_lossy(&line).into_owned());
    }
    (String::from_utf8_lossy(&kept).into_owned(), truncated)
}
