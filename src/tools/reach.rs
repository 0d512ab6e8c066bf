//! What of the workspace a confined shell command may read: everything but what `hidden` hides.
//!
//! Landlock only grants: a rule on a folder covers everything beneath it, and no rule can take a
//! file back out. So the folders that hold a hidden entry (at any depth below them; the root
//! always counts as one) are granted child by child, leaving the hidden entries out, and every
//! other folder is granted whole. Listing folder contents stays allowed everywhere: names reach
//! the model only through `ls`, whose output the shell filters.
//!
//! Finding those folders means looking through the workspace before each command; past
//! [`MAX_ENTRIES`] entries, folders not yet looked into are granted whole, and for those the
//! shell's own rules (argument checks, `rg`'s exclusions) are what keeps hidden files out.

use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};

use super::hidden;

/// The most entries looked at to find the folders that hold hidden entries (a few tens of
/// milliseconds at most, before each command).
pub const MAX_ENTRIES: usize = 20_000;

/// One thing a confined command may read, held open (`O_PATH`, not following a link) so what
/// was checked is what the rule names.
#[derive(Debug)]
pub enum Grant {
    /// A folder and everything beneath it.
    Folder(OwnedFd),
    /// A single file (regular, or a pipe or device, as beneath a folder granted whole).
    File(OwnedFd),
}

/// The grants covering the workspace at `root` (a real path) minus its hidden entries.
pub fn grants(root: &Path) -> Vec<Grant> {
    let holders = holders(root);
    let mut grants = Vec::new();
    let Ok(root_fd) = open_path(rustix::fs::CWD, root.as_os_str(), true) else {
        return grants;
    };
    let mut stack = vec![(root.to_path_buf(), root_fd)];
    while let Some((dir, fd)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if hidden::entry_hidden(root, &dir, &name).is_some() {
                continue;
            }
            // Opened from the folder's own handle without following a link: a link is never
            // granted (a rule on it would grant where it leads, maybe a hidden file or outside);
            // what it leads to inside the workspace has a grant of its own.
            let Ok(child) = open_path(fd.as_fd(), &name, false) else {
                continue;
            };
            let Ok(stat) = rustix::fs::fstat(&child) else {
                continue;
            };
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::Directory => {
                    let path = dir.join(&name);
                    if holders.contains(&path) {
                        stack.push((path, child));
                    } else {
                        grants.push(Grant::Folder(child));
                    }
                }
                FileType::Symlink => {}
                // A rule on a file holds for every name of it: a hard link could be a hidden
                // file's other name, so files with more than one are left out (as the tools do).
                _ if stat.st_nlink == 1 => grants.push(Grant::File(child)),
                _ => {}
            }
        }
    }
    grants
}

/// Opens `name` under `dir` as a path handle, never following a link at its end; `dir_only`
/// also requires a folder.
fn open_path(dir: impl AsFd, name: &OsStr, dir_only: bool) -> rustix::io::Result<OwnedFd> {
    let mut flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if dir_only {
        flags |= OFlags::DIRECTORY;
    }
    rustix::fs::openat(dir, name, flags, Mode::empty())
}

/// The folders under `root` that hold a hidden entry somewhere beneath them, found breadth
/// first within [`MAX_ENTRIES`] entries; the root is always one.
fn holders(root: &Path) -> HashSet<PathBuf> {
    let mut holders = HashSet::from([root.to_path_buf()]);
    // MiniClaw's own folders may lie deep (`--workspace ~`): the folders above them are always
    // granted child by child, however many entries the walk below looks at.
    for folder in hidden::own_folders_in(root) {
        if let Some(parent) = folder.parent() {
            mark(&mut holders, root, parent);
        }
    }
    let mut queue = VecDeque::from([root.to_path_buf()]);
    let mut seen = 0;
    while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return holders;
            }
            let name = entry.file_name();
            if hidden::name_hidden(&name, dir == root).is_some() {
                mark(&mut holders, root, &dir);
            } else if name != ".git" && entry.file_type().is_ok_and(|t| t.is_dir()) {
                // `.git` holds thousands of objects and no key file; it is granted whole.
                queue.push_back(entry.path());
            }
        }
    }
    holders
}

/// Marks `dir` and every folder above it up to `root` as holding a hidden entry.
fn mark(holders: &mut HashSet<PathBuf>, root: &Path, dir: &Path) {
    let mut current = Some(dir);
    while let Some(d) = current {
        // Once one is marked, so is everything above it.
        if !holders.insert(d.to_path_buf()) || d == root {
            return;
        }
        current = d.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// The real paths the grants name.
    fn named(grants: &[Grant]) -> Vec<String> {
        let mut names: Vec<String> = grants
            .iter()
            .map(|g| {
                let (Grant::Folder(fd) | Grant::File(fd)) = g;
                let kind = if matches!(g, Grant::Folder(_)) {
                    "dir"
                } else {
                    "file"
                };
                let link = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd));
                let path = fs::read_link(link).unwrap();
                format!("{kind} {}", path.file_name().unwrap().to_string_lossy())
            })
            .collect();
        names.sort();
        names
    }

    #[test]
    fn folders_holding_hidden_entries_are_granted_child_by_child() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        fs::create_dir_all(root.join("sub/deep")).unwrap();
        fs::create_dir_all(root.join("clean/inner")).unwrap();
        fs::create_dir_all(root.join(".miniclaw/sessions")).unwrap();
        for file in [
            ".env",
            "history.json.lock",
            "a.txt",
            "sub/deep/.ENV",
            "sub/b.txt",
        ] {
            fs::write(root.join(file), "x").unwrap();
        }
        fs::write(root.join("sub/deep/c.txt"), "x").unwrap();
        std::os::unix::fs::symlink(".env", root.join("link")).unwrap();
        fs::hard_link(root.join("a.txt"), root.join("a-again.txt")).unwrap();
        let grants = grants(&root);
        assert_eq!(
            named(&grants),
            ["dir clean", "file b.txt", "file c.txt"],
            "the root, sub and sub/deep hold hidden entries; clean is whole; links, hard links \
             and hidden entries get nothing"
        );
    }
}
