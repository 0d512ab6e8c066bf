//! The supervisor: MiniClaw's own binary started again with a hidden first argument, as the
//! parent of each jailed command. Being a fresh single-threaded process, it may build
//! namespaces and mounts that a multi-threaded MiniClaw could not, and it holds no key (its
//! environment is empty). It starts the command as the first process of a PID namespace with
//! the last restrictions applied between fork and exec (resource limits, no capabilities,
//! Landlock, seccomp), waits for it, and exits with its status. When the first process ends,
//! the kernel ends every other process of the namespace — daemons, double forks, `setsid` ones
//! included — and when the supervisor is killed (timeout, interrupt, MiniClaw exiting), the
//! first process is killed with it (`PR_SET_PDEATHSIG`), which ends the rest.

use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, ExitCode, Stdio};

use super::error::JailError;
use super::plan::{Plan, Resources};
use super::seccomp::Filter;
use super::{SETUP_FAILED_PREFIX, SETUP_FAILED_STATUS, file_rules, mounts, namespaces};

/// Runs the plan given as the next argument; the exit status is the command's (128 + the
/// signal when a signal ended it), or [`SETUP_FAILED_STATUS`] with the reason on stderr.
pub fn supervise(plan: Option<OsString>) -> ExitCode {
    let result = plan
        .ok_or_else(|| JailError::Plan("no plan given".into()))
        .and_then(|p| {
            serde_json::from_str::<Plan>(&p.to_string_lossy())
                .map_err(|e| JailError::Plan(e.to_string()))
        })
        .and_then(|plan| run(&plan));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{SETUP_FAILED_PREFIX}{e}");
            ExitCode::from(SETUP_FAILED_STATUS)
        }
    }
}

fn run(plan: &Plan) -> Result<ExitCode, JailError> {
    super::seccomp::check_supported()?;
    namespaces::enter(plan.network)?;
    mounts::make_private()?;
    mounts::read_only_outside(&plan.workspace, &plan.private.tmp)?;
    mounts::shield(&plan.shielded, &plan.private)?;
    let rules = file_rules::build(plan)?;
    let filter = Filter::new();
    let mut cmd = Command::new(&plan.shell);
    cmd.arg("-c")
        .arg(&plan.command)
        .current_dir(&plan.working_dir)
        .env_clear()
        .envs(plan.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null());
    let limits = plan.limits;
    let pid_max = PidMax::for_processes(limits.processes);
    // SAFETY: the closure makes only system calls on data prepared before the fork (no
    // allocation, no lock).
    unsafe {
        cmd.pre_exec(move || restrict(&rules, &filter, limits, &pid_max));
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| JailError::io(format!("starting {}", plan.shell.display()), e))?;
    let status = child
        .wait()
        .map_err(|e| JailError::io("waiting for the command", e))?;
    let code = match (status.code(), status.signal()) {
        (Some(code), _) => code,
        (None, Some(signal)) => 128 + signal,
        (None, None) => 1,
    };
    Ok(ExitCode::from(u8::try_from(code).unwrap_or(1)))
}

/// The command's last steps before exec: dies with the supervisor, its own `/proc`, resource
/// limits, no capabilities now or after exec, then Landlock and seccomp.
fn restrict(
    rules: &OwnedFd,
    filter: &Filter,
    limits: Resources,
    pid_max: &PidMax,
) -> std::io::Result<()> {
    let os = std::io::Error::last_os_error;
    // SAFETY: plain system calls on values prepared before the fork.
    unsafe {
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
            return Err(os());
        }
        if mounts::fresh_proc() {
            grant_proc(rules)?;
        }
        pid_max.apply();
        for (resource, value) in [
            (libc::RLIMIT_DATA, limits.memory_bytes),
            (libc::RLIMIT_FSIZE, limits.file_bytes),
            (libc::RLIMIT_NPROC, limits.processes),
            (libc::RLIMIT_CORE, 0),
        ] {
            let limit = libc::rlimit {
                rlim_cur: value,
                rlim_max: value,
            };
            if libc::setrlimit(resource, &limit) != 0 {
                return Err(os());
            }
        }
        drop_capabilities()?;
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(os());
        }
        if libc::syscall(libc::SYS_landlock_restrict_self, rules.as_raw_fd(), 0) != 0 {
            return Err(os());
        }
    }
    filter.install()
}

