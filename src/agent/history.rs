//! `history.json`: loaded at start, saved atomically after every turn, moved aside when corrupt.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::session::Session;

/// The file name inside the workspace.
pub const HISTORY_FILE: &str = "history.json";

/// Why the history could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum HistoryError {
    /// Reading, writing or renaming failed.
    #[error("history file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The session could not be encoded.
    #[error("history could not be encoded: {0}")]
    Encode(#[from] serde_json::Error),
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> HistoryError + '_ {
    move |source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What loading found.
#[derive(Debug)]
pub struct Loaded {
    /// The session to continue (a fresh one when there was none or it was corrupt).
    pub session: Session,
    /// A warning for the person, e.g. that a corrupt file was moved aside.
    pub notice: Option<String>,
}

/// Loads the history; a file that does not parse is moved aside, never overwritten. The file is
/// opened without following a link and without blocking: a link (to another conversation), a
/// pipe or anything but a plain file is moved aside like a corrupt file, with a notice.
pub fn load(path: &Path) -> Result<Loaded, HistoryError> {
    let text = match read_plain(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(Loaded {
                session: Session::new(),
                notice: None,
            });
        }
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) || e.kind() == NOT_PLAIN => {
            let what = if e.raw_os_error() == Some(libc::ELOOP) {
                "is a symbolic link"
            } else {
                "is not a regular file"
            };
            return move_aside(path, what);
        }
        Err(e) => return Err(io_err(path)(e)),
    };
    match serde_json::from_slice::<Session>(&text) {
        Ok(mut session) => {
            session.repair();
            Ok(Loaded {
                session,
                notice: None,
            })
        }
        Err(e) => move_aside(path, &format!("could not be read ({e})")),
    }
}

/// The error kind `read_plain` gives for a file that is not a plain file.
const NOT_PLAIN: std::io::ErrorKind = std::io::ErrorKind::InvalidInput;

/// Reads a plain file, never through a link and never blocking on a pipe.
fn read_plain(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::new(NOT_PLAIN, "not a regular file"));
    }
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Moves what sits at `path` aside (the link itself, not its target) and starts afresh.
fn move_aside(path: &Path, what: &str) -> Result<Loaded, HistoryError> {
    let aside = corrupt_path(path);
    fs::rename(path, &aside).map_err(io_err(path))?;
    Ok(Loaded {
        session: Session::new(),
        notice: Some(format!(
            "The history file {what}; it was kept as {} and a new conversation started.",
            aside.display()
        )),
    })
}

fn corrupt_path(path: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{stamp}"));
    path.with_file_name(name)
}

/// Saves the session: a temporary file beside it, flushed to disk, renamed over the old one,
/// so a crash at any moment leaves either the old or the new history, whole.
pub fn save(path: &Path, session: &Session) -> Result<(), HistoryError> {
    let bytes = serde_json::to_vec_pretty(session)?;
    let dir = path.parent().unwrap_or_else(|| Path::new("."));
    fs::create_dir_all(dir).map_err(io_err(dir))?;
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = path.with_file_name(tmp_name);
    let write = || -> std::io::Result<()> {
        // A stale temporary file (or a symlink planted in its place) is removed, and the new
        // one is created exclusively, which never follows a symlink.
        match fs::remove_file(&tmp) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        f.write_all(&bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        // The rename itself is durable only once the folder is synced.
        if let Ok(d) = fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io_err(path)(e)
    })
}

/// Deletes the history file (a missing file is fine).
pub fn clear(path: &Path) -> Result<(), HistoryError> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_err(path)(e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::Message;

    #[test]
    fn save_then_load_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        let mut s = Session::new();
        s.push(Message::user("你好"));
        save(&path, &s).unwrap();
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.session, s);
        assert!(loaded.notice.is_none());
    }

    #[test]
    fn a_corrupt_file_is_moved_aside_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        fs::write(&path, b"{ not json").unwrap();
        let loaded = load(&path).unwrap();
        assert!(loaded.notice.unwrap().contains("corrupt-"));
        assert_eq!(loaded.session.messages.len(), 1);
        assert!(!path.exists());
        let aside: Vec<_> = fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(fs::read(aside[0].path()).unwrap(), b"{ not json");
    }

    #[test]
    fn a_link_or_a_fifo_as_the_history_is_moved_aside_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other-conversation.json");
        let mut elsewhere = Session::new();
        elsewhere.push(crate::agent::session::Message::user(
            "SECRET from another project",
        ));
        save(&other, &elsewhere).unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(&ws).unwrap();
        let path = ws.join("history.json");
        std::os::unix::fs::symlink(&other, &path).unwrap();
        let loaded = load(&path).unwrap();
        assert!(
            !format!("{:?}", loaded.session.messages).contains("SECRET"),
            "the link was followed"
        );
        assert!(loaded.notice.unwrap().contains("symbolic link"));
        assert!(
            other.exists() && !path.exists(),
            "the link itself moved aside"
        );
        // A FIFO would block a plain open forever.
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let loaded = load(&path).unwrap();
        assert!(loaded.notice.unwrap().contains("not a regular file"));
        assert!(!path.exists());
    }

    #[test]
    fn clear_deletes_the_file_and_tolerates_absence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(HISTORY_FILE);
        save(&path, &Session::new()).unwrap();
        clear(&path).unwrap();
        assert!(!path.exists());
        clear(&path).unwrap();
    }
}

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
mod lock_tests {
    use super::*;

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
