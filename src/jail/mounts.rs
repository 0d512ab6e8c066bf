//! The supervisor's mounts, in its own mount namespace: every shielded entry of the workspace
//! covered: a hidden one by an empty read-only stand-in, a read-only one by a read-only copy of
//! itself. Each mount is made through descriptors
//! opened without following a link (`open_tree`, `move_mount`), so what was checked is what
//! is covered; a covered entry is a mount point, which the command can neither write, remove,
//! rename nor link to.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::error::JailError;
use super::plan::{PrivateDirs, Shielded};

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// Stops mounts made here from reaching the namespace MiniClaw runs in.
pub fn make_private() -> Result<(), JailError> {
    // SAFETY: static C strings; plain system call.
    let done = unsafe {
        libc::mount(
            c"none".as_ptr(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    };
    if done != 0 {
        return Err(JailError::last("making mounts private"));
    }
    Ok(())
}

/// Covers each shielded entry. An entry that is gone, or is reached through a link anywhere
/// on its path, stops the jail (the command does not run): its folder was moved or swapped
/// since the walk, and the entry may now be elsewhere, uncovered.
pub fn shield(entries: &[Shielded], private: &PrivateDirs) -> Result<(), JailError> {
    for entry in entries {
        let (path, hidden) = match entry {
            Shielded::Hidden(p) => (p, true),
            Shielded::ReadOnly(p) => (p, false),
        };
        let Some(target) = open_no_follow(path, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)?
        else {
            // A history save's temporary file comes and goes on its own (it is renamed into
            // place): one that is gone since the walk was saved, and holds no key.
            if hidden && is_history_save(path) {
                continue;
            }
            return Err(JailError::Plan(format!(
                "{} moved while the jail was being built (the workspace is changing: a background job?); try again",
                path.display()
            )));
        };
        let is_dir = is_dir(&target)?;
        let source = if hidden {
            let stand_in = if is_dir {
                &private.empty_dir
            } else {
                &private.empty_file
            };
            // MiniClaw's own folder, whose path may hold the system's links (a /tmp link).
            open_no_follow(stand_in, 0)?
                .ok_or_else(|| JailError::Plan(format!("{} is missing", stand_in.display())))?
        } else {
            target
                .try_clone()
                .map_err(|e| JailError::io("a descriptor", e))?
        };
        let tree = clone_tree(&source, path)?;
        read_only(&tree, path)?;
        move_onto(&tree, &target, path)?;
    }
    Ok(())
}

/// Whether `path` is a temporary file of a history save (`history.json.tmp-…`, see
/// `durable`), which MiniClaw writes beside the history while a command may run.
fn is_history_save(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("history.json.tmp-"))
}

/// Makes every mount read-only but the workspace and the private temporary folder: Landlock
/// does not judge a file's metadata, so without this a command could `chmod`, `chown` or set
/// the times of files outside the workspace that the person owns (`chmod 644` a key file).
/// The two writable places are copied (as detached mounts) first, the whole tree is then made
/// read-only, and the copies are put back on top of their places.
pub fn read_only_outside(workspace: &Path, tmp: &Path) -> Result<(), JailError> {
    let mut writable = Vec::new();
    for place in [workspace, tmp] {
        let handle = open_no_follow(place, 0)?
            .ok_or_else(|| JailError::Plan(format!("{} is missing", place.display())))?;
        writable.push((clone_tree(&handle, place)?, handle, place));
    }
    let root = open_no_follow(Path::new("/"), 0)?
        .ok_or_else(|| JailError::Plan("/ cannot be opened".into()))?;
    read_only(&root, Path::new("/"))?;
    for (tree, target, place) in writable {
        move_onto(&tree, &target, place)?;
    }
    Ok(())
}

/// Mounts a fresh `/proc` showing only the command's own processes (called in the command's
/// first process). Best effort: some containers forbid it; then the host's `/proc` stays, and
/// Landlock still keeps other processes' files (`environ`, `mem`) closed. Whether it was mounted.
pub fn fresh_proc() -> bool {
    // SAFETY: static C strings; plain system call (also safe between fork and exec).
    unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        ) == 0
    }
}

