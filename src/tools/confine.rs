//! Confines the read-only shell's child processes with Landlock (Linux 5.13+): a command may
//! read only beneath the workspace, minus what `hidden` hides (see `reach`), and the system
//! folders that programs need to start, and may write nowhere. The shell policy already refuses
//! paths outside the workspace (and hidden ones) before anything runs; this is what holds when a
//! folder is swapped for a link while `cat` or `rg` walks it, or when `rg` walks into a folder
//! holding a key file, because the kernel checks every open the child makes.
//!
//! The ruleset is built in the parent; the child only calls two system calls between fork and
//! exec (no allocation there). Where the kernel has no Landlock, commands run without it and the
//! log says so once.

use std::os::fd::{AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::Once;

use super::reach::{self, Grant};
use landlock::{
    ABI, Access, AccessFs, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr,
    RulesetCreatedAttr,
};

/// System folders a program may read and run from (its binary, the loader, libraries, locales).
const SYSTEM_DIRS: [&str; 6] = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"];
/// Single system files programs read at start.
const SYSTEM_FILES: [&str; 2] = ["/etc/ld.so.cache", "/etc/localtime"];

/// A Landlock ruleset ready to be applied in a child.
#[derive(Debug)]
pub struct Confinement {
    fd: OwnedFd,
}

/// Logs once that commands run unconfined.
static UNAVAILABLE: Once = Once::new();

impl Confinement {
    /// Read-only access beneath `workspace` (less its hidden files; it may take a few
    /// milliseconds to find them, so call it off the async runtime) and the system folders (and
    /// `program`'s folder); `None` when the kernel cannot enforce it.
    pub fn read_only(workspace: &Path, program: &Path) -> Option<Self> {
        match build(workspace, program) {
            Ok(Some(fd)) => Some(Self { fd }),
            Ok(None) | Err(_) => {
                UNAVAILABLE.call_once(|| {
                    tracing::warn!("Landlock is not available: shell commands run unconfined");
                });
                None
            }
        }
    }

    /// Applies the ruleset to `cmd`'s child, between fork and exec.
    pub fn apply(&self, cmd: &mut tokio::process::Command) -> std::io::Result<()> {
        let fd = self.fd.try_clone()?;
        // SAFETY: the closure runs in the forked child and only makes two system calls (no
        // allocation, no lock); `fd` stays open in the child until exec.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        Ok(())
    }
}

/// The ruleset's descriptor, or `None` when the kernel has no Landlock at all. On an older
/// Landlock (before Linux 6.2) the rights it knows are still enforced (best effort).
fn build(workspace: &Path, program: &Path) -> Result<Option<OwnedFd>, landlock::RulesetError> {
    let abi = ABI::V3;
    let read = AccessFs::from_read(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))?
        .create()?;
    let mut dirs: Vec<&Path> = SYSTEM_DIRS.iter().map(Path::new).collect();
    let real_program = program.canonicalize().ok();
    dirs.extend(program.parent());
    dirs.extend(real_program.as_deref().and_then(Path::parent));
    let real_workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    for dir in dirs {
        // A program's folder inside the workspace would grant it whole, hidden files included
        // (programs never run from there anyway: see `process::safe_path`).
        if dir.starts_with(&real_workspace) || dir.starts_with(workspace) {
            continue;
        }
        if let Ok(fd) = PathFd::new(dir) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, read))?;
        }
    }
    // Folder contents may be listed anywhere in the workspace; files are read only through the
    // grants, which leave hidden files out.
    if let Ok(fd) = PathFd::new(&real_workspace) {
        ruleset = ruleset.add_rule(PathBeneath::new(fd, AccessFs::ReadDir))?;
    }
    for grant in reach::grants(&real_workspace) {
        ruleset = match grant {
            Grant::Folder(fd) => ruleset.add_rule(PathBeneath::new(fd, read))?,
            Grant::File(fd) => {
                ruleset.add_rule(PathBeneath::new(fd, AccessFs::from_file(abi) & read))?
            }
        };
    }
    for file in SYSTEM_FILES {
        if let Ok(fd) = PathFd::new(file) {
            ruleset = ruleset.add_rule(PathBeneath::new(fd, AccessFs::from_file(abi) & read))?;
        }
    }
    Ok(ruleset.into())
}
