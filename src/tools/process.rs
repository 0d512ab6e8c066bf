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
    /// Keep the first and the last halves of the cap (the cut said between them) rather than
    /// the first bytes only: a build's error is at its end.
    pub keep_tail: bool,
    /// Stop the process once it has written this many bytes in all (`None`: never; past the
    /// cap, output is read and dropped).
    pub flood: Option<usize>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            output_cap: 64 * 1024,
            keep_tail: false,
            flood: None,
        }
    }
}

/// Why [`run_to_limit`] stopped a process before it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// It ran past its timeout.
    TimedOut,
    /// It wrote more than [`Limits::flood`] bytes.
    Flooded,
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
    /// Why it was stopped, when it was (only [`run_to_limit`] returns a stopped process).
    pub stopped: Option<Stopped>,
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

/// Runs `cmd` (stdin fed `input`, then closed), streaming each output line to `on_line`. A
/// timeout is an error; see [`run_to_limit`] to keep the output of a process stopped early.
pub async fn run_bounded(
    cmd: Command,
    program: &str,
    input: Option<Vec<u8>>,
    limits: Limits,
    cancel: &CancellationToken,
    on_line: &(dyn Fn(String) + Send + Sync),
) -> Result<ProcessOutput, ProcessError> {
    let out = run_to_limit(cmd, program, input, limits, cancel, on_line).await?;
    match out.stopped {
        Some(Stopped::TimedOut) => Err(ProcessError::Timeout(limits.timeout.as_secs().max(1))),
        _ => Ok(out),
    }
}

/// Like [`run_bounded`], but a process stopped at its timeout or for flooding its output comes
/// back with what it wrote until then ([`ProcessOutput::stopped`] says why).
pub async fn run_to_limit(
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
    let flood = Flood::new(limits.flood);
    let mut out = Captured::new(limits, &flood);
    let mut err = Captured::new(limits, &flood);
    let streams = Streams {
        stdout: child.stdout.take(),
        stderr: child.stderr.take(),
    };
    let work = run_to_end(
        &mut child,
        &group,
        streams,
        (&mut out, &mut err),
        &flood,
        on_line,
    );
    let (status, mut stopped) = tokio::select! {
        r = tokio::time::timeout(limits.timeout, work) => match r {
            Ok(status) => (status, None),
            Err(_) => {
                group.kill();
                (None, Some(Stopped::TimedOut))
            }
        },
        _ = cancel.cancelled() => return Err(ProcessError::Cancelled),
    };
    if flood.passed() {
        stopped = Some(Stopped::Flooded);
    }
    let (stdout, out_cut) = out.into_text();
    let (stderr, err_cut) = err.into_text();
    Ok(ProcessOutput {
        stdout,
        stderr,
        exit_code: status.and_then(|s| s.code()),
        truncated: out_cut || err_cut,
        stopped,
    })
}

/// The bytes both streams of a process wrote, against the flood limit.
struct Flood {
    limit: Option<usize>,
    written: std::sync::atomic::AtomicUsize,
}

impl Flood {
    fn new(limit: Option<usize>) -> Self {
        Self {
            limit,
            written: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Counts `n` more bytes; whether the limit is now passed.
    fn add(&self, n: usize) -> bool {
        let total = self
            .written
            .fetch_add(n, std::sync::atomic::Ordering::Relaxed)
            + n;
        self.limit.is_some_and(|limit| total > limit)
    }

    fn passed(&self) -> bool {
        self.add(0)
    }
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
    (out, err): (&mut Captured<'_>, &mut Captured<'_>),
    flood: &Flood,
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
    // Reading stopped early: the process flooded its output and is ended now.
    if exited.is_none() && flood.passed() {
        group.kill();
    }
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

/// One output stream as read so far: at most `cap` bytes kept (the first ones, or the first
/// and last halves), and the line being built for the live view. Kept outside the reading
/// future, so what was read survives when reading stops.
struct Captured<'f> {
    cap: usize,
    kept: Vec<u8>,
    /// The last bytes, when the tail is kept (at most half the cap).
    tail: Option<std::collections::VecDeque<u8>>,
    /// Bytes read and dropped between the head and the tail.
    dropped: usize,
    line: Vec<u8>,
    truncated: bool,
    flood: &'f Flood,
}

impl<'f> Captured<'f> {
    fn new(limits: Limits, flood: &'f Flood) -> Self {
        let (cap, tail) = if limits.keep_tail {
            (limits.output_cap / 2, Some(Default::default()))
        } else {
            (limits.output_cap, None)
        };
        Self {
            cap,
            kept: Vec::new(),
            tail,
            dropped: 0,
            line: Vec::new(),
            truncated: false,
            flood,
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
            if self.flood.add(n) {
                break;
            }
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
        if let Some(tail) = &mut self.tail {
            let rest = bytes.get(take..).unwrap_or_default();
            tail.extend(rest);
            let over = tail.len().saturating_sub(self.cap);
            tail.drain(..over);
            self.dropped += over;
        }
        // With a kept tail the live view sees everything, not just the head.
        let live = if self.tail.is_some() { bytes } else { kept };
        for &b in live {
            self.line.push(b);
            if b == b'\n' || self.line.len() >= MAX_LIVE_LINE {
                on_line(String::from_utf8_lossy(&self.line).into_owned());
                self.line.clear();
            }
        }
    }

    /// The kept text (invalid UTF-8 replaced; with a kept tail, the cut said between head and
    /// tail) and whether the stream was cut at the cap.
    fn into_text(self) -> (String, bool) {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        match self.tail {
            Some(tail) if self.dropped > 0 => {
                let tail: Vec<u8> = tail.into();
                text.push_str(&format!(
                    "\n[… {} bytes cut here: the first and last {} KB are kept …]\n",
                    self.dropped,
                    self.cap / 1024
                ));
                text.push_str(&String::from_utf8_lossy(&tail));
                (text, true)
            }
            Some(tail) => {
                let tail: Vec<u8> = tail.into();
                text.push_str(&String::from_utf8_lossy(&tail));
                (text, false)
            }
            None => (text, self.truncated),
        }
    }
}