/// The PID namespace's own `pid_max` (Linux 6.14+), which caps how many processes the command
/// may have even where `RLIMIT_NPROC` is not enforced (for root, it never is). Pid numbers
/// below 300 are not handed out again once the namespace wrapped, hence the margin.
struct PidMax {
    text: [u8; 24],
    len: usize,
}

impl PidMax {
    const RESERVED: u64 = 300;

    fn for_processes(processes: u64) -> Self {
        let value = format!("{}", Self::RESERVED.saturating_add(processes.max(1)));
        let mut text = [0u8; 24];
        let len = value.len().min(text.len());
        text[..len].copy_from_slice(&value.as_bytes()[..len]);
        Self { text, len }
    }

    /// Best effort, between fork and exec: older kernels have one `pid_max` for the machine,
    /// which the jail may not change.
    fn apply(&self) {
        // SAFETY: plain system calls on a buffer prepared before the fork.
        unsafe {
            let fd = libc::open(
                c"/proc/sys/kernel/pid_max".as_ptr(),
                libc::O_WRONLY | libc::O_CLOEXEC,
            );
            if fd >= 0 {
                libc::write(fd, self.text.as_ptr().cast(), self.len);
                libc::close(fd);
            }
        }
    }
}

/// Adds a read rule for the fresh `/proc` (a new mount, so the ruleset's rule for the old one
/// does not cover it). Allocation-free: runs between fork and exec.
fn grant_proc(rules: &OwnedFd) -> std::io::Result<()> {
    /// `struct landlock_path_beneath_attr`, packed as the kernel declares it.
    #[repr(C, packed)]
    struct PathBeneath {
        allowed_access: u64,
        parent_fd: i32,
    }
    const RULE_PATH_BENEATH: libc::c_int = 1;
    // Execute, read file, read folder.
    const READ: u64 = 1 | 4 | 8;
    // SAFETY: plain system calls; `attr` outlives the call.
    unsafe {
        let fd = libc::open(c"/proc".as_ptr(), libc::O_PATH | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let attr = PathBeneath {
            allowed_access: READ,
            parent_fd: fd,
        };
        let done = libc::syscall(
            libc::SYS_landlock_add_rule,
            rules.as_raw_fd(),
            RULE_PATH_BENEATH,
            &attr as *const PathBeneath,
            0,
        );
        let err = std::io::Error::last_os_error();
        libc::close(fd);
        if done != 0 {
            return Err(err);
        }
    }
    Ok(())
}

/// Takes every capability out of the bounding set and locks root out of regaining them at
/// exec (the command runs as the person's own user, which in its user namespace would
/// otherwise hold them all).
fn drop_capabilities() -> std::io::Result<()> {
    const SECBIT_NOROOT: libc::c_ulong = 1 << 0;
    const SECBIT_NOROOT_LOCKED: libc::c_ulong = 1 << 1;
    const SECBIT_NO_SETUID_FIXUP: libc::c_ulong = 1 << 2;
    const SECBIT_NO_SETUID_FIXUP_LOCKED: libc::c_ulong = 1 << 3;
    const SECBIT_NO_CAP_AMBIENT_RAISE: libc::c_ulong = 1 << 6;
    const SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED: libc::c_ulong = 1 << 7;
    // SAFETY: plain system calls.
    unsafe {
        let mut cap = 0;
        // Until the kernel says there is no such capability.
        while libc::prctl(libc::PR_CAPBSET_READ, cap, 0, 0, 0) >= 0 {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            cap += 1;
        }
        let bits = SECBIT_NOROOT
            | SECBIT_NOROOT_LOCKED
            | SECBIT_NO_SETUID_FIXUP
            | SECBIT_NO_SETUID_FIXUP_LOCKED
            | SECBIT_NO_CAP_AMBIENT_RAISE
            | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if libc::prctl(libc::PR_SET_SECUREBITS, bits, 0, 0, 0) != 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// The session's network holder: a process in a user and network namespace of its own (with
/// loopback up) that does nothing but wait for its input to close; commands of the session
/// join its namespaces, so a server one starts on loopback is reachable from the next.
pub fn hold() -> ExitCode {
    let made =
        namespaces::own_user_namespace(libc::CLONE_NEWNET).and_then(|()| namespaces::loopback_up());
    if let Err(e) = made {
        eprintln!("{SETUP_FAILED_PREFIX}{e}");
        return ExitCode::from(SETUP_FAILED_STATUS);
    }
    println!("ready");
    // Until MiniClaw closes the pipe (the session ended) or exits (the pipe closes too).
    let mut sink = Vec::new();
    let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
    ExitCode::SUCCESS
}
