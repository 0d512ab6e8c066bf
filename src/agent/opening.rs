//! The session an agent opens with. A long history takes tens of milliseconds to read, so the
//! UI does not wait for it: its first frame shows the history's glimpse (`history::glimpse`),
//! and the agent reads the whole history on a blocking thread as its task starts, taking it
//! before its first command. Read then, not earlier, it does not compete with the first frame
//! (and the jail's start-up check) for the machine's cores.

use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;

use super::blocking::begin_off_runtime;
use super::history::{self, HistoryError, Loaded};
use super::turn::Agent;

/// The history being read, or nothing to read.
pub enum Opening {
    /// The agent's session is the one it opens with (a new one, or one already taken).
    Open,
    /// The history at this path is to be read (on a blocking thread, when the agent opens).
    Unread(PathBuf),
    /// The history is being read on a blocking thread.
    Loading(Pin<Box<dyn Future<Output = Result<Loaded, HistoryError>> + Send>>),
}

impl Opening {
    /// The history at `path`, read when the agent opens it.
    pub fn load(path: PathBuf) -> Self {
        Self::Unread(path)
    }

    /// Starts reading the history now (if it is still to be read).
    pub fn begin(self) -> Self {
        match self {
            Self::Unread(path) => {
                let reading = begin_off_runtime(move || history::load(&path));
                Self::Loading(Box::pin(async move { reading.await? }))
            }
            other => other,
        }
    }

    /// Whether there is a history still to take.
    pub fn is_loading(&self) -> bool {
        !matches!(self, Self::Open)
    }
}

impl std::fmt::Debug for Opening {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Open => "Opening::Open",
            Self::Unread(_) => "Opening::Unread",
            Self::Loading(_) => "Opening::Loading",
        })
    }
}

impl Agent {
    /// Takes the session `opening` reads (and the store that continues its files), then opens
    /// it with the project's instructions as they are now; returns what to tell the person
    /// (a damaged file moved aside, changed instructions). Until this returns the agent holds a
    /// placeholder it never saves: call it before the agent does anything else.
    pub async fn open(&mut self, opening: Opening) -> Result<Vec<String>, HistoryError> {
        let mut notices = Vec::new();
        if let Opening::Loading(reading) = opening.begin() {
            let loaded = reading.await?;
            self.session = loaded.session;
            self.history_store = Some(loaded.store);
            notices.extend(loaded.notice);
        }
        notices.extend(self.reload_project_instructions().await);
        Ok(notices)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::agent::session::{Message, Session};
    use crate::agent::{AgentCommand, AgentEvent, AgentSettings, spawn_opening};
    use crate::llm::{LlmClient, Preset};
    use crate::tools::{Sandbox, ToolRegistry};

    fn agent(ws: &std::path::Path) -> Agent {
        Agent::new(
            LlmClient::new("http://127.0.0.1:9", None).unwrap(),
            Arc::new(ToolRegistry::new()),
            Arc::new(Sandbox::new(ws).unwrap()),
            Session::new(),
            AgentSettings {
                preset: Preset::Flash,
                max_steps: 4,
                history_path: Some(ws.join("history.json")),
            },
        )
    }

    #[tokio::test]
    async fn the_read_session_is_told_before_any_command_and_an_unreadable_one_stops_the_agent() {
        let ws = tempfile::tempdir().unwrap();
        let path = ws.path().join("history.json");
        let mut saved = Session::new();
        saved.push(Message::user("old question"));
        saved.push(Message::assistant("old answer", None, vec![]));
        history::save(&path, &saved).unwrap();
        let (handle, mut events) = spawn_opening(agent(ws.path()), Opening::load(path.clone()));
        // Sent while the history is read: it waits for the session.
        handle.send(AgentCommand::ListSessions);
        match events.recv().await.unwrap() {
            AgentEvent::SessionLoaded {
                id,
                replay,
                prompts,
                ..
            } => {
                assert_eq!(id, saved.id);
                assert_eq!(prompts, vec!["old question".to_string()]);
                assert!(!replay.is_empty());
            }
            other => panic!("the session first, not {other:?}"),
        }
        // A history that cannot be read at all: said, and nothing is saved over it.
        let failing = Opening::Loading(Box::pin(async {
            Err(HistoryError::Damaged {
                path: "history.json".into(),
                reason: "unreadable".into(),
            })
        }));
        let (handle, mut events) = spawn_opening(agent(ws.path()), failing);
        handle.send(AgentCommand::ClearHistory);
        match events.recv().await.unwrap() {
            AgentEvent::SessionUnavailable(why) => assert!(why.contains("unreadable"), "{why}"),
            other => panic!("{other:?}"),
        }
        drop(handle);
        let ended = tokio::time::timeout(std::time::Duration::from_secs(5), events.recv()).await;
        assert!(matches!(ended, Ok(None)), "the agent stopped: {ended:?}");
        assert_eq!(history::load(&path).unwrap().session, saved);
    }
}
