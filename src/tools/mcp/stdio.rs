//! A stdio server's process: started with a short allow-listed environment in a process group of
//! its own, its stderr drained to the log (never the terminal) with the last lines kept for
//! error messages, and the whole group ended when MiniClaw stops it, exits or is killed.
//!
//! Three things end a server with MiniClaw: `stop` or `end_all` (on every way out of MiniClaw,
//! signals included) end its process group; a kernel parent-death signal ends it when MiniClaw
//! dies without a chance to (SIGKILL); and its stdin closing tells it to go, as the protocol says.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};
use tokio_util::sync::CancellationToken;

use super::error::McpError;
use crate::terminal_text::clean;
use crate::tools::process::{find_program, safe_path};

/// The variables a server gets from MiniClaw's environment (plus its entry's `env`).
pub const ALLOWED_ENV: [&str; 7] = ["HOME", "PATH", "LANG", "TERM", "TMPDIR", "TZ", "USER"];
/// How many of the last stderr lines are kept for messages.
const TAIL_LINES: usize = 8;
/// The longest stderr line kept (longer ones are cut).
const TAIL_LINE_CHARS: usize = 300;
/// How long a stopped server may take to go after SIGTERM before SIGKILL.
const TERM_GRACE: Duration = Duration::from_millis(1500);

/// Process groups of running servers, for `end_all`.
static GROUPS: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

fn groups() -> std::sync::MutexGuard<'static, BTreeSet<i32>> {
    GROUPS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Ends every server process group still running (SIGTERM, a short grace, then SIGKILL). Called
/// on every way out of MiniClaw; safe to call more than once.
pub fn end_all() {
    let live: Vec<i32> = groups().iter().copied().collect();
    for &pgid in &live {
        signal_group(pgid, Signal::TERM);
    }
    let deadline = std::time::Instant::now() + Duration::from_millis(500);
    while std::time::Instant::now() < deadline && live.iter().any(|&p| group_alive(p)) {
        std::thread::sleep(Duration::from_millis(20));
    }
    for &pgid in &live {
        signal_group(pgid, Signal::KILL);
    }
    groups().clear();
}

fn signal_group(pgid: i32, signal: Signal) {
    if let Some(pid) = Pid::from_raw(pgid) {
        let _ = kill_process_group(pid, signal);
    }
}

fn group_alive(pgid: i32) -> bool {
    Pid::from_raw(pgid).is_some_and(|pid| rustix::process::test_kill_process_group(pid).is_ok())
}

/// The last lines a server wrote on stderr.
#[derive(Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    /// The kept lines, joined with ` | `.
    pub fn text(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join(" | ")
    }

    fn push(&self, line: &str) {
        let line: String = clean(line).trim().chars().take(TAIL_LINE_CHARS).collect();
        if line.is_empty() {
            return;
        }
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }
}

/// A running server process.
pub struct ServerProcess {
    /// Fires once the process has exited.
    pub exited: CancellationToken,
    /// How it exited, once it has.
    pub exit: Arc<Mutex<Option<String>>>,
    /// Its stderr's last lines.
    pub stderr: StderrTail,
    stop: CancellationToken,
}

impl ServerProcess {
    /// Ends the process group (SIGTERM, then SIGKILL after a grace); returns once it is gone.
    pub async fn stop(&self) {
        self.stop.cancel();
        self.exited.cancelled().await;
    }

