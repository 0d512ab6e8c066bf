//! MiniClaw's side of the jail: the session's private folders (the jail's `/tmp` and the empty
//! stand-ins), the session's network holder, starting a supervisor for a plan, and the check
//! that the jail can be built on this machine at all (a real jailed `true`).

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;

use tokio::io::AsyncBufReadExt;
use tokio::process::{Child, Command};

use super::error::JailError;
use super::plan::{Network, Plan, PrivateDirs, Resources};
use super::{HOLDER_ARG, SETUP_FAILED_PREFIX, SETUP_FAILED_STATUS, SUPERVISOR_ARG};

/// Whether commands can be jailed here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JailStatus {
    /// The jail was built and a command ran in it.
    Ready,
    /// It cannot be built; why, in a sentence for the person.
    Unavailable(String),
}

/// One session's jail: where its supervisor binary is, its private folders and its network.
#[derive(Debug)]
pub struct Jail {
    supervisor: PathBuf,
    private: PrivateDirs,
    /// The folder holding the private folders, removed with the jail.
    base: PathBuf,
    holder: Mutex<Option<Child>>,
}

impl Jail {
    /// A jail whose supervisor is the binary at `supervisor` (MiniClaw's own), with fresh
    /// private folders (mode 0700) in the system's temporary folder.
    pub fn new(supervisor: PathBuf) -> Result<Self, JailError> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let base = std::env::temp_dir().join(format!(
            "miniclaw-jail-{}-{}",
            std::process::id(),
            uuid::Uuid::new_v4().simple()
        ));
        let made = |e| JailError::io(format!("making {}", base.display()), e);
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&base)
            .map_err(made)?;
        let private = PrivateDirs {
            tmp: base.join("tmp"),
            empty_file: base.join("empty"),
            empty_dir: base.join("empty.d"),
        };
        let mut dirs = std::fs::DirBuilder::new();
        dirs.mode(0o700);
        dirs.create(&private.tmp).map_err(made)?;
        dirs.create(&private.empty_dir).map_err(made)?;
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o400)
            .open(&private.empty_file)
            .map_err(made)?;
        Ok(Self {
            supervisor,
            private,
            base,
            holder: Mutex::new(None),
        })
    }

    /// The private folders plans name.
    pub fn private(&self) -> &PrivateDirs {
        &self.private
    }

    /// The network for a command of this session that may not reach the outside: the
    /// session's shared loopback (its holder started on first use, again if it ended), or a
    /// private one per command when no holder can be started.
    pub async fn session_network(&self) -> Network {
        if let Some(pid) = self.live_holder() {
            return Network::Session { holder: pid };
        }
        match self.start_holder().await {
            Ok(child) => {
                let pid = child.id();
                if let Ok(mut slot) = self.holder.lock() {
                    *slot = Some(child);
                }
                pid.map_or(Network::Off, |holder| Network::Session { holder })
            }
            Err(e) => {
                tracing::warn!(error = %e, "no shared network for the session's commands");
                Network::Off
            }
        }
    }

    /// The holder's id while it runs (one that ended is reaped here, so its id is never
    /// handed on after another process took it).
    fn live_holder(&self) -> Option<u32> {
        let mut slot = self.holder.lock().ok()?;
        let child = slot.as_mut()?;
        match child.try_wait() {
            Ok(None) => child.id(),
            _ => {
                *slot = None;
                None
            }
        }
    }

    async fn start_holder(&self) -> Result<Child, JailError> {
        let mut cmd = Command::new(&self.supervisor);
        cmd.arg(HOLDER_ARG)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        dies_with_miniclaw(&mut cmd);
        let mut child = cmd
            .spawn()
            .map_err(|e| JailError::io("starting the network holder", e))?;
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| JailError::Plan("the holder has no output".into()))?;
        let mut line = String::new();
        let mut reader = tokio::io::BufReader::new(stdout);
        let read = tokio::time::timeout(
            std::time::Duration::from_secs(5),
            reader.read_line(&mut line),
        )
        .await;
        if !matches!(read, Ok(Ok(_))) || line.trim() != "ready" {
            let mut why = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = tokio::time::timeout(
                    std::time::Duration::from_secs(1),
                    tokio::io::AsyncReadExt::read_to_string(&mut err, &mut why),
                )
                .await;
            }
            return Err(JailError::Unsupported(setup_reason(&why)));
        }
        Ok(child)
    }

    /// The supervisor's command for `plan` (its environment empty: the command's is in the
    /// plan); the caller sets its output and runs it (`process::run_bounded`).
    pub fn command(&self, plan: &Plan) -> Result<Command, JailError> {
        let json = serde_json::to_string(plan).map_err(|e| JailError::Plan(e.to_string()))?;
        let mut cmd = Command::new(&self.supervisor);
        cmd.arg(SUPERVISOR_ARG).arg(json).env_clear();
        dies_with_miniclaw(&mut cmd);
        Ok(cmd)
    }

    /// Builds the jail once in an empty workspace for a command that prints its process id:
    /// commands can run here when it says 1 (the first process of its own PID namespace), which
    /// nothing but the real jail prints.
    pub async fn check(&self) -> JailStatus {
        let workspace = self.base.join("check");
        if let Err(e) = std::fs::create_dir_all(&workspace) {
            return JailStatus::Unavailable(format!("cannot make {}: {e}", workspace.display()));
        }
        let plan = Plan {
            workspace: workspace.clone(),
            working_dir: workspace,
            command: "echo $$".into(),
            shell: PathBuf::from("/bin/sh"),
            also_read: Vec::new(),
            shielded: Vec::new(),
            private: self.private.clone(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            network: Network::Off,
            limits: Resources::default(),
        };
        let Ok(mut cmd) = self.command(&plan) else {
            return JailStatus::Unavailable("the jail's plan could not be written".into());
        };
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .kill_on_drop(true);
        let run = tokio::time::timeout(std::time::Duration::from_secs(10), cmd.output()).await;
        match run {
            Ok(Ok(out)) if out.status.success() && out.stdout == b"1\n" => JailStatus::Ready,
            Ok(Ok(out)) if out.status.code() == Some(i32::from(SETUP_FAILED_STATUS)) => {
                JailStatus::Unavailable(setup_reason(&String::from_utf8_lossy(&out.stderr)))
            }
            Ok(Ok(out)) => JailStatus::Unavailable(format!(
                "a jailed test command did not run as it should ({}; it printed {:?}{})",
                out.status,
                String::from_utf8_lossy(&out.stdout).trim(),
                match String::from_utf8_lossy(&out.stderr).trim() {
                    "" => String::new(),
                    err => format!(", and on stderr {err:?}"),
                }
            )),
            Ok(Err(e)) => JailStatus::Unavailable(format!(
                "the jail's supervisor ({}) could not start: {e}",
                self.supervisor.display()
            )),
            Err(_) => JailStatus::Unavailable("building the jail took over 10 s".into()),
        }
    }
}

impl Drop for Jail {
    fn drop(&mut self) {
        // The holder is killed as its handle drops; the private folders go with the session.
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The reason a supervisor gave for not building the jail, from its stderr.
pub fn setup_reason(stderr: &str) -> String {
    stderr
        .lines()
        .find_map(|l| l.strip_prefix(SETUP_FAILED_PREFIX))
        .unwrap_or_else(|| stderr.trim())
        .to_string()
}

/// The supervisor (and so its command) is killed when MiniClaw ends, however it ends.
fn dies_with_miniclaw(cmd: &mut Command) {
    // SAFETY: one system call between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}
