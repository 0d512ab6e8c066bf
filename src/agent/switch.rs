//! Many sessions per workspace: `/new` archives the active one and starts afresh, `/resume`
//! reopens an archived one, `/rename` names it. The active session stays `history.json`; the
//! others live in the archive (`history::Archive`).

use super::blocking::off_runtime;
use super::history::{self, Archive, ArchiveError, HistoryError};
use super::session::Session;
use super::turn::Agent;
use crate::events::{EventSink, SessionSummary};

impl Agent {
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
        off_runtime(move || archive.list())
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the sessions could not be listed");
                Vec::new()
            })
    }

    /// Archives the active session and starts an empty one; says what happened.
    pub async fn new_session(&mut self, events: &EventSink) -> Result<String, ArchiveError> {
        let next = self.session.cleared();
        let archived = self.switch_to(next, events).await?;
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
        if id == self.session.id {
            // An archived copy of the active session (left by a crash or a failed removal):
            // reopening it would replace the active one by an older copy of itself.
            let _ = on_archive(&archive, move |a| a.remove(&id)).await;
            return Ok(
                "That is the session already open; its older archived copy was removed.".into(),
            );
        }
        let next = {
            let id = id.clone();
            on_archive(&archive, move |a| a.load(&id)).await?
        };
        let title = next.title().unwrap_or_else(|| "(empty)".into());
        let turns = next.prompts().count();
        let archived = self.switch_to(next, events).await?;
        // Its prompt now carries today's instructions: say so when they changed since it
        // last did.
        let changed = self
            .compare_instructions()
            .await
            .map(|n| format!(" {n}"))
            .unwrap_or_default();
        // Only once `history.json` holds it: a crash in between leaves two copies, not none.
        let kept = match on_archive(&archive, move |a| a.remove(&id)).await {
            Ok(()) => String::new(),
            Err(e) => format!(" (its archived copy stays: {e})"),
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
        let id = id.to_string();
        on_archive(&self.archive()?, move |a| a.remove(&id)).await
    }

    /// Archives the active session when it holds a prompt, then makes `next` the active one
    /// (opened by today's system prompt, so the project's instructions are current). Returns
    /// the archived session's title.
    async fn switch_to(
        &mut self,
        mut next: Session,
        events: &EventSink,
    ) -> Result<Option<String>, ArchiveError> {
        let archive = self.archive()?;
        if let Some(writer) = &mut self.history {
            writer.settle(&self.session, events).await;
        }
        let archived = if self.session.has_prompts() {
            let session = self.session.clone();
            on_archive(&archive, move |a| a.store(&session)).await?;
            self.session.title()
        } else {
            None
        };
        if let Some(prompt) = self.session.system_prompt().map(str::to_string) {
            next.set_system_prompt(&prompt);
        }
        self.session = next;
        // "For the rest of the session": a yes to a tool, and a note about an undo, end here.
        self.approvals.forget_allowed();
        self.undo_note = None;
        if self.session.has_prompts() || self.session.title.is_some() {
            self.save(events);
            if let Some(writer) = &mut self.history {
                writer.settle(&self.session, events).await;
            }
        } else {
            match (&mut self.history, &self.settings.history_path) {
                (Some(writer), _) => writer.clear().await?,
                (None, Some(path)) => {
                    self.history_store = None;
                    let path = path.clone();
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
}
