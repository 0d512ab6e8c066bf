//! What MiniClaw's own tools changed in a project folder since it was trusted.
//!
//! A trusted project's MCP servers and plugins run code of the project that the trust hash may
//! not cover (a module a server imports, a package in `node_modules`). So every file a tool
//! writes, appends to, edits or puts back (`/undo`) inside the folder MiniClaw started in, when
//! that folder holds project commands, is recorded durably in `<data dir>/changed.json` (keyed by
//! the folder's real path). At the next start a trusted project whose record holds a file its
//! servers or plugins could load is asked about again (`loadable`); a yes or `--trust` re-trusts
//! and clears the record.
//!
//! "Could load" is judged conservatively by `could_load`: code and configuration by extension
//! (`CODE_EXTENSIONS`), anything inside an interpreter or dependency folder, anything under the
//! project's command folders (`tools_plugins/`), its settings files, and anything under a folder
//! (or the file itself) that a project server's command or arguments name. Notes and data files
//! (`.md`, `.txt`, `.csv`, ...) elsewhere do not make a start ask.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::capped_read::{Links, read_capped};

/// The largest record read (a few thousand paths).
const MAX_RECORD_BYTES: u64 = 1 << 20;
/// The most paths remembered per folder; past that the record says only that more changed.
const MAX_PATHS: usize = 2000;
/// The name standing for "more files than were remembered" (always counts as loadable).
pub const MORE: &str = "(more files)";

/// Extensions of files an interpreter or MiniClaw loads as code or configuration.
pub const CODE_EXTENSIONS: [&str; 20] = [
    "py", "pyc", "pth", "pyi", "js", "mjs", "cjs", "ts", "mts", "cts", "jsx", "tsx", "json",
    "toml", "yaml", "yml", "sh", "so", "node", "cfg",
];

/// Folder names whose files an interpreter loads unasked.
const CODE_FOLDERS: [&str; 6] = [
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
    ".git",
];

/// The record: folder (real path) → paths changed, relative to it.
#[derive(Debug, Default, Serialize, Deserialize)]
struct ChangeFile {
    folders: BTreeMap<String, BTreeSet<String>>,
}

/// Where the record is kept.
pub fn changes_path() -> Option<PathBuf> {
    crate::paths::data_dir().map(|d| d.join("changed.json"))
}

fn read(store: &Path) -> ChangeFile {
    read_capped(store, MAX_RECORD_BYTES, Links::Refuse)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Writes the record whole and durably (`durable::replace`).
fn write(store: &Path, file: &ChangeFile) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(file).map_err(std::io::Error::other)?;
    crate::durable::replace(store, |out| out.write_all(&bytes)).map(|_| ())
}

/// One process at a time changes the record (tool calls run side by side).
static WRITING: Mutex<()> = Mutex::new(());

/// Adds `relative` to the record of `folder`.
pub fn add(store: &Path, folder: &Path, relative: &str) -> std::io::Result<()> {
    let _guard = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let mut file = read(store);
    let paths = file
        .folders
        .entry(folder.to_string_lossy().into_owned())
        .or_default();
    if paths.contains(relative) || paths.contains(MORE) {
        return Ok(());
    }
    if paths.len() >= MAX_PATHS {
        paths.insert(MORE.to_string());
    } else {
        paths.insert(relative.to_string());
    }
    write(store, &file)
}

/// The paths recorded for `folder`, sorted.
pub fn changed(store: &Path, folder: &Path) -> Vec<String> {
    read(store)
        .folders
        .get(&folder.to_string_lossy().into_owned())
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default()
}

/// Forgets the record of `folder` (it was trusted again).
pub fn clear(store: &Path, folder: &Path) -> std::io::Result<()> {
    let _guard = WRITING.lock().unwrap_or_else(|e| e.into_inner());
    let mut file = read(store);
    if file
        .folders
        .remove(&folder.to_string_lossy().into_owned())
        .is_none()
    {
        return Ok(());
    }
    write(store, &file)
}

/// Whether a changed file (relative to the project folder) is one the project's servers or
/// plugins could load; `roots` are the project-relative files and folders that its command
/// folders, settings files and server command lines name.
pub fn could_load(relative: &str, roots: &[String]) -> bool {
    if relative == MORE {
        return true;
    }
    let lower = relative.to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('/').collect();
    if parts.iter().any(|p| CODE_FOLDERS.contains(p)) {
        return true;
    }
    let name = parts.last().copied().unwrap_or_default();
    if let Some((_, ext)) = name.rsplit_once('.')
        && CODE_EXTENSIONS.contains(&ext)
    {
        return true;
    }
    // No extension at all: an executable script (`bin/serve`) reads as any other.
    if !name.contains('.') {
        return true;
    }
    roots.iter().any(|r| {
        let r = r.to_ascii_lowercase();
        lower == r || lower.starts_with(&format!("{r}/"))
    })
}

