//! Opening and writing workspace files through the sandbox's handle on the root, each in one
//! step, so that nothing checked by path can be swapped before it is used.
//!
//! - Reads resolve beneath the root handle (`openat2` with `RESOLVE_BENEATH` where the kernel has
//!   it, through `cap-std`): a link inside the workspace is followed, one that leads out fails,
//!   also when a folder is swapped for a link between a check and the open.
//! - Walks open each child folder from its parent's handle, never following a link.
//! - Writes follow no link at all: each folder is opened from its parent's handle with
//!   `O_NOFOLLOW`, the new content goes to a fresh file next to the target, which is then
//!   renamed over it. A write never changes an inode that another path shares.
//! - Only regular files with a single link are read or replaced; pipes, devices and sockets are
//!   refused from their handle (opened with `O_NONBLOCK`, so a pipe cannot block the open).

use std::ffi::OsStr;
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt};
use rustix::fs::{AtFlags, FileType, Mode, OFlags};

use super::error::{ToolError, io_failed};
use super::sandbox::{Sandbox, SandboxError};

/// What `cap-std` says when a path would leave the root.
const ESCAPE: &str = "a path led outside of the filesystem";

/// The refusal for a path that led out while it was being opened (a link, maybe swapped in).
fn led_out(relative: &str) -> ToolError {
    ToolError::Sandbox(SandboxError::Refused {
        path: relative.chars().take(200).collect(),
        rule: "it leads outside the workspace through a symbolic link".into(),
    })
}

/// An open error, naming the path; an escape is a sandbox refusal.
fn open_error(relative: &str, shown: &str, action: &str, e: &std::io::Error) -> ToolError {
    if e.to_string().contains(ESCAPE) || e.raw_os_error() == Some(libc::EXDEV) {
        return led_out(relative);
    }
    if e.raw_os_error() == Some(libc::ELOOP) {
        return ToolError::failed(format!(
            "cannot {action} `{shown}`: too many symbolic links, or a link where none may be"
        ));
    }
    io_failed(action, shown, e)
}

/// Refuses what is not a plain file with one name: folders, special files, hard links.
fn check_plain(meta: &std::fs::Metadata, shown: &str) -> Result<(), ToolError> {
    if meta.is_dir() {
        return Err(ToolError::failed(format!(
            "`{shown}` is a folder, not a file; use list_files to see what it holds"
        )));
    }
    if !meta.is_file() {
        return Err(ToolError::failed(format!(
            "`{shown}` is not a regular file (a pipe, socket or device); it cannot be used"
        )));
    }
    if meta.nlink() > 1 {
        return Err(ToolError::failed(format!(
            "`{shown}` has other hard links ({} names share it), so it may be a file outside the \
             workspace; it is not read or changed through the tools",
            meta.nlink()
        )));
    }
    Ok(())
}

/// Opens a regular file for reading, beneath the root in one step.
pub(crate) fn open_file(
    sandbox: &Sandbox,
    relative: &str,
    shown: &str,
) -> Result<(File, std::fs::Metadata), ToolError> {
    let parts = sandbox.parts(relative)?;
    if parts.is_empty() {
        return Err(ToolError::failed(format!(
            "`{shown}` is a folder, not a file; use list_files to see what it holds"
        )));
    }
    let path: PathBuf = parts.iter().collect();
    let mut options = OpenOptions::new();
    options
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    let file = sandbox
        .dir()
        .open_with(&path, &options)
        .map_err(|e| open_error(relative, shown, "read", &e))?
        .into_std();
    let meta = file.metadata().map_err(|e| io_failed("read", shown, &e))?;
    check_plain(&meta, shown)?;
    Ok((file, meta))
}

/// Opens a folder beneath the root in one step (`""` and `"."` are the root).
pub(crate) fn open_dir(sandbox: &Sandbox, relative: &str, shown: &str) -> Result<Dir, ToolError> {
    let parts = sandbox.parts(relative)?;
    if parts.is_empty() {
        return sandbox
            .dir()
            .try_clone()
            .map_err(|e| io_failed("list", shown, &e));
    }
    let path: PathBuf = parts.iter().collect();
    match sandbox.dir().open_dir(&path) {
        Ok(dir) => Ok(dir),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(ToolError::failed(format!(
            "`{shown}` is a file, not a folder; use read_text_file to read it"
        ))),
        Err(e) => Err(open_error(relative, shown, "list", &e)),
    }
}

