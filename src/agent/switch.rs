//! Many sessions per workspace: `/new` archives the active one and starts afresh, `/resume`
//! reopens an archived one, `/rename` names it. The active session stays `history.json`; the
//! others live in the archive (`history::Archive`).

use super::blocking::off_runtime;
use super::history::{self, Archive, ArchiveError, HistoryError, Slot};
use super::session::Session;
use super::turn::Agent;
use crate::events::{EventSink, SessionSummary};

impl Agent {
    /// The workspace's history file, beside which the archive lies.
    fn history_path(&self) -> Result<std::path::PathBuf, ArchiveError> {
        self.settings
            .history_path
            .clone()
            .ok_or_else(|| ArchiveError::NotFound("(this agent keeps no history)".into()))
    }

    /// The archive of this agent's workspace (`None` when the history is not saved).
    fn archive(&self) -> Result<Archive, ArchiveError> {
        self.settings
            .history_path
            .as_deref()
            .map(Archive::beside)
            .ok_or_else(|| ArchiveError::NotFound("(this agent keeps no history)".into()))
    }

    /// The archived sessions, newest first (read off the runtime).
    pub async fn list_sessions(&self) -> Vec<SessionSummary> {
        let Ok(archive) = self.archive() else {
            return Vec::new();
        };
        let open = self.session.id.clone();
        // Working in the archive: the folder's active session is another MiniClaw's, and
        // listed as such (it is not in the archive).
        let active = (!self.is_active_session())
            .then(|| self.settings.history_path.clone())
            .flatten();
        off_runtime(move || {
            let mut listed = archive.list();
            if let Some(held) = active.and_then(|path| archive.active_held_elsewhere(&path)) {
                listed.insert(0, held);
            }
            // A session saved in the archive while open (see `Slot`) is not an earlier one.
            listed.retain(|s| s.id != open);
            for s in &mut listed {
                if s.problem.is_none() && archive.is_open_elsewhere(&s.id) {
                    s.problem = Some("open in another MiniClaw".into());
                }
            }
            listed
        })
        .await
        .unwrap_or_else(|e| {
            tracing::warn!(error = %e, "the sessions could not be listed");
            Vec::new()
        })
    }

    /// Archives the active session and starts an empty one; says what happened.
    pub async fn new_session(&mut self, events: &EventSink) -> Result<String, ArchiveError> {
        let next = self.session.cleared();
        let archived = self.switch_to(next, None, events).await?;
        // The new session's prompt carries today's instructions: remembered for it.
        let _ = self.compare_instructions().await;
        Ok(match archived {
            Some(title) => {
                format!(
                    "Archived \u{201c}{title}\u{201d} (/resume reopens it). A new session started."
                )
            }
            None => "A new session started.".to_string(),
        })
    }

    /// Reopens the archived session `query` names (its id, title or a part of either),
    /// archiving the active one first; says what happened.
    pub async fn resume(
        &mut self,
        query: &str,
        events: &EventSink,
    ) -> Result<String, ArchiveError> {
        // The session open now is in no archive: named by its id (as quitting prints it, for
        // `--resume`), it is simply kept.
        if query.trim() == self.session.id {
            return Ok("That is the session already open.".into());
        }
        let archive = self.archive()?;
        let query = query.to_string();
        let id = on_archive(&archive, move |a| a.find(&query)).await?;
        if id == self.session.id && !self.is_active_session() {
            // Kept in the archive, the open session's file is that one: it is left alone.
            return Ok("That is the session already open.".into());
        }
        if id == self.session.id {
            // An archived copy of the active session (left by a crash or a failed removal):
            // reopening it would replace the active one by an older copy of itself.
            let _ = on_archive(&archive, move |a| a.remove(&id)).await;
            return Ok(
                "That is the session already open; its older archived copy was removed.".into(),
            );
        }
        // Held from here on: no other MiniClaw may open it meanwhile, and one that has it
        // open already makes this an error.
        let held = {
            let history_path = self.history_path()?;
            let id = id.clone();
            on_archive(&archive, move |_| Ok(Slot::in_archive(&history_path, &id)?)).await?
        };
        let next = {
            let id = id.clone();
            on_archive(&archive, move |a| a.load(&id)).await?
        };
        let title = next.title().unwrap_or_else(|| "(empty)".into());
        let turns = next.prompts().count();
        let active = self.is_active_session();
        // The active session's file takes it in, and the archived copy goes (below); a session
        // kept in the archive is opened where it lies.
        let (archived, held) = if active {
            (self.switch_to(next, None, events).await?, Some(held))
        } else {
            (self.switch_to(next, Some(held), events).await?, None)
        };
        // Its prompt now carries today's instructions: say so when they changed since it
        // last did.
        let changed = self
            .compare_instructions()
            .await
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        // Only once `history.json` holds it: a crash in between leaves two copies, not none.
        let kept = match held {
            None => String::new(),
            Some(held) => {
                let removed = on_archive(&archive, move |a| a.remove(&id)).await;
                drop(held);
                match removed {
                    Ok(()) => String::new(),
                    Err(e) => format!(" (its archived copy stays: {e})"),
                }
            }
        };
        let before = archived
            .map(|t| format!(" \u{201c}{t}\u{201d} was archived."))
            .unwrap_or_default();
        Ok(format!(
            "Reopened \u{201c}{title}\u{201d} ({turns} turn{}).{before}{kept}{changed}",
            if turns == 1 { "" } else { "s" }
        ))
    }

