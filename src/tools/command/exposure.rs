//! What of the workspace a jailed command may not see or change, found by walking it before
//! each command (MiniClaw does this, off the async runtime; the supervisor covers what it
//! finds, see `jail::mounts`). Hidden: what the tools never show (`.env*` at any depth, MiniClaw's
//! own files and folders) and any other name of a hidden file (a hard link). Read-only: `.git`,
//! `AGENTS.md`, `.mcp.json`, `miniclaw.toml` and `tools_plugins`, at any depth — what a later
//! program or session would run or obey. Past [`MAX_ENTRIES`] entries the walk stops; what lies
//! deeper is not covered (SECURITY.md says so), and after the command every new entry with one
//! of these names is moved aside (`quarantine`).

use std::collections::{HashSet, VecDeque};
use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::jail::Shielded;
use crate::tools::hidden;

/// The most entries looked at before each command (a few tens of milliseconds).
pub const MAX_ENTRIES: usize = 50_000;

/// Names kept read-only wherever they are (compared in lower case).
const READ_ONLY_NAMES: [&str; 5] = [
    ".git",
    "agents.md",
    ".mcp.json",
    "miniclaw.toml",
    "tools_plugins",
];

/// Whether a name is kept read-only wherever it appears.
pub fn read_only_name(name: &OsStr) -> bool {
    let lower = name.to_string_lossy().to_ascii_lowercase();
    READ_ONLY_NAMES.contains(&lower.as_str())
}

/// The shielded entries of the workspace at `root` (a real path), hidden ones first.
pub fn shielded(root: &Path) -> Vec<Shielded> {
    let mut hidden_entries = Vec::new();
    let mut read_only = Vec::new();
    let mut hidden_inodes = HashSet::new();
    let mut linked = Vec::new();
    for folder in hidden::own_folders_in(root) {
        hidden_entries.push(folder);
    }
    let mut queue = VecDeque::from([root.to_path_buf()]);
    let mut seen = 0;
    'walk: while let Some(dir) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                break 'walk;
            }
            let name = entry.file_name();
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if hidden::entry_hidden(root, &dir, &name).is_some() {
                if meta.is_file() {
                    hidden_inodes.insert((meta.dev(), meta.ino()));
                }
                if !hidden_entries.contains(&path) {
                    hidden_entries.push(path);
                }
                continue;
            }
            if read_only_name(&name) {
                read_only.push(path);
                continue;
            }
            if meta.is_dir() {
                queue.push_back(path);
            } else if meta.is_file() && meta.nlink() > 1 {
                linked.push((path, meta.dev(), meta.ino()));
            }
        }
    }
    hidden_entries.extend(
        linked
            .into_iter()
            .filter(|(_, dev, ino)| hidden_inodes.contains(&(*dev, *ino)))
            .map(|(path, _, _)| path),
    );
    hidden_entries
        .into_iter()
        .map(Shielded::Hidden)
        .chain(read_only.into_iter().map(Shielded::ReadOnly))
        .collect()
}

/// Whether the workspace-relative `relative` path holds a shielded name (a hidden or read-only
/// one) in any of its parts: a command may not have made it.
pub fn shielded_path(relative: &Path) -> bool {
    hidden::path_hidden(relative).is_some()
        || relative.components().any(|c| read_only_name(c.as_os_str()))
}

/// The paths of `entries`.
pub fn paths(entries: &[Shielded]) -> Vec<PathBuf> {
    entries
        .iter()
        .map(|e| match e {
            Shielded::Hidden(p) | Shielded::ReadOnly(p) => p.clone(),
        })
        .collect()
}
