//! `history.json.lock`: one MiniClaw per workspace history.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An exclusive hold on a workspace's history, so two MiniClaws never overwrite each other.
/// Released when dropped, which also removes the lock file (a crash leaves it, unlocked: the OS
/// releases the lock however the process dies, and the next start takes it over).
#[derive(Debug)]
pub struct HistoryLock {
    _file: fs::File,
    path: PathBuf,
}

/// Why the history could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another process holds the lock.
    #[error(
        "another MiniClaw{holder} has this session open ({path}); close it there, or open another session (/new, --resume)"
    )]
    Held {
        /// The lock file.
        path: String,
        /// " (pid N)" when known.
        holder: String,
    },
    /// The lock file could not be opened.
    #[error("cannot open the lock file {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// How often a lock found taken is asked for again (a probe holds it for a moment only).
const PROBE_RETRIES: usize = 5;

/// How often a lock file removed by its last holder just as it was taken is tried again.
const ATTEMPTS: usize = 5;

impl HistoryLock {
    /// Takes the lock beside `history_path` (`history.json.lock`), or says who holds it.
    pub fn acquire(history_path: &Path) -> Result<Self, LockError> {
        let path = lock_path(history_path);
        if let Some(dir) = path.parent() {
            let _ = fs::create_dir_all(dir);
        }
        let mut attempt = 0;
        let mut busy = 0;
        loop {
            attempt += 1;
            let mut file = open_lock_file(&path)?;
            match file.try_lock() {
                // A holder that was leaving may have removed the file after we opened it: the
                // lock is then on a nameless file, and a third MiniClaw could lock a new one.
                Ok(()) if !names(&path, &file) && attempt < ATTEMPTS => continue,
                Ok(()) => {
                    let _ = file.set_len(0);
                    let _ = write!(file, "{}", std::process::id());
                    return Ok(Self { _file: file, path });
                }
                // Held, or only probed for a moment by another MiniClaw listing sessions
                // (`is_held`): asked again a few times over some 50 ms before it counts as held.
                Err(fs::TryLockError::WouldBlock) if busy < PROBE_RETRIES => {
                    busy += 1;
                    // Not a try at a vanished file: that count stays as it was.
                    attempt -= 1;
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(fs::TryLockError::WouldBlock) => return Err(held(&path)),
                Err(fs::TryLockError::Error(source)) => {
                    return Err(LockError::Io {
                        path: path.display().to_string(),
                        source,
                    });
                }
            }
        }
    }

    /// Whether another process holds the lock beside `history_path`, asked without taking it
    /// for longer than the asking (and without creating or removing the file).
    pub fn is_held(history_path: &Path) -> bool {
        let path = lock_path(history_path);
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_NOFOLLOW | libc::O_NONBLOCK,
        );
        match options.open(&path) {
            Ok(file) => matches!(file.try_lock(), Err(fs::TryLockError::WouldBlock)),
            Err(_) => false,
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for HistoryLock {
    /// Removes the lock file while still holding the lock, so a clean exit leaves no trace in
    /// the workspace; only if the name is still ours (nothing replaced it meanwhile).
    fn drop(&mut self) {
        if names(&self.path, &self._file) {
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// The lock file beside `history_path`: `history.json.lock`, `<id>.json.lock`.
fn lock_path(history_path: &Path) -> PathBuf {
    let mut name = history_path.file_name().unwrap_or_default().to_os_string();
    name.push(".lock");
    history_path.with_file_name(name)
}

/// Opens (creating) the lock file (`durable::open_lock_file`), saying which file it was.
fn open_lock_file(path: &Path) -> Result<fs::File, LockError> {
    crate::durable::open_lock_file(path).map_err(|source| LockError::Io {
        path: path.display().to_string(),
        source,
    })
}

/// Whether `path` still names the open `file` (the same inode on the same device).
fn names(path: &Path, file: &fs::File) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::symlink_metadata(path), file.metadata()) {
        (Ok(at_path), Ok(open)) => at_path.dev() == open.dev() && at_path.ino() == open.ino(),
        _ => false,
    }
}

/// The refusal when another process holds the lock, naming it when its pid is in the file.
fn held(path: &Path) -> LockError {
    let holder =
        crate::capped_read::read_capped_string(path, 4096, crate::capped_read::Links::Refuse)
            .ok()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit()))
            .map(|pid| format!(" (pid {pid})"))
            .unwrap_or_default();
    LockError::Held {
        path: path.display().to_string(),
        holder,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::history::{HISTORY_FILE, load, save};
    use crate::agent::session::Session;

    #[cfg(unix)]
    #[test]
    fn symlinks_planted_as_the_lock_or_temporary_file_are_never_written_through() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("precious.txt");
        fs::write(&outside, "precious data").unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir(&ws).unwrap();
        let path = ws.join(HISTORY_FILE);
        std::os::unix::fs::symlink(&outside, ws.join("history.json.lock")).unwrap();
        assert!(HistoryLock::acquire(&path).is_err());
        let tmp = ws.join(format!("history.json.tmp-{}", std::process::id()));
        std::os::unix::fs::symlink(&outside, &tmp).unwrap();
        save(&path, &Session::new()).unwrap();
        assert_eq!(fs::read_to_string(&outside).unwrap(), "precious data");
        assert!(load(&path).unwrap().notice.is_none());
    }

    #[test]
    fn a_second_holder_is_refused_until_the_first_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let first = HistoryLock::acquire(&path).unwrap();
        let err = HistoryLock::acquire(&path).unwrap_err().to_string();
        assert!(err.contains("has this session open"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        HistoryLock::acquire(&path).unwrap();
    }

    #[test]
    fn a_released_lock_leaves_no_file_and_a_stale_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let lock_file = dir.path().join("history.json.lock");
        let first = HistoryLock::acquire(&path).unwrap();
        assert!(lock_file.exists());
        drop(first);
        assert!(!lock_file.exists(), "a clean release removes the file");
        // What a crash leaves: the file, with a pid, and no lock on it.
        fs::write(&lock_file, "999999").unwrap();
        let again = HistoryLock::acquire(&path).unwrap();
        assert_eq!(
            fs::read_to_string(&lock_file).unwrap(),
            std::process::id().to_string()
        );
        drop(again);
        assert!(!lock_file.exists());
    }

    #[test]
    fn a_lock_file_removed_or_replaced_is_not_the_one_held() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.json.lock");
        let file = open_lock_file(&path).unwrap();
        assert!(names(&path, &file));
        fs::remove_file(&path).unwrap();
        assert!(!names(&path, &file), "removed");
        fs::write(&path, "someone else's").unwrap();
        assert!(!names(&path, &file), "replaced by another file");
    }
}