    /// Names the active session; it is saved at once.
    pub async fn rename(&mut self, title: &str, events: &EventSink) -> String {
        let title = super::session::shorten(title.trim(), 120);
        self.session.title = Some(title.clone());
        self.session.updated_at = chrono::Utc::now();
        self.save(events);
        if let Some(writer) = &mut self.history {
            writer.settle(&self.session, events).await;
        }
        title
    }

    /// Deletes archived session `id` (the person confirmed it), off the runtime.
    pub async fn delete_session(&self, id: &str) -> Result<(), ArchiveError> {
        let history_path = self.history_path()?;
        let id = id.to_string();
        on_archive(&self.archive()?, move |a| {
            // Held while it goes, so a session another MiniClaw has open is never deleted.
            let _held = Slot::in_archive(&history_path, &id)?;
            a.remove(&id)
        })
        .await
    }

    /// Archives the open session when it holds a prompt, then makes `next` the open one
    /// (opened by today's system prompt, so the project's instructions are current). Returns
    /// the archived session's title.
    ///
    /// The workspace's active session (`history.json`) takes `next` in. A session kept in the
    /// archive (another MiniClaw has the active one) is in its archive file already; `next` is
    /// then saved in its own, `held` when it was locked on the way (a reopened session).
    async fn switch_to(
        &mut self,
        mut next: Session,
        held: Option<Slot>,
        events: &EventSink,
    ) -> Result<Option<String>, ArchiveError> {
        // The jobs were the session's being left.
        self.end_jobs();
        let archive = self.archive()?;
        if let Some(writer) = &mut self.history {
            writer.settle(&self.session, events).await;
        }
        let archived = if self.is_active_session() {
            if self.session.has_prompts() {
                let session = self.session.clone();
                on_archive(&archive, move |a| a.store(&session)).await?;
                self.session.title()
            } else {
                None
            }
        } else {
            let slot = match held {
                Some(slot) => slot,
                None => {
                    let history_path = self.history_path()?;
                    let id = next.id.clone();
                    on_archive(&archive, move |_| Ok(Slot::in_archive(&history_path, &id)?)).await?
                }
            };
            // The old file is whole (saved after every step); the next saves go to the new one.
            self.history = None;
            self.history_store = None;
            self.slot = Some(slot);
            self.session
                .has_prompts()
                .then(|| self.session.title())
                .flatten()
        };
        if let Some(prompt) = self.session.system_prompt().map(str::to_string) {
            next.set_system_prompt(&prompt);
        }
        self.session = next;
        self.compaction_failed_at = None;
        // "For the rest of the session": a yes to a tool, and a note about an undo, end here.
        self.approvals.forget_allowed();
        self.undo_note = None;
        if self.session.has_prompts() || self.session.title.is_some() {
            self.save(events);
            if let Some(writer) = &mut self.history {
                writer.settle(&self.session, events).await;
            }
        } else {
            let saved_at = self.saved_at();
            match (&mut self.history, saved_at) {
                (Some(writer), _) => writer.clear().await?,
                (None, Some(path)) => {
                    self.history_store = None;
                    off_runtime(move || history::clear(&path))
                        .await
                        .map_err(HistoryError::from)??;
                }
                (None, None) => {}
            }
        }
        Ok(archived)
    }
}

