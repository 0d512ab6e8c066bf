//! What the tools never show or open, wherever they look: files that may hold keys (every path
//! component named `.env*`, in any letter case) and MiniClaw's own files at the workspace root
//! (`history.json`, its `history.json.*` siblings — journal, lock, temporary and corrupt copies —
//! and the `.miniclaw/` folder), and MiniClaw's own config and data folders (`paths::config_dir()`,
//! `paths::data_dir()`, by their real paths) wherever they lie in the workspace: they hold keys,
//! server tokens and the trust record.
//!
//! This is the one rule; every tool asks it. Reads refuse such a path (also when a symbolic
//! link leads to one), listings and searches leave them out, and the shell refuses arguments
//! naming them, keeps them out of what `rg` walks and out of what `ls` prints, and confines each
//! command so the kernel refuses to open them (`confine`).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use crate::paths::HISTORY_FILE as HISTORY_NAME;

/// MiniClaw's folder of saved sessions.
const SESSIONS_DIR: &str = ".miniclaw";
/// The prefix of names that may hold keys (`.env`, `.env.local`, `.envrc`, ...).
const KEY_PREFIX: &str = ".env";

/// Globs (matched in any letter case against every name, at any depth) that cover every hidden
/// name, for programs that walk folders themselves (`rg`).
pub const EXCLUDE_GLOBS: [&str; 4] = [".env*", ".miniclaw", "history.json", "history.json.*"];

/// Why a path is kept from the tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hidden {
    /// A `.env*` file or folder: it may hold keys.
    KeyFile,
    /// One of MiniClaw's own files at the workspace root.
    OwnFile,
    /// MiniClaw's own config or data folder (keys, server tokens, trust decisions).
    OwnFolder,
}

impl Hidden {
    /// The rule, as the model is told it.
    pub fn rule(self) -> &'static str {
        match self {
            Hidden::KeyFile => {
                "files named .env* may hold keys and are kept out of the tools' reach"
            }
            Hidden::OwnFile => {
                "MiniClaw's own files (history.json and its siblings, .miniclaw/) are kept out of \
                 the tools' reach"
            }
            Hidden::OwnFolder => {
                "MiniClaw's own config and data folders (keys, tokens, trust decisions) are kept \
                 out of the tools' reach"
            }
        }
    }
}

/// Whether a name is a key file's (`.env*`, any letter case), at any depth.
pub fn is_key_name(name: &str) -> bool {
    name.get(..KEY_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(KEY_PREFIX))
}

/// Whether a name is one of MiniClaw's own (`history.json`, `history.json.*`, `.miniclaw`, any
/// letter case, for case-insensitive file systems). Hidden only at the workspace root.
pub fn is_own_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower == SESSIONS_DIR
        || lower == HISTORY_NAME
        || lower
            .strip_prefix(HISTORY_NAME)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Whether an entry named `name` is hidden, in the workspace root when `at_root` is set.
pub fn name_hidden(name: &OsStr, at_root: bool) -> Option<Hidden> {
    // A name that is not UTF-8 is judged by its readable part: `.env\xff` is still a key file.
    let name = name.to_string_lossy();
    if is_key_name(&name) {
        Some(Hidden::KeyFile)
    } else if at_root && is_own_name(&name) {
        Some(Hidden::OwnFile)
    } else {
        None
    }
}

/// Whether a path of plain names, relative to the workspace root, is hidden or lies inside
/// something hidden.
pub fn parts_hidden<'a>(parts: impl IntoIterator<Item = &'a str>) -> Option<Hidden> {
    parts
        .into_iter()
        .enumerate()
        .find_map(|(i, part)| name_hidden(OsStr::new(part), i == 0))
}

/// Whether a path relative to the workspace root is hidden or lies inside something hidden.
/// `.` components are skipped; `..` never reaches here (the sandbox refuses it first).
pub fn path_hidden(relative: &Path) -> Option<Hidden> {
    relative
        .components()
        .filter_map(|c| match c {
            Component::Normal(name) => Some(name),
            _ => None,
        })
        .enumerate()
        .find_map(|(i, name)| name_hidden(name, i == 0))
}