/// Records what MiniClaw's tools change inside one project folder (see the module doc).
#[derive(Debug)]
pub struct ChangeLog {
    folder: PathBuf,
    store: PathBuf,
    /// Paths already recorded by this process, so a file edited again costs nothing.
    seen: Mutex<BTreeSet<String>>,
}

impl ChangeLog {
    /// The log for the folder MiniClaw starts in, when it holds project commands (see
    /// `trust::has_project_commands`) and there is a data folder.
    pub fn for_start_folder() -> Option<Self> {
        let folder = std::env::current_dir().ok()?.canonicalize().ok()?;
        if !super::has_project_commands(&folder) {
            return None;
        }
        Some(Self::new(folder, changes_path()?))
    }

    /// A log for `folder` (a real path) kept in `store`.
    pub fn new(folder: PathBuf, store: PathBuf) -> Self {
        Self {
            folder,
            store,
            seen: Mutex::new(BTreeSet::new()),
        }
    }

    /// Notes that a tool changed the file at `real` (a real path). Outside the folder it is
    /// ignored. Blocking file work: called from the tools' blocking threads.
    pub fn note(&self, real: &Path) {
        let Ok(relative) = real.strip_prefix(&self.folder) else {
            return;
        };
        let relative = relative.to_string_lossy().replace('\\', "/");
        if relative.is_empty() {
            return;
        }
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if seen.contains(&relative) {
            return;
        }
        match add(&self.store, &self.folder, &relative) {
            Ok(()) => {
                seen.insert(relative);
            }
            Err(e) => {
                tracing::warn!(error = %e, path = %relative, "the change could not be recorded")
            }
        }
    }
}

impl crate::tools::ChangeWatcher for ChangeLog {
    fn changed(&self, real: &Path) {
        self.note(real);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restore_is_recorded_in_the_trust_record_of_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("p");
        std::fs::create_dir_all(&ws).unwrap();
        let store = dir.path().join("data/changed.json");
        let folder = ws.canonicalize().unwrap();
        let log = ChangeLog::new(folder.clone(), store.clone());
        let sandbox = crate::tools::Sandbox::new(&ws)
            .unwrap()
            .with_change_log(Some(std::sync::Arc::new(log)));
        crate::tools::snapshot::restore(&sandbox, "srv.py", Some(b"print(1)")).unwrap();
        crate::tools::snapshot::restore(&sandbox, "gone.py", None).unwrap();
        assert_eq!(
            changed(&store, &folder),
            vec!["srv.py"],
            "a file put back counts; nothing removed, nothing recorded"
        );
        crate::tools::snapshot::restore(&sandbox, "srv.py", None).unwrap();
        assert!(!ws.join("srv.py").exists());
    }

    #[test]
    fn changes_are_recorded_per_folder_durably_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("data/changed.json");
        let project = dir.path().join("p");
        let log = ChangeLog::new(project.clone(), store.clone());
        log.note(&project.join("srv.py"));
        log.note(&project.join("srv.py"));
        log.note(&project.join("notes/a.md"));
        log.note(&dir.path().join("elsewhere.py"));
        assert_eq!(changed(&store, &project), vec!["notes/a.md", "srv.py"]);
        assert!(changed(&store, dir.path()).is_empty());
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&store).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        clear(&store, &project).unwrap();
        assert!(changed(&store, &project).is_empty());
        let leftovers: Vec<_> = std::fs::read_dir(dir.path().join("data"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, vec!["changed.json"], "no temporary file left");
    }

    #[test]
    fn code_and_configuration_could_be_loaded_notes_could_not() {
        let roots = vec!["mcp".to_string(), "tools_plugins".to_string()];
        for yes in [
            "srv.py",
            "lib/Helper.PY",
            "a/b.pth",
            "index.mjs",
            "x.cjs",
            "cfg.json",
            "pyproject.toml",
            "run.sh",
            "native.so",
            "mcp/data.txt",
            "tools_plugins/readme.md",
            "node_modules/dep/readme.md",
            "bin/serve",
            MORE,
        ] {
            assert!(could_load(yes, &roots), "{yes}");
        }
        for no in ["notes.md", "data/table.csv", "docs/guide.txt", "mcpx/a.txt"] {
            assert!(!could_load(no, &roots), "{no}");
        }
    }
}
