//! Runs a child process with bounds: a timeout, an output cap per stream, cancellation, and its
//! output streamed line by line as it comes. Shared by the shell tool and plugin tools.
//!
//! The child leads a process group of its own, and a call ends the whole group however it ends
//! (done, timed out, interrupted, or its future dropped): nothing the child started outlives the
//! call. Once the child itself has exited, what still holds its output pipes is something it left
//! behind (`cmd &`); after a short grace that is ended too, so it cannot keep the call open.

use std::pin::pin;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use futures::FutureExt;
use futures::future::FusedFuture;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use super::error::ToolError;

/// How long output may still come after the child has exited before what holds its pipes (a
/// process it left behind) is ended, and again before reading stops for good.
const AFTER_EXIT_GRACE: Duration = Duration::from_millis(500);
/// Output is read in pieces of this many bytes.
const READ_BYTES: usize = 8192;
/// A line longer than this is reported in pieces, so the live pane keeps moving.
const MAX_LIVE_LINE: usize = 4096;

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
    // A group of its own: everything it starts can be ended with it.
    .process_group(0)
    // Dropping the future (interrupt, timeout) must never leave the process running.
    .kill_on_drop(true);
    let mut child = cmd.spawn().map_err(|source| ProcessError::Spawn {
        program: program.to_string(),
        source,
    })?;
    // Ends the whole group on every way out of this function, the future being dropped included.
    let group = ProcessGroup::of(&child);
    if let (Some(bytes), Some(mut stdin)) = (input, child.stdin.take()) {
        tokio::spawn(async move {
            // A child that exits without reading its input is fine: ignore the broken pipe.
            let _ = stdin.write_all(&bytes).await;
            let _ = stdin.shutdown().await;
        });
    }
    let mut out = Captured::new(limits.output_cap);
    let mut err = Captured::new(limits.output_cap);
    let streams = Streams {
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    };
    let work = run_to_end(&mut child, &group, streams, &mut out, &mut err, on_line);
    let status = tokio::select! {
        r = tokio::time::timeout(limits.timeout, work) => match r {
            Ok(status) => status,
            Err(_) => return Err(ProcessError::Timeout(limits.timeout.as_secs().max(1))),
        },
        _ = cancel.cancelled() => return Err(ProcessError::Cancelled),
    };
    let (stdout, out_cut) = out.into_text();
    let (stderr, err_cut) = err.into_text();
    Ok(ProcessOutput {
        stdout,
        stderr,
        exit_code: status.and_then(|s| s.code()),
        truncated: out_cut || err_cut,
    })
}

/// A child's output pipes.
struct Streams {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
}

/// Reads both streams while waiting for the child; once it has exited, gives what it left
/// behind a short grace to close the pipes, then ends its group and stops reading.
async fn run_to_end(
    child: &mut Child,
    group: &ProcessGroup,
    streams: Streams,
    out: &mut Captured,
    err: &mut Captured,
    on_line: &(dyn Fn(String) + Send + Sync),
) -> Option<ExitStatus> {
    let reading = async {
        tokio::join!(
            out.read_all(streams.stdout, on_line),
            err.read_all(streams.stderr, on_line)
        );
    };
    // Read while waiting: the child may block on a full pipe until its output is read.
    let mut reading = pin!(reading.fuse());
    let exited = tokio::select! {
        status = child.wait() => Some(status),
        () = &mut reading => None,
    };
    let status = match exited {
        Some(status) => status,
        None => child.wait().await,
    };
    if !reading.is_terminated()
        && tokio::time::timeout(AFTER_EXIT_GRACE, &mut reading)
            .await
            .is_err()
    {
        group.kill();
        // A process that left the group (setsid) may still hold the pipes: stop reading.
        let _ = tokio::time::timeout(AFTER_EXIT_GRACE, &mut reading).await;
    }
    status.ok()
}

/// The process group a child leads, ended when this is dropped.
struct ProcessGroup(Option<Pid>);

impl ProcessGroup {
    /// The group of `child`, which was started with `process_group(0)`.
    fn of(child: &Child) -> Self {
        let pid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            // Never 1: signalling "group 1" would reach every process we may signal.
            .filter(|id| *id > 1)
            .and_then(Pid::from_raw);
        Self(pid)
    }

    /// Kills every process of the group. The group's id cannot name another group while any of
    /// its processes lives; once all are gone, ids are handed out again only after the kernel's
    /// counter wraps around, far later than the moments after exit when this runs.
    fn kill(&self) {
        if let Some(pid) = self.0 {
            // An empty group (all exited) is the normal case at the end of a call.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// One output stream as read so far: at most `cap` bytes kept, and the line being built for the
/// live view. Kept outside the reading future, so what was read survives when reading stops.
struct Captured {
    cap: usize,
    kept: Vec<u8>,
    line: Vec<u8>,
    truncated: bool,
}

impl Captured {
    fn new(cap: usize) -> Self {
        Self {
            cap,
            kept: Vec::new(),
            line: Vec::new(),
            truncated: false,
        }
    }

    /// Reads a stream to its end, keeping at most the cap and reporting kept lines as they come.
    /// Bytes past the cap are read and dropped so the child never blocks on a full pipe.
    async fn read_all<R: AsyncRead + Unpin>(
        &mut self,
        reader: Option<R>,
        on_line: &(dyn Fn(String) + Send + Sync),
    ) {
        let Some(mut reader) = reader else {
            return;
        };
        let mut buf = [0u8; READ_BYTES];
        loop {
            let n = match reader.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            self.push(buf.get(..n).unwrap_or_default(), on_line);
        }
        if !self.line.is_empty() {
            on_line(String::from_utf8_lossy(&self.line).into_owned());
            self.line.clear();
        }
    }

    /// Keeps what fits under the cap and reports each finished line.
    fn push(&mut self, bytes: &[u8], on_line: &(dyn Fn(String) + Send + Sync)) {
        let room = self.cap.saturating_sub(self.kept.len());
        let take = bytes.len().min(room);
        if take < bytes.len() {
            self.truncated = true;
        }
        let kept = bytes.get(..take).unwrap_or_default();
        self.kept.extend_from_slice(kept);
        for &b in kept {
            self.line.push(b);
            if b == b'\n' || self.line.len() >= MAX_LIVE_LINE {
                on_line(String::from_utf8_lossy(&self.line).into_owned());
                self.line.clear();
            }
        }
    }

    /// The kept text (invalid UTF-8 replaced) and whether the stream was cut at the cap.
    fn into_text(self) -> (String, bool) {
        (
            String::from_utf8_lossy(&self.kept).into_owned(),
            self.truncated,
        )
    }
}
