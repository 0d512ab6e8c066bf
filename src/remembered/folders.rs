//! What MiniClaw remembers per folder: that the person agreed to work there, the approval
//! mode chosen there, and the command rules made there (read and written by `command_rules`). One record file, `<data dir>/folders.json`, keyed by the folder's
//! canonical path (a symlinked start folder and its target are one folder). A record file that
//! cannot be read as one (damaged, a link, not a plain file, too big) is moved aside
//! (`folders.json.corrupt-<stamp>`) before anything is written, never overwritten: the person
//! can look at it, and nothing is lost silently.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

use crate::approval::ApprovalMode;

/// What is kept for one folder.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FolderRecord {
    /// The person said yes to working in this folder (the start dialog).
    #[serde(default)]
    pub accepted: bool,
    /// The approval mode chosen here (`/approval`, Shift+Tab).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalMode>,
    /// The prefix rules for `run_command` made here (the dialog's "don't ask again"), each as
    /// its words (what they mean is the command rules' to say). Kept here, outside the
    /// project, so neither the model nor a cloned repository can add one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command_rules: Vec<Vec<String>>,
}

/// The record file's content.
#[derive(Debug, Default, Serialize, Deserialize)]
struct FoldersFile {
    folders: BTreeMap<String, FolderRecord>,
}

/// The most a record file may hold: a line or two per folder.
const MAX_BYTES: u64 = 4 * 1024 * 1024;

/// Where the records live (`None` without a data directory).
pub fn path() -> Option<PathBuf> {
    crate::paths::data_dir().map(|d| d.join("folders.json"))
}

/// The key of `folder`: its canonical path, or the path made absolute when it cannot be
/// resolved (a folder not made yet).
pub fn key(folder: &Path) -> String {
    canonical(folder).to_string_lossy().into_owned()
}

/// `folder` resolved (links followed), else made absolute.
pub fn canonical(folder: &Path) -> PathBuf {
    std::fs::canonicalize(folder)
        .unwrap_or_else(|_| std::path::absolute(folder).unwrap_or_else(|_| folder.to_path_buf()))
}

/// Why the record file could not be read.
#[derive(Debug, thiserror::Error)]
#[error("{path} could not be read as MiniClaw's folder records ({reason})")]
pub struct Damaged {
    /// The file.
    pub path: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The file at `path`: `Ok(None)` when there is none.
fn read(path: &Path) -> Result<Option<FoldersFile>, Damaged> {
    let damaged = |reason: String| Damaged {
        path: path.display().to_string(),
        reason,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(damaged(e.to_string())),
        Ok(_) => {}
    }
    let bytes = crate::capped_read::read_capped(path, MAX_BYTES, crate::capped_read::Links::Refuse)
        .map_err(|e| damaged(e.to_string()))?;
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| damaged(e.to_string()))
}

/// The record of `folder` in the file at `path`, and a notice when the file is damaged (then
/// nothing is remembered for this run; the file is left as it is until a save sets it aside).
pub fn load(path: &Path, folder: &Path) -> (FolderRecord, Option<String>) {
    match read(path) {
        Ok(file) => (
            file.and_then(|mut f| f.folders.remove(&key(folder)))
                .unwrap_or_default(),
            None,
        ),
        Err(e) => (
            FolderRecord::default(),
            Some(format!(
                "{e}: nothing remembered per folder is used this run (the start folder's yes, its approval mode); it is kept aside, not overwritten, when something is next remembered."
            )),
        ),
    }
}

/// One change of the records at a time in this process (as in `remembered::remember`).
static SAVING: Mutex<()> = Mutex::new(());

/// Keeps `update` applied to `folder`'s record in the file at `path`, durably. A damaged file
/// is moved aside first (its new name is returned), never overwritten.
pub fn remember(
    path: &Path,
    folder: &Path,
    update: impl FnOnce(&mut FolderRecord),
) -> std::io::Result<Option<PathBuf>> {
    let _saving = SAVING.lock().unwrap_or_else(|e| e.into_inner());
    // And one at a time across processes (two windows, a UI and a script): the read and the
    // write under one lock, so neither loses the other's change.
    let _across = lock_beside(path)?;
    let (mut file, aside) = match read(path) {
        Ok(file) => (file.unwrap_or_default(), None),
        Err(_) => (FoldersFile::default(), Some(move_aside(path)?)),
    };
    update(file.folders.entry(key(folder)).or_default());
    let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    crate::durable::replace(path, |out| out.write_all(&bytes))?;
    Ok(aside)
}

/// An exclusive lock on `<name>.lock` beside `path`, held until dropped (waiting for another
/// process's, which holds it only while it saves). Never through a link or a FIFO.
fn lock_beside(path: &Path) -> std::io::Result<std::fs::File> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    let lock = path.with_file_name(name);
    if let Some(dir) = lock.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let file = crate::durable::open_lock_file(&lock)?;
    file.lock()?;
    Ok(file)
}

/// Renames a damaged record file to `<name>.corrupt-<stamp>` beside it.
fn move_aside(path: &Path) -> std::io::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{stamp}"));
    let aside = path.with_file_name(name);
    std::fs::rename(path, &aside)?;
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_are_kept_per_canonical_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("data/folders.json");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        std::os::unix::fs::symlink(&a, dir.path().join("link")).unwrap();
        remember(&store, &dir.path().join("link"), |r| {
            r.approval = Some(ApprovalMode::Ask)
        })
        .unwrap();
        remember(&store, &b, |r| r.accepted = true).unwrap();
        assert_eq!(load(&store, &a).0.approval, Some(ApprovalMode::Ask));
        assert_eq!(
            load(&store, &b).0,
            FolderRecord {
                accepted: true,
                ..FolderRecord::default()
            }
        );
        assert_eq!(load(&store, dir.path()).0, FolderRecord::default());
    }

    #[test]
    fn a_change_waits_for_another_process_saving_and_keeps_its_change() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("folders.json");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        // "Another process" is saving: it holds the lock while it writes its change.
        let other = lock_beside(&store).unwrap();
        let saver = {
            let (store, b) = (store.clone(), b.clone());
            std::thread::spawn(move || remember(&store, &b, |r| r.accepted = true))
        };
        let theirs = serde_json::json!({"folders": {key(&a): {"accepted": true}}});
        std::fs::write(&store, theirs.to_string()).unwrap();
        drop(other);
        saver.join().unwrap().unwrap();
        assert!(
            load(&store, &a).0.accepted,
            "the other process's change is kept"
        );
        assert!(load(&store, &b).0.accepted);
    }

    #[test]
    fn a_damaged_file_is_set_aside_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("folders.json");
        std::fs::write(&store, "{not json").unwrap();
        let (record, notice) = load(&store, dir.path());
        assert_eq!(record, FolderRecord::default());
        assert!(notice.unwrap().contains("kept aside"));
        let aside = remember(&store, dir.path(), |r| r.accepted = true)
            .unwrap()
            .unwrap();
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), "{not json");
        assert!(load(&store, dir.path()).0.accepted);
    }
}