/// MiniClaw's own folders (config and data), by their real paths and as the system names them;
/// found once per process.
pub fn own_folders() -> &'static [PathBuf] {
    static FOLDERS: OnceLock<Vec<PathBuf>> = OnceLock::new();
    FOLDERS.get_or_init(|| {
        let mut out = Vec::new();
        for dir in [crate::paths::config_dir(), crate::paths::data_dir()]
            .into_iter()
            .flatten()
        {
            if let Ok(real) = dir.canonicalize()
                && !out.contains(&real)
            {
                out.push(real);
            }
            if dir.is_absolute() && !out.contains(&dir) {
                out.push(dir);
            }
        }
        out
    })
}

/// Whether a real (absolute) path is one of `folders` or lies inside one.
pub fn in_folders(real: &Path, folders: &[PathBuf]) -> bool {
    folders.iter().any(|f| real.starts_with(f))
}

/// Whether a real (absolute) path is MiniClaw's config or data folder or lies inside one.
pub fn real_hidden(real: &Path) -> Option<Hidden> {
    in_folders(real, own_folders()).then_some(Hidden::OwnFolder)
}

/// Whether the entry `name` of the folder whose real path is `dir` (in the workspace whose real
/// path is `root`) is hidden: by its name, or because it is one of MiniClaw's own folders.
pub fn entry_hidden(root: &Path, dir: &Path, name: &OsStr) -> Option<Hidden> {
    name_hidden(name, dir == root).or_else(|| real_hidden(&dir.join(name)))
}

/// MiniClaw's own folders that lie strictly inside the workspace at `root` (a real path).
pub fn own_folders_in(root: &Path) -> Vec<PathBuf> {
    own_folders()
        .iter()
        .filter(|f| f.starts_with(root) && f.as_path() != root)
        .cloned()
        .collect()
}

/// Whether the workspace at `root` (a real path) is one of MiniClaw's own folders or lies
/// inside one: then nothing in it may be reached, and MiniClaw refuses to start there.
pub fn workspace_in_own_folder(root: &Path) -> Option<PathBuf> {
    own_folders().iter().find(|f| root.starts_with(f)).cloned()
}

/// Whether a name is hidden wherever it appears, for outputs that do not say where they are
/// (a shell listing): key names, and MiniClaw's own names at any depth.
pub fn name_hidden_anywhere(name: &str) -> bool {
    is_key_name(name) || is_own_name(name)
}

/// The key files (`.env*`) directly in `root`, sorted, for the notice at start.
pub fn key_files_in(root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_key_name(n))
        .collect();
    names.sort();
    names
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_names_match_in_any_case_at_any_depth() {
        for name in [".env", ".ENV", ".Env.local", ".envrc", ".env.production"] {
            assert!(is_key_name(name), "{name}");
        }
        for name in ["env", "my.env", "x.env.local", ".en", ""] {
            assert!(!is_key_name(name), "{name}");
        }
        assert_eq!(
            parts_hidden(["sub", "deeper", ".ENV"]),
            Some(Hidden::KeyFile)
        );
        assert_eq!(
            path_hidden(Path::new("./sub/.env.local/x")),
            Some(Hidden::KeyFile)
        );
    }

    #[test]
    fn own_files_are_hidden_only_at_the_root() {
        for name in [
            "history.json",
            "History.JSON",
            "history.json.journal",
            "history.json.lock",
            "history.json.corrupt-20250101",
            "history.json.journal.corrupt-1",
            ".miniclaw",
        ] {
            assert_eq!(
                parts_hidden([name]),
                Some(Hidden::OwnFile),
                "{name} at the root"
            );
            assert_eq!(parts_hidden(["sub", name]), None, "{name} in a folder");
        }
        assert_eq!(
            path_hidden(Path::new(".miniclaw/sessions/x.json")),
            Some(Hidden::OwnFile)
        );
        assert_eq!(parts_hidden(["history.jsonl"]), None);
        assert_eq!(parts_hidden(["notes", "a.txt"]), None);
        assert!(name_hidden_anywhere("history.json.lock") && !name_hidden_anywhere("a.json"));
    }

    #[test]
    fn own_folders_hide_everything_beneath_them() {
        let folders = vec![PathBuf::from("/home/u/.config/miniclaw")];
        assert!(in_folders(
            Path::new("/home/u/.config/miniclaw/config.toml"),
            &folders
        ));
        assert!(in_folders(Path::new("/home/u/.config/miniclaw"), &folders));
        assert!(!in_folders(
            Path::new("/home/u/.config/miniclaw2"),
            &folders
        ));
        assert!(!in_folders(Path::new("/home/u/.config"), &folders));
    }
}
