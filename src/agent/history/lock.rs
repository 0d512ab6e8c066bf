//! `history.json.lock`: one MiniClaw per workspace history.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// An exclusive hold on a workspace's history, so two MiniClaws never overwrite each other.
/// Released when dropped (and by the OS when the process dies, however it dies).
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
        "another MiniClaw{holder} is already using this workspace's history ({path}); close it first, or start with --workspace pointing at another folder"
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

impl HistoryLock {
    /// Takes the lock beside `history_path` (`history.json.lock`), or says who holds it.
    pub fn acquire(history_path: &Path) -> Result<Self, LockError> {
        let mut name = history_path.file_name().unwrap_or_default().to_os_string();
        name.push(".lock");
        let path = history_path.with_file_name(name);
        let shown = path.display().to_string();
        if let Some(dir) = path.parent() {
            let _ = fs::create_dir_all(dir);
        }
        let mut options = fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        // Never through a symlink: a workspace could plant one pointing at a file to clobber.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::custom_flags(
            &mut options,
            libc::O_NOFOLLOW | libc::O_NONBLOCK,
        );
        let mut file = options.open(&path).map_err(|source| LockError::Io {
            path: shown.clone(),
            source,
        })?;
        let regular = file.metadata().map(|m| m.is_file()).unwrap_or(false);
        if !regular {
            return Err(LockError::Io {
                path: shown,
                source: std::io::Error::other("the lock file is not a regular file"),
            });
        }
        match file.try_lock() {
            Ok(()) => {
                let _ = file.set_len(0);
                let _ = write!(file, "{}", std::process::id());
                Ok(Self { _file: file, path })
            }
            Err(fs::TryLockError::WouldBlock) => {
                let holder = fs::read_to_string(&path)
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .map(|pid| format!(" (pid {pid})"))
                    .unwrap_or_default();
                Err(LockError::Held {
                    path: shown,
                    holder,
                })
            }
            Err(fs::TryLockError::Error(source)) => Err(LockError::Io {
                path: shown,
                source,
            }),
        }
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
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
        assert!(err.contains("already using"), "{err}");
        assert!(
            err.contains(&format!("pid {}", std::process::id())),
            "{err}"
        );
        drop(first);
        HistoryLock::acquire(&path).unwrap();
    }
}