    /// How it exited (`None` while it runs).
    pub fn exit_text(&self) -> Option<String> {
        self.exit.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

/// What starting a stdio server needs.
pub struct Launch<'a> {
    /// The server's name (for the log).
    pub server: &'a str,
    /// The program as configured.
    pub command: &'a str,
    /// Its arguments.
    pub args: &'a [String],
    /// The entry's own variables.
    pub env: &'a BTreeMap<String, String>,
    /// Its working folder.
    pub cwd: &'a Path,
    /// The workspace (its folders are left out of PATH).
    pub workspace: &'a Path,
}

/// Starts the server; returns the process and its stdout and stdin for the protocol.
pub fn spawn(launch: &Launch<'_>) -> Result<(ServerProcess, ChildStdout, ChildStdin), McpError> {
    let path = safe_path(launch.workspace);
    let program = resolve_program(launch.command, launch.cwd, &path)?;
    let mut argv = vec![program.to_string_lossy().into_owned()];
    argv.extend(launch.args.iter().cloned());
    // Python never imports from the working folder (which may be the workspace).
    let argv = crate::tools::plugins::isolate_interpreter(argv);
    let mut cmd = Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .current_dir(launch.cwd)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    for name in ALLOWED_ENV {
        if name == "PATH" {
            cmd.env("PATH", &path);
        } else if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.envs(launch.env);
    // SAFETY: between fork and exec only `prctl` runs, which is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::TERM))
                .map_err(std::io::Error::from)
        });
    }
    let mut child = cmd.spawn().map_err(|source| McpError::Spawn {
        program: launch.command.to_string(),
        source,
    })?;
    let (Some(stdout), Some(stdin), Some(stderr)) =
        (child.stdout.take(), child.stdin.take(), child.stderr.take())
    else {
        return Err(McpError::Spawn {
            program: launch.command.to_string(),
            source: std::io::Error::other("its pipes could not be opened"),
        });
    };
    let tail = StderrTail::default();
    tokio::spawn(drain_stderr(
        stderr,
        tail.clone(),
        launch.server.to_string(),
    ));
    let process = watch(child, tail);
    Ok((process, stdout, stdin))
}

/// Finds the program: a name is looked up on PATH (without workspace folders), a path with a
/// `/` is taken relative to the working folder.
fn resolve_program(command: &str, cwd: &Path, path: &str) -> Result<PathBuf, McpError> {
    if command.contains('/') {
        let candidate = cwd.join(command);
        if candidate.is_file() {
            return Ok(candidate);
        }
        return Err(McpError::ProgramMissing {
            program: command.to_string(),
            where_: format!(" at {}", candidate.display()),
        });
    }
    find_program(command, path).ok_or_else(|| McpError::ProgramMissing {
        program: command.to_string(),
        where_: " on PATH".to_string(),
    })
}

async fn drain_stderr(stderr: ChildStderr, tail: StderrTail, server: String) {
    let mut lines = BufReader::new(stderr).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        tracing::info!(server = %server, line = %clean(&line), "MCP server stderr");
        tail.push(&line);
    }
}

/// Keeps the child: ends its group when asked, and records how it exited.
fn watch(mut child: Child, stderr: StderrTail) -> ServerProcess {
    let exited = CancellationToken::new();
    let exit = Arc::new(Mutex::new(None));
    let stop = CancellationToken::new();
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    if let Some(pgid) = pgid {
        groups().insert(pgid);
    }
    let (done, record, asked) = (exited.clone(), exit.clone(), stop.clone());
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status,
            _ = asked.cancelled() => {
                if let Some(pgid) = pgid {
                    signal_group(pgid, Signal::TERM);
                }
                match tokio::time::timeout(TERM_GRACE, child.wait()).await {
                    Ok(status) => status,
                    Err(_) => {
                        let _ = child.start_kill();
                        child.wait().await
                    }
                }
            }
        };
        // The leader is gone; whatever it left in its group goes too.
        if let Some(pgid) = pgid {
            signal_group(pgid, Signal::KILL);
            groups().remove(&pgid);
        }
        let how = match status {
            Ok(s) => describe(s),
            Err(e) => format!("lost: {e}"),
        };
        *record.lock().unwrap_or_else(|p| p.into_inner()) = Some(how);
        done.cancel();
    });
    ServerProcess {
        exited,
        exit,
        stderr,
        stop,
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(signal)) => format!("killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    }
}
