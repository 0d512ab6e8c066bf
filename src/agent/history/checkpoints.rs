//! What each turn of a session changed in the workspace's files, so `/undo` can put them back
//! and `/diff` can show them: `<workspace>/.miniclaw/checkpoints/<session id>/turns.json` lists
//! the turns, and `blobs/<sha256>` holds each earlier content once. The tools never see the
//! folder (`tools::hidden`).

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::{HistoryError, files};

/// The checkpoints folder under a workspace.
pub const CHECKPOINTS_DIR: &str = ".miniclaw/checkpoints";

/// One file a turn changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileMark {
    /// The path as the tools show it (relative to the workspace).
    pub path: String,
    /// The hash of its content before the turn (`None`: it did not exist).
    pub before: Option<String>,
    /// The hash of its content after the turn (`None`: it did not exist), to tell a change
    /// made since.
    pub after: Option<String>,
}

/// What one turn changed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnMark {
    /// The turn's prompt, shortened (to name it).
    pub prompt: String,
    /// The files, in the order they were first changed.
    pub files: Vec<FileMark>,
    /// Set once `/undo` put the files back.
    #[serde(default)]
    pub undone: bool,
    /// What a command changed that was not kept (folders `.gitignore` leaves out): `/undo`
    /// names them as not put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_kept: Vec<String>,
}

/// What the running turn has changed so far: each file's path and the hash of its content
/// before its first change (`None`: it did not exist).
#[derive(Debug, Default)]
pub struct TurnChanges {
    /// The files, in the order they were first changed.
    pub files: std::sync::Mutex<Vec<(String, Option<String>)>>,
    /// Folders (or files) a command changed that could not be kept (`.gitignore` leaves them
    /// out): `/undo` says it does not put them back.
    pub not_kept: std::sync::Mutex<Vec<String>>,
}

/// The folder beside the sessions' checkpoints holding the blobs they share.
const SHARED_BLOBS: &str = "shared-blobs";

/// The record of the project instructions a session's system prompt carried, beside its
/// checkpoints.
const INSTRUCTIONS_RECORD: &str = "instructions.json";

/// The largest record read back (the instructions are capped far below it).
const MAX_INSTRUCTIONS_RECORD: u64 = 1024 * 1024;

/// The project instructions a session's system prompt carried when it was last opened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RememberedInstructions {
    /// The file's text as it went into the prompt (`None`: there were none: no file, an empty
    /// one, or one that was refused).
    pub text: Option<String>,
}

/// The checkpoints of one session.
#[derive(Clone, Debug)]
pub struct Checkpoints {
    dir: PathBuf,
}