/// `struct open_how` of `openat2(2)`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

const RESOLVE_NO_MAGICLINKS: u64 = 0x02;
const RESOLVE_NO_SYMLINKS: u64 = 0x04;

/// `path` opened as a path handle, its last part never followed, and with `resolve` set no
/// link followed in any part (for a real path, which has none); `None` when it does not exist
/// or a link is on the way.
fn open_no_follow(path: &Path, resolve: u64) -> Result<Option<OwnedFd>, JailError> {
    let c = c_path(path)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve,
    };
    // SAFETY: a valid C string and a filled `open_how` of the size passed; we own the
    // descriptor returned.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            c.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    } as libc::c_int;
    if fd < 0 {
        let err = std::io::Error::last_os_error();
        return match err.raw_os_error() {
            Some(libc::ENOENT) | Some(libc::ENOTDIR) | Some(libc::ELOOP) => Ok(None),
            _ => Err(JailError::io(format!("opening {}", path.display()), err)),
        };
    }
    // SAFETY: a fresh descriptor nothing else owns.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let stat = fstat(&fd)?;
    if stat.st_mode & libc::S_IFMT == libc::S_IFLNK {
        return Ok(None);
    }
    Ok(Some(fd))
}

fn fstat(fd: &OwnedFd) -> Result<libc::stat, JailError> {
    // SAFETY: `stat` is plain data the call fills.
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        if libc::fstat(fd.as_raw_fd(), &mut stat) != 0 {
            return Err(JailError::last("fstat"));
        }
        Ok(stat)
    }
}

fn is_dir(fd: &OwnedFd) -> Result<bool, JailError> {
    Ok(fstat(fd)?.st_mode & libc::S_IFMT == libc::S_IFDIR)
}

fn c_path(path: &Path) -> Result<CString, JailError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| JailError::Plan(format!("{} holds a NUL byte", path.display())))
}

/// A detached copy of the mount tree at `source` (and everything mounted beneath it).
fn clone_tree(source: &OwnedFd, shown: &Path) -> Result<OwnedFd, JailError> {
    // SAFETY: plain system call; we own the descriptor returned.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            source.as_raw_fd(),
            c"".as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC as libc::c_uint
                | libc::AT_EMPTY_PATH as libc::c_uint
                | AT_RECURSIVE,
        )
    };
    if fd < 0 {
        return Err(JailError::last(format!(
            "copying the mount of {}",
            shown.display()
        )));
    }
    // SAFETY: a fresh descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) })
}

/// Makes a detached tree read-only, all of it.
fn read_only(tree: &OwnedFd, shown: &Path) -> Result<(), JailError> {
    let attr = MountAttr {
        attr_set: MOUNT_ATTR_RDONLY,
        attr_clr: 0,
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: `attr` lives across the call; its size is passed.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            tree.as_raw_fd(),
            c"".as_ptr(),
            libc::AT_EMPTY_PATH as libc::c_uint | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if done != 0 {
        return Err(JailError::last(format!(
            "making {} read-only",
            shown.display()
        )));
    }
    Ok(())
}

/// Attaches a detached tree on top of `target`.
fn move_onto(tree: &OwnedFd, target: &OwnedFd, shown: &Path) -> Result<(), JailError> {
    // SAFETY: plain system call on descriptors we own.
    let done = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            tree.as_raw_fd(),
            c"".as_ptr(),
            target.as_raw_fd(),
            c"".as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
        )
    };
    if done != 0 {
        return Err(JailError::last(format!("covering {}", shown.display())));
    }
    Ok(())
}

#[cfg(test)]
mod history_save_tests {
    use super::is_history_save;
    use std::path::Path;

    #[test]
    fn only_a_history_saves_temporary_file_may_be_gone_by_the_time_it_is_covered() {
        assert!(is_history_save(Path::new(
            "/ws/history.json.tmp-4242-7-0000beef"
        )));
        for kept in [
            "/ws/.env",
            "/ws/history.json",
            "/ws/.env.tmp-1-2-3",
            "/ws/sub/.miniclaw",
        ] {
            assert!(!is_history_save(Path::new(kept)), "{kept}");
        }
    }
}