/// Opens the child folder `name` of `parent` without following a link (for walks).
pub(crate) fn open_child_dir(parent: &Dir, name: &OsStr) -> std::io::Result<Dir> {
    let fd = rustix::fs::openat(
        parent.as_fd(),
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(Dir::from_std_file(File::from(fd)))
}

/// Reads a regular file of `dir` named `name`, without following a link: at most `cap` bytes
/// (and one more to tell that it goes on). `None` when it is not a plain file.
pub(crate) fn read_child_file(dir: &Dir, name: &OsStr, cap: u64) -> Option<Vec<u8>> {
    let fd = rustix::fs::openat(
        dir.as_fd(),
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let file = File::from(fd);
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.nlink() > 1 {
        return None;
    }
    let mut bytes = Vec::new();
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .ok()?;
    Some(bytes)
}

/// A file about to be created or replaced: its folder's handle and its name in it.
pub(crate) struct WriteTarget {
    dir: Dir,
    name: String,
    shown: String,
    /// The permission bits of the file it replaces, if one exists.
    existing_mode: Option<u32>,
    /// Its real path, and the sandbox that records a change made to it.
    real: PathBuf,
    sandbox: Sandbox,
}

impl WriteTarget {
    /// Checks `relative` for writing and opens its folder, creating missing folders when
    /// `create` is set. No link is followed on the way.
    pub(crate) fn open(sandbox: &Sandbox, relative: &str, create: bool) -> Result<Self, ToolError> {
        let missing = if create {
            MissingFolder::Create
        } else {
            MissingFolder::Fail
        };
        Self::open_with(sandbox, relative, missing)?
            .ok_or_else(|| ToolError::failed("a folder of the path is missing"))
    }

    /// Like `open` without creating anything: `None` when a folder on the way is missing (the
    /// file would be new). For showing what a write would do before it is made.
    pub(crate) fn peek(sandbox: &Sandbox, relative: &str) -> Result<Option<Self>, ToolError> {
        Self::open_with(sandbox, relative, MissingFolder::Stop)
    }

    fn open_with(
        sandbox: &Sandbox,
        relative: &str,
        missing: MissingFolder,
    ) -> Result<Option<Self>, ToolError> {
        let create = missing == MissingFolder::Create;
        let checked = sandbox.resolve_write(relative)?;
        let shown = sandbox.display_relative(&checked);
        let parts = sandbox.parts(relative)?;
        let Some((name, folders)) = parts.split_last() else {
            return Err(ToolError::failed("a file path is required"));
        };
        let mut dir = sandbox
            .dir()
            .try_clone()
            .map_err(|e| io_failed("open the workspace for", &shown, &e))?;
        for (i, folder) in folders.iter().enumerate() {
            dir = match open_child_dir(&dir, OsStr::new(folder)) {
                Ok(child) => child,
                Err(e)
                    if e.kind() == std::io::ErrorKind::NotFound
                        && missing == MissingFolder::Stop =>
                {
                    return Ok(None);
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                    rustix::fs::mkdirat(dir.as_fd(), *folder, Mode::from_raw_mode(0o777))
                        .or_else(|e| match e {
                            rustix::io::Errno::EXIST => Ok(()),
                            other => Err(other),
                        })
                        .map_err(|e| io_failed("create the folders of", &shown, &e.into()))?;
                    open_child_dir(&dir, OsStr::new(folder))
                        .map_err(|e| folder_error(relative, &shown, &folders[..=i], &e))?
                }
                Err(e) => return Err(folder_error(relative, &shown, &folders[..=i], &e)),
            };
        }
        refuse_git_dir(&dir, name, relative)?;
        let existing_mode = match rustix::fs::statat(dir.as_fd(), *name, AtFlags::SYMLINK_NOFOLLOW)
        {
            Ok(stat) => Some(Self::check_existing(&stat, relative, &shown)?),
            Err(rustix::io::Errno::NOENT) => None,
            Err(e) => return Err(io_failed("write", &shown, &e.into())),
        };
        Ok(Some(Self {
            dir,
            name: (*name).to_string(),
            shown,
            existing_mode,
            real: checked,
            sandbox: sandbox.clone(),
        }))
    }

    /// Removes the file at the target (undoing the creation of a file); a missing one is fine.
    pub(crate) fn remove(&self) -> Result<(), ToolError> {
        match rustix::fs::unlinkat(self.dir.as_fd(), self.name.as_str(), AtFlags::empty()) {
            Ok(()) => {
                self.sandbox.note_change(&self.real);
                Ok(())
            }
            Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(io_failed("remove", &self.shown, &e.into())),
        }
    }

    /// The refusals for what already sits at the target's name; its permission bits otherwise.
    fn check_existing(
        stat: &rustix::fs::Stat,
        relative: &str,
        shown: &str,
    ) -> Result<u32, ToolError> {
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile if stat.st_nlink > 1 => Err(ToolError::failed(format!(
                "`{shown}` has other hard links ({} names share it), so it may be a file outside \
                 the workspace; it is not changed through the tools",
                stat.st_nlink
            ))),
            // Replacing by rename needs only the folder's permission: keep read-only files so.
            FileType::RegularFile if stat.st_mode & 0o200 == 0 => Err(ToolError::failed(format!(
                "`{shown}` is read-only; it is not changed through the tools"
            ))),
            FileType::RegularFile => Ok(stat.st_mode & 0o777),
            FileType::Directory => Err(ToolError::failed(format!(
                "`{shown}` is a folder; give a file path"
            ))),
            FileType::Symlink => Err(led_out_or_link(relative)),
            _ => Err(ToolError::failed(format!(
                "`{shown}` is not a regular file (a pipe, socket or device); it cannot be written"
            ))),
        }
    }

    /// The path as shown to the model.
    pub(crate) fn shown(&self) -> &str {
        &self.shown
    }

    /// Whether a file exists at the target now.
    pub(crate) fn exists(&self) -> bool {
        self.existing_mode.is_some()
    }

    /// The current content (at most `cap` bytes, and one more to tell that it goes on), read
    /// from a handle that was checked to be the plain file at the target.
    pub(crate) fn read_existing(&self, cap: u64) -> Result<Option<Vec<u8>>, ToolError> {
        if self.existing_mode.is_none() {
            return Ok(None);
        }
        read_child_file(&self.dir, OsStr::new(&self.name), cap)
            .map(Some)
            .ok_or_else(|| {
                ToolError::failed(format!(
                    "`{}` changed while it was being read; nothing was written",
                    self.shown
                ))
            })
    }

    /// Writes `bytes` to a new file beside the target and renames it over the target.
    pub(crate) fn replace_with(&self, bytes: &[u8]) -> Result<(), ToolError> {
        // A fixed-length name: a long file name must not become too long, and the temporary
        // name never takes a protected name's form.
        let temp = format!(
            ".miniclaw-{}-{:08x}.tmp",
            std::process::id(),
            rand::random::<u32>()
        );
        let mode = self.existing_mode.unwrap_or(0o666);
        let fd = rustix::fs::openat(
            self.dir.as_fd(),
            temp.as_str(),
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::from_raw_mode(mode),
        )
        .map_err(|e| io_failed("write", &self.shown, &e.into()))?;
        let mut file = File::from(fd);
        let written = file
            .write_all(bytes)
            .and_then(|()| {
                if self.existing_mode.is_some() {
                    // The umask applied at creation; a replaced file keeps its own bits.
                    rustix::fs::fchmod(file.as_fd(), Mode::from_raw_mode(mode))?;
                }
                Ok(())
            })
            .and_then(|()| file.sync_all())
            .and_then(|()| {
                rustix::fs::renameat(
                    self.dir.as_fd(),
                    temp.as_str(),
                    self.dir.as_fd(),
                    self.name.as_str(),
                )
                .map_err(Into::into)
            });
        if let Err(e) = written {
            let _ = rustix::fs::unlinkat(self.dir.as_fd(), temp.as_str(), AtFlags::empty());
            return Err(io_failed("write", &self.shown, &e));
        }
        // Every change a tool makes (write, append, replace, `/undo`) ends here: the trust
        // record of the project folder learns of it (`trust::changes`).
        self.sandbox.note_change(&self.real);
        Ok(())
    }
}

/// What opening a write target does about a missing folder on the way.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MissingFolder {
    /// Creates it.
    Create,
    /// Fails.
    Fail,
    /// Stops: the target would be new.
    Stop,
}