/// The hash that names a content.
pub fn hash(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Checkpoints {
    /// The checkpoints of session `session_id` of the workspace holding `history_path`.
    pub fn of(history_path: &Path, session_id: &str) -> Self {
        let root = history_path.parent().unwrap_or(Path::new("."));
        let id: String = session_id
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
            .collect();
        Self {
            dir: root.join(CHECKPOINTS_DIR).join(id),
        }
    }

    /// Every turn recorded, oldest first (none when nothing was, or the file is unreadable).
    pub fn turns(&self) -> Vec<TurnMark> {
        files::read_plain(&self.dir.join("turns.json"))
            .ok()
            .and_then(|bytes| serde_json::from_slice(&bytes).ok())
            .unwrap_or_default()
    }

    /// Replaces the list of turns (atomically).
    pub fn save_turns(&self, turns: &[TurnMark]) -> Result<(), HistoryError> {
        self.ensure_dirs()?;
        let bytes = serde_json::to_vec_pretty(turns)?;
        files::write_bytes(&self.dir.join("turns.json"), &bytes)
    }

    /// Keeps `bytes` and returns their hash.
    pub fn keep(&self, bytes: &[u8]) -> Result<String, HistoryError> {
        self.ensure_dirs()?;
        let name = hash(bytes);
        let path = self.dir.join("blobs").join(&name);
        if !path.exists() {
            files::write_bytes(&path, bytes)?;
        }
        Ok(name)
    }

    /// Keeps `bytes` like [`Checkpoints::keep`], in the blobs every session of the workspace
    /// shares (a workspace's files are kept once, whichever session's command kept them), and
    /// without waiting for the disk: for the many files kept before a command (a blob cut short
    /// by a crash fails its hash when read, and is then reported, never used).
    pub fn keep_quick(&self, bytes: &[u8]) -> Result<String, HistoryError> {
        let name = hash(bytes);
        let shared = self.blobs_dir();
        let path = shared.join(&name);
        if path.exists() {
            return Ok(name);
        }
        self.ensure_dirs()?;
        let temp = shared.join(format!(".{name}.{}", uuid::Uuid::new_v4().simple()));
        let written = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&temp)
            .and_then(|mut f| std::io::Write::write_all(&mut f, bytes))
            .and_then(|()| fs::rename(&temp, &path));
        if let Err(e) = written {
            let _ = fs::remove_file(&temp);
            return Err(files::io_err(&path)(e));
        }
        Ok(name)
    }

    /// The blobs every session of the workspace shares (names the store a command's manifest
    /// was kept in).
    pub fn blobs_dir(&self) -> PathBuf {
        self.dir.parent().unwrap_or(&self.dir).join(SHARED_BLOBS)
    }

    /// The content kept under `hash`.
    pub fn blob(&self, hash: &str) -> Result<Vec<u8>, HistoryError> {
        let fine = hash.len() == 64 && hash.chars().all(|c| c.is_ascii_hexdigit());
        let name = if fine { hash } else { "invalid" };
        let own = self.dir.join("blobs").join(name);
        // A file tool's blob is the session's own; a command's, the shared one.
        let path = if own.exists() {
            own
        } else {
            self.blobs_dir().join(name)
        };
        let bytes = files::read_plain(&path).map_err(files::io_err(&path))?;
        // Named by its hash: content that does not match was put there by someone else.
        if self::hash(&bytes) != hash {
            return Err(HistoryError::Damaged {
                path,
                reason: "its content does not match its name".into(),
            });
        }
        Ok(bytes)
    }

    /// The project instructions this session's system prompt last carried (`None`: never
    /// recorded, or the record is unusable: a link, a special file, too large, damaged).
    pub fn remembered_instructions(&self) -> Option<RememberedInstructions> {
        let path = self.dir.join(INSTRUCTIONS_RECORD);
        let bytes = crate::capped_read::read_capped(
            &path,
            MAX_INSTRUCTIONS_RECORD,
            crate::capped_read::Links::Refuse,
        )
        .ok()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// Records the project instructions the system prompt carries now (atomically).
    pub fn remember_instructions(
        &self,
        record: &RememberedInstructions,
    ) -> Result<(), HistoryError> {
        self.ensure_dirs()?;
        let bytes = serde_json::to_vec_pretty(record)?;
        files::write_bytes(&self.dir.join(INSTRUCTIONS_RECORD), &bytes)
    }

    /// Creates the folders, refusing a link anywhere on the way (a workspace could plant one
    /// to have the checkpoints written elsewhere).
    fn ensure_dirs(&self) -> Result<(), HistoryError> {
        let mut dirs: Vec<PathBuf> = self
            .dir
            .ancestors()
            .take(3)
            .map(Path::to_path_buf)
            .collect();
        dirs.reverse();
        dirs.push(self.dir.join("blobs"));
        dirs.push(self.blobs_dir());
        for dir in dirs {
            match fs::symlink_metadata(&dir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(HistoryError::Damaged {
                        path: dir,
                        reason: "it is a link or a file, not a folder".into(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::os::unix::fs::DirBuilderExt::mode(&mut fs::DirBuilder::new(), 0o700)
                        .create(&dir)
                        .map_err(files::io_err(&dir))?;
                }
                Err(e) => return Err(files::io_err(&dir)(e)),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turns_and_blobs_are_kept_and_read_back() {
        let ws = tempfile::tempdir().unwrap();
        let cp = Checkpoints::of(&ws.path().join("history.json"), "s1");
        assert!(cp.turns().is_empty());
        let h = cp.keep(b"old text").unwrap();
        assert_eq!(h, hash(b"old text"));
        assert_eq!(cp.blob(&h).unwrap(), b"old text");
        // A command's blobs are shared by the workspace's sessions.
        let quick = cp.keep_quick(b"a command's file").unwrap();
        let other = Checkpoints::of(&ws.path().join("history.json"), "s2");
        assert_eq!(other.blob(&quick).unwrap(), b"a command's file");
        assert_eq!(other.blobs_dir(), cp.blobs_dir());
        assert!(cp.blob("../../history.json").is_err());
        let planted = ws
            .path()
            .join(".miniclaw/checkpoints/s1/blobs")
            .join(hash(b"x"));
        fs::write(&planted, "not x").unwrap();
        assert!(
            cp.blob(&hash(b"x")).is_err(),
            "a blob that does not match its name"
        );
        let turn = TurnMark {
            prompt: "write it".into(),
            files: vec![FileMark {
                path: "a.txt".into(),
                before: Some(h),
                after: None,
            }],
            undone: false,
            not_kept: Vec::new(),
        };
        cp.save_turns(std::slice::from_ref(&turn)).unwrap();
        assert_eq!(cp.turns(), vec![turn]);
        assert!(
            ws.path()
                .join(".miniclaw/checkpoints/s1/turns.json")
                .is_file()
        );
    }
}
