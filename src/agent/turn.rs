//! The ReAct loop: model, tool calls, observations, model ... until an answer or the step limit.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::events::{EventSink, TurnOutcome};
use super::session::Session;
use crate::llm::{LlmClient, Preset};
use crate::tools::{Sandbox, ToolRegistry};

/// How the agent runs.
#[derive(Clone, Debug)]
pub struct AgentSettings {
    /// The model preset of the next request.
    pub preset: Preset,
    /// At most this many model calls per turn.
    pub max_steps: usize,
    /// Where the history is saved (`None`: not saved, e.g. for sub-agents).
    pub history_path: Option<PathBuf>,
}

/// An agent: a model client, tools, a sandbox and a conversation.
pub struct Agent {
    client: LlmClient,
    registry: Arc<ToolRegistry>,
    sandbox: Arc<Sandbox>,
    session: Session,
    settings: AgentSettings,
}

impl Agent {
    /// An agent continuing `session`.
    pub fn new(
        client: LlmClient,
        registry: Arc<ToolRegistry>,
        sandbox: Arc<Sandbox>,
        session: Session,
        settings: AgentSettings,
    ) -> Self {
        Self {
            client,
            registry,
            sandbox,
            session,
            settings,
        }
    }

    /// The conversation so far.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The current settings.
    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// Uses `preset` from the next request on.
    pub fn set_preset(&mut self, preset: Preset) {
        self.settings.preset = preset;
    }

    /// Runs one turn for `prompt`, reporting through `events`; `cancel` stops it at once.
    pub async fn run_turn(
        &mut self,
        prompt: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let _ = (
            prompt,
            events,
            cancel,
            &self.client,
            &self.registry,
            &self.sandbox,
        );
        TurnOutcome::Failed
    }
}

impl Agent {
    /// Empties the conversation and deletes the history file.
    pub fn clear_history(&mut self) -> Result<(), super::history::HistoryError> {
        self.session = Session::new();
        if let Some(path) = &self.settings.history_path {
            super::history::clear(path)?;
        }
        Ok(())
    }
}