/// The refusal for a link found at a write target (it was not there at the check, or the check
/// found it and the write must not go through it either).
fn led_out_or_link(relative: &str) -> ToolError {
    ToolError::Sandbox(SandboxError::Refused {
        path: relative.chars().take(200).collect(),
        rule: "it goes through a symbolic link; writes take the real path, without links".into(),
    })
}

/// Refuses the write that would give one folder both a `HEAD` and a `config`: with them (and
/// `objects/`, `refs/`) the folder is a git repository, and its config can name commands that git
/// runs (`core.fsmonitor`) when someone runs `git status` there.
fn refuse_git_dir(dir: &Dir, name: &str, relative: &str) -> Result<(), ToolError> {
    let other = match name.to_ascii_lowercase().as_str() {
        "head" => "config",
        "config" => "HEAD",
        _ => return Ok(()),
    };
    let has_other = dir.entries().is_ok_and(|entries| {
        entries
            .filter_map(Result::ok)
            .any(|e| e.file_name().eq_ignore_ascii_case(other))
    });
    if has_other {
        return Err(ToolError::Sandbox(SandboxError::Refused {
            path: relative.chars().take(200).collect(),
            rule: "a folder with both HEAD and config is a git repository, whose config can run \
                   commands; tools cannot write either there"
                .into(),
        }));
    }
    Ok(())
}

/// Why a folder on the way to a write target could not be opened.
fn folder_error(relative: &str, shown: &str, so_far: &[&str], e: &std::io::Error) -> ToolError {
    let folder = so_far.join("/");
    match e.raw_os_error() {
        Some(libc::ELOOP) => led_out_or_link(relative),
        Some(libc::ENOTDIR) => ToolError::failed(format!(
            "`{folder}` is a file, so `{shown}` cannot be created under it"
        )),
        _ => io_failed("create the folders of", shown, e),
    }
}
