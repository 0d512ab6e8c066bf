//! Earlier sessions of a workspace: `<workspace>/.miniclaw/sessions/<id>.json`, each a whole
//! session in the schema of `history.json`. Written atomically, read without following a link,
//! never deleted but on the person's word. The tools never see the folder (`tools::hidden`).

use std::fs;
use std::path::{Path, PathBuf};

use super::{HistoryError, files};
use crate::agent::session::{Session, shorten};
use crate::events::SessionSummary;

/// The sessions folder under a workspace.
pub const SESSIONS_DIR: &str = ".miniclaw/sessions";

/// Why an archived session could not be had.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    /// No session matches.
    #[error("no earlier session matches \"{0}\" (/resume lists them)")]
    NotFound(String),
    /// Several sessions match a title or id prefix.
    #[error("\"{query}\" matches {count} sessions; give more of the title or the id: {ids}")]
    Ambiguous {
        /// What was asked for.
        query: String,
        /// How many match.
        count: usize,
        /// Their ids, shortened.
        ids: String,
    },
    /// The file is there but cannot be read as a session.
    #[error("the session file {path} {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// Writing or removing failed.
    #[error("{0}")]
    History(#[from] HistoryError),
    /// Another MiniClaw has the session open.
    #[error("{0}")]
    Locked(#[from] super::LockError),
}

/// The sessions folder of one workspace.
#[derive(Clone, Debug)]
pub struct Archive {
    dir: PathBuf,
}

impl Archive {
    /// The archive beside the history file at `history_path` (in its workspace).
    pub fn beside(history_path: &Path) -> Self {
        let root = history_path.parent().unwrap_or(Path::new("."));
        Self {
            dir: root.join(SESSIONS_DIR),
        }
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of session `id` (ids are MiniClaw's own: letters, digits, `-` and `_`).
    fn file(&self, id: &str) -> Option<PathBuf> {
        let fine = !id.is_empty()
            && id.len() <= 64
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        fine.then(|| self.dir.join(format!("{id}.json")))
    }

    /// The file session `id` is kept in (`None` for a name that is not a session id).
    pub fn path_of(&self, id: &str) -> Option<PathBuf> {
        self.file(id)
    }

    /// Whether another MiniClaw has session `id` open (see `Slot`).
    pub fn is_open_elsewhere(&self, id: &str) -> bool {
        self.file(id)
            .is_some_and(|path| super::lock::HistoryLock::is_held(&path))
    }

    /// The workspace's active session at `history_path` as the picker lists it, read (its
    /// snapshot only, never moved aside) while another MiniClaw has it open; `None` when no
    /// one does or it cannot be read.
    pub fn active_held_elsewhere(&self, history_path: &Path) -> Option<SessionSummary> {
        if !super::lock::HistoryLock::is_held(history_path) {
            return None;
        }
        let mut listed = summary(&read_session(history_path).ok()?);
        listed.problem = Some("open in another MiniClaw".into());
        Some(listed)
    }

    /// Keeps `session` in the folder (replacing an older copy of it), atomically.
    pub fn store(&self, session: &Session) -> Result<PathBuf, ArchiveError> {
        let path = self
            .file(&session.id)
            .ok_or_else(|| ArchiveError::NotFound(session.id.clone()))?;
        self.ensure_folder()?;
        files::write_snapshot(&path, session)?;
        Ok(path)
    }

    /// Creates the folder; refuses when a part of it is a link or not a folder (a workspace
    /// could plant a link there to have sessions written elsewhere).
    pub(super) fn ensure_folder(&self) -> Result<(), HistoryError> {
        let parent = self.dir.parent().unwrap_or(Path::new("."));
        for dir in [parent, self.dir.as_path()] {
            match fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_dir() => {}
                Ok(_) => {
                    return Err(HistoryError::Damaged {
                        path: dir.to_path_buf(),
                        reason: "it is a link or a file, not a folder".into(),
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    fs::create_dir(dir).map_err(files::io_err(dir))?;
                }
                Err(e) => return Err(files::io_err(dir)(e)),
            }
        }
        Ok(())
    }

    /// Reads session `id`.
    pub fn load(&self, id: &str) -> Result<Session, ArchiveError> {
        let path = self
            .file(id)
            .ok_or_else(|| ArchiveError::NotFound(id.to_string()))?;
        read_session(&path)
    }

    /// Deletes session `id` (the person asked for it).
    pub fn remove(&self, id: &str) -> Result<(), ArchiveError> {
        let path = self
            .file(id)
            .ok_or_else(|| ArchiveError::NotFound(id.to_string()))?;
        match fs::remove_file(&path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                Err(ArchiveError::NotFound(id.to_string()))
            }
            Err(e) => Err(files::io_err(&path)(e).into()),
        }
    }

    /// Every session in the folder, newest first; one that cannot be read is listed with its
    /// problem (after the readable ones). A missing folder is an empty list.
    pub fn list(&self) -> Vec<SessionSummary> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut found: Vec<SessionSummary> = entries
            .flatten()
            .filter_map(|entry| {
                let path = entry.path();
                let id = path
                    .file_name()?
                    .to_str()?
                    .strip_suffix(".json")?
                    .to_string();
                self.file(&id)?;
                Some(match read_session(&path) {
                    Ok(session) => summary(&session),
                    Err(e) => SessionSummary {
                        title: format!("{id}.json"),
                        id,
                        updated_at: None,
                        turns: 0,
                        first_prompt: String::new(),
                        prompts: Vec::new(),
                        problem: Some(match e {
                            ArchiveError::Unreadable { reason, .. } => reason,
                            other => other.to_string(),
                        }),
                    },
                })
            })
            .collect();
        found.sort_by(|a, b| {
            b.updated_at
                .is_some()
                .cmp(&a.updated_at.is_some())
                .then(b.updated_at.cmp(&a.updated_at))
                .then(a.id.cmp(&b.id))
        });
        found
    }

    /// The id of the session `query` names: its id, a unique id prefix, its title (any case;
    /// the newest of equal titles), or a unique part of a title.
    pub fn find(&self, query: &str) -> Result<String, ArchiveError> {
        let query = query.trim();
        let (all, broken): (Vec<SessionSummary>, Vec<SessionSummary>) =
            self.list().into_iter().partition(|s| s.problem.is_none());
        // Named by its id, an unusable file says what is wrong with it.
        if let Some(problem) = broken.iter().find(|s| s.id == query) {
            return Err(ArchiveError::Unreadable {
                path: self.dir.join(format!("{}.json", problem.id)),
                reason: problem.problem.clone().unwrap_or_default(),
            });
        }
        let lower = query.to_lowercase();
        let by = |pick: &dyn Fn(&SessionSummary) -> bool| -> Vec<&SessionSummary> {
            all.iter().filter(|s| pick(s)).collect()
        };
        let exact = by(&|s| s.id == query || s.title.to_lowercase() == lower);
        if let Some(first) = exact.first() {
            return Ok(first.id.clone());
        }
        for matches in [
            by(&|s| query.len() >= 4 && s.id.starts_with(query)),
            by(&|s| !lower.is_empty() && s.title.to_lowercase().contains(&lower)),
        ] {
            match matches.as_slice() {
                [] => {}
                [one] => return Ok(one.id.clone()),
                many => {
                    return Err(ArchiveError::Ambiguous {
                        query: query.to_string(),
                        count: many.len(),
                        ids: many
                            .iter()
                            .map(|s| format!("{} ({})", short_id(&s.id), s.title))
                            .collect::<Vec<_>>()
                            .join(", "),
                    });
                }
            }
        }
        Err(ArchiveError::NotFound(query.to_string()))
    }

    /// The newest readable session, if any.
    pub fn newest(&self) -> Option<String> {
        self.list()
            .into_iter()
            .find(|s| s.problem.is_none())
            .map(|s| s.id)
    }
}

/// The first characters of an id, enough to tell sessions apart.
pub fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// What the picker shows of `session`.
pub fn summary(session: &Session) -> SessionSummary {
    SessionSummary {
        id: session.id.clone(),
        title: session.title().unwrap_or_else(|| "(empty)".into()),
        updated_at: Some(session.updated_at),
        turns: session.prompts().count(),
        first_prompt: session
            .prompts()
            .next()
            .map(|p| shorten(p.lines().next().unwrap_or("").trim(), 120))
            .unwrap_or_default(),
        prompts: {
            let mut prompts: Vec<String> = session.prompts().map(str::to_string).collect();
            prompts.reverse();
            prompts
        },
        problem: None,
    }
}

/// Reads a session file, never through a link nor blocking on a pipe.
fn read_session(path: &Path) -> Result<Session, ArchiveError> {
    let unreadable = |reason: String| ArchiveError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let bytes = match files::read_plain(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(unreadable("is missing".into()));
        }
        Err(e) => {
            return Err(unreadable(
                files::unusable(&e)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("could not be read ({e})")),
            ));
        }
    };
    let mut session: Session = serde_json::from_slice(&bytes)
        .map_err(|e| unreadable(format!("is not a session ({e})")))?;
    session.repair();
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::Message;

    fn session(prompt: &str, minutes_ago: i64) -> Session {
        let mut s = Session::new();
        s.push(Message::user(prompt));
        s.updated_at = chrono::Utc::now() - chrono::Duration::minutes(minutes_ago);
        s
    }

    #[test]
    fn sessions_are_kept_listed_newest_first_found_and_removed() {
        let ws = tempfile::tempdir().unwrap();
        let archive = Archive::beside(&ws.path().join("history.json"));
        assert!(archive.list().is_empty(), "no folder yet: nothing listed");
        let old = session("fix the parser\nplease", 60);
        let mut new = session("write the README", 5);
        new.title = Some("Docs day".into());
        archive.store(&old).unwrap();
        archive.store(&new).unwrap();
        let list = archive.list();
        assert_eq!(list.len(), 2);
        assert_eq!(list[0].title, "Docs day");
        assert_eq!(list[1].title, "fix the parser");
        assert_eq!(list[1].turns, 1);
        assert_eq!(archive.find("docs day").unwrap(), new.id);
        assert_eq!(archive.find("PARSER").unwrap(), old.id);
        assert_eq!(archive.find(&old.id[..6]).unwrap(), old.id);
        assert!(matches!(
            archive.find("nothing like it"),
            Err(ArchiveError::NotFound(_))
        ));
        assert!(matches!(
            archive.find("a"),
            Err(ArchiveError::Ambiguous { count: 2, .. })
        ));
        assert_eq!(archive.newest(), Some(new.id.clone()));
        assert_eq!(archive.load(&old.id).unwrap(), old);
        archive.remove(&old.id).unwrap();
        assert_eq!(archive.list().len(), 1);
    }

    #[test]
    fn a_damaged_or_linked_file_is_listed_with_its_problem_and_ids_cannot_escape() {
        let ws = tempfile::tempdir().unwrap();
        let archive = Archive::beside(&ws.path().join("history.json"));
        archive.store(&session("fine", 1)).unwrap();
        fs::write(archive.dir().join("broken.json"), "{not json").unwrap();
        let outside = ws.path().join("elsewhere.json");
        files::write_snapshot(&outside, &session("SECRET elsewhere", 1)).unwrap();
        std::os::unix::fs::symlink(&outside, archive.dir().join("linked.json")).unwrap();
        let list = archive.list();
        assert_eq!(list.len(), 3);
        assert!(list[0].problem.is_none());
        let problems: Vec<_> = list[1..].iter().filter_map(|s| s.problem.clone()).collect();
        assert!(
            problems.iter().any(|p| p.contains("not a session")),
            "{problems:?}"
        );
        assert!(
            problems.iter().any(|p| p.contains("symbolic link")),
            "{problems:?}"
        );
        assert!(
            !format!("{list:?}").contains("SECRET"),
            "the link was followed"
        );
        assert!(matches!(
            archive.load("../../elsewhere"),
            Err(ArchiveError::NotFound(_))
        ));
    }

    #[test]
    fn a_linked_sessions_folder_is_refused_not_written_through() {
        let ws = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::create_dir(ws.path().join(".miniclaw")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), ws.path().join(".miniclaw/sessions")).unwrap();
        let archive = Archive::beside(&ws.path().join("history.json"));
        assert!(archive.store(&session("x", 1)).is_err());
        assert_eq!(fs::read_dir(elsewhere.path()).unwrap().count(), 0);
    }
}
