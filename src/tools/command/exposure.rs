//! What of the workspace a jailed command may not see or change, found by walking it before
//! each command (MiniClaw does this, off the async runtime; the supervisor covers what it
//! finds, see `jail::mounts`). Hidden: what the tools never show (`.env*` at any depth, MiniClaw's
//! own files and folders) and any other name of a hidden file (a hard link). Read-only: `.git`,
//! `AGENTS.md`, `.mcp.json`, `miniclaw.toml`, `tools_plugins`, `.agents` (skills, slash
//! commands) and `.claude` (Claude Code's hooks), at any depth — what a later
//! program or session would run or obey. The walk itself is `survey`'s; past its entry limit
//! what lies deeper is not covered (SECURITY.md says so), and after the command every new entry
//! with one of these names is moved aside (`quarantine`).

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::jail::Shielded;
use crate::tools::hidden;

/// Names kept read-only wherever they are (compared in lower case).
const READ_ONLY_NAMES: [&str; 7] = [
    ".git",
    ".agents",
    ".claude",
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