/// Runs `work` on `archive` off the runtime: it reads, writes or removes session files.
async fn on_archive<T, F>(archive: &Archive, work: F) -> Result<T, ArchiveError>
where
    T: Send + 'static,
    F: FnOnce(&Archive) -> Result<T, ArchiveError> + Send + 'static,
{
    let archive = archive.clone();
    off_runtime(move || work(&archive))
        .await
        .map_err(HistoryError::from)?
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::agent::AgentSettings;
    use crate::agent::session::Message;
    use crate::llm::{LlmClient, Preset};
    use crate::tools::{Sandbox, ToolRegistry};

    fn agent(ws: &std::path::Path, session: Session) -> Agent {
        Agent::new(
            LlmClient::new("http://127.0.0.1:9", None).unwrap(),
            Arc::new(ToolRegistry::new()),
            Arc::new(Sandbox::new(ws).unwrap()),
            session,
            AgentSettings {
                preset: Preset::Flash,
                max_steps: 4,
                history_path: Some(ws.join("history.json")),
            },
        )
    }

    #[tokio::test]
    async fn new_archives_and_resume_brings_back_the_same_session() {
        let ws = tempfile::tempdir().unwrap();
        let history = ws.path().join("history.json");
        let mut first = Session::new();
        first.push(Message::user("first question"));
        first.push(Message::assistant("first answer", None, vec![]));
        history::save(&history, &first).unwrap();
        let mut agent = agent(ws.path(), history::load(&history).unwrap().session);
        let events = EventSink::discard();

        let said = agent.new_session(&events).await.unwrap();
        assert!(said.contains("first question"), "{said}");
        assert!(!agent.session().has_prompts());
        assert!(!history.exists(), "an empty session leaves no history file");
        let listed = agent.list_sessions().await;
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].id, first.id);

        agent.session.push(Message::user("second question"));
        agent.save(&events);
        agent.rename("Second", &events).await;

        let said = agent.resume("first", &events).await.unwrap();
        assert!(
            said.contains("Reopened \u{201c}first question\u{201d} (1 turn)"),
            "{said}"
        );
        assert!(
            said.contains("\u{201c}Second\u{201d} was archived"),
            "{said}"
        );
        assert_eq!(agent.session().id, first.id);
        let on_disk = history::load(&history).unwrap().session;
        assert_eq!(on_disk.id, first.id);
        assert_eq!(on_disk.last_answer(), Some("first answer"));
        let listed = agent.list_sessions().await;
        assert_eq!(listed.len(), 1, "the reopened one left the archive");
        assert_eq!(listed[0].title, "Second");
        agent.delete_session(&listed[0].id).await.unwrap();
        assert!(agent.list_sessions().await.is_empty());
    }

    #[tokio::test]
    async fn a_session_kept_in_the_archive_switches_where_it_lies_and_stays_locked() {
        let ws = tempfile::tempdir().unwrap();
        let history = ws.path().join("history.json");
        // Another process has the active session open.
        let _active = Slot::active(&history).unwrap();
        let archive = Archive::beside(&history);
        let mut older = Session::new();
        older.push(Message::user("older question"));
        archive.store(&older).unwrap();

        let mine = Session::new();
        let slot = Slot::in_archive(&history, &mine.id).unwrap();
        let mut agent = agent(ws.path(), mine.clone()).with_slot(slot);
        assert!(!agent.is_active_session());
        let events = EventSink::discard();
        agent.session.push(Message::user("my question"));
        agent.save(&events);
        agent.rename("Mine", &events).await;
        let mine_file = archive.path_of(&mine.id).unwrap();
        let saved: Session = serde_json::from_slice(&std::fs::read(&mine_file).unwrap()).unwrap();
        assert_eq!(
            saved.title.as_deref(),
            Some("Mine"),
            "saved whole in its file"
        );
        assert!(
            !history::journal_path(&mine_file).exists(),
            "no journal beside it"
        );

        // Named by its own title, the open session is kept where it is, file and all.
        let said = agent.resume("Mine", &events).await.unwrap();
        assert!(said.contains("already open"), "{said}");
        assert!(mine_file.exists(), "the open session's file stays");

        agent.resume("older", &events).await.unwrap();
        assert_eq!(agent.session().id, older.id);
        assert!(
            archive.path_of(&older.id).unwrap().exists(),
            "opened where it lies"
        );
        assert!(mine_file.exists(), "the one left stays in the archive");
        assert!(
            !history.exists(),
            "the active session's file is never touched"
        );
        // Another process cannot take the one now open, and may take the one left.
        assert!(matches!(
            Slot::in_archive(&history, &older.id),
            Err(history::LockError::Held { .. })
        ));
        drop(Slot::in_archive(&history, &mine.id).unwrap());
        let listed = agent.list_sessions().await;
        assert_eq!(
            listed.iter().map(|s| s.id.as_str()).collect::<Vec<_>>(),
            [mine.id.as_str()]
        );

        agent.new_session(&events).await.unwrap();
        assert_ne!(agent.session().id, older.id);
        assert!(
            Slot::in_archive(&history, &older.id).is_ok(),
            "the lock moved with the session"
        );
    }
}
