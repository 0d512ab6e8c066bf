//! The agent on its own tokio task: commands in, events out, and a handle to interrupt a turn.

use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::turn::Agent;
use crate::events::{AgentEvent, AgentState, EventSink};
use crate::llm::Preset;

/// What the UI asks of the agent task.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentCommand {
    /// Run a turn for this prompt.
    Prompt(String),
    /// Use this preset from the next request on.
    SetPreset(Preset),
    /// Empty the conversation and delete the history file.
    ClearHistory,
    /// Use at most this many steps per turn from the next turn on.
    SetMaxSteps(usize),
}

/// The UI's side of a running agent task.
#[derive(Clone, Debug)]
pub struct AgentHandle {
    tx: mpsc::UnboundedSender<AgentCommand>,
    cancel: Arc<Mutex<CancellationToken>>,
    preset: Arc<Mutex<Preset>>,
}

impl AgentHandle {
    /// Queues a command (ignored once the task has ended). A prompt gets its cancel token here,
    /// so an interrupt pressed right after sending reaches the turn it meant; a preset applies
    /// from the next request, even within a running turn.
    pub fn send(&self, command: AgentCommand) {
        match &command {
            AgentCommand::Prompt(_) => {
                if let Ok(mut slot) = self.cancel.lock() {
                    *slot = CancellationToken::new();
                }
            }
            AgentCommand::SetPreset(preset) => {
                if let Ok(mut current) = self.preset.lock() {
                    *current = preset.clone();
                }
            }
            AgentCommand::ClearHistory | AgentCommand::SetMaxSteps(_) => {}
        }
        let _ = self.tx.send(command);
    }

    /// Interrupts the running turn, if any.
    pub fn interrupt(&self) {
        if let Ok(token) = self.cancel.lock() {
            token.cancel();
        }
    }
}

/// Starts `agent` on its own task; returns its handle and the receiver of its events.
pub fn spawn(mut agent: Agent) -> (AgentHandle, mpsc::UnboundedReceiver<AgentEvent>) {
    let (cmd_tx, cmd_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let cancel = Arc::new(Mutex::new(CancellationToken::new()));
    let preset = agent.share_preset();
    tokio::spawn(run(agent, cmd_rx, EventSink::new(ev_tx), cancel.clone()));
    let handle = AgentHandle {
        tx: cmd_tx,
        cancel,
        preset,
    };
    (handle, ev_rx)
}

async fn run(
    mut agent: Agent,
    mut commands: mpsc::UnboundedReceiver<AgentCommand>,
    events: EventSink,
    cancel: Arc<Mutex<CancellationToken>>,
) {
    while let Some(command) = commands.recv().await {
        match command {
            AgentCommand::Prompt(prompt) => {
                // A test hook: proves that a panic in the agent task restores the terminal and
                // exits non-zero (tests/tui_e2e.rs). Compiled only into debug builds (which the
                // tests run); a release binary has no such switch.
                if cfg!(debug_assertions)
                    && std::env::var_os("MINICLAW_TEST_PANIC_IN_AGENT").is_some()
                {
                    panic!("test panic in the agent task (MINICLAW_TEST_PANIC_IN_AGENT)");
                }
                // The token `AgentHandle::send` made for this prompt.
                let token = match cancel.lock() {
                    Ok(slot) => slot.clone(),
                    Err(_) => CancellationToken::new(),
                };
                agent.run_turn(&prompt, &events, &token).await;
                events.send(AgentEvent::State(AgentState::Idle));
            }
            AgentCommand::SetPreset(preset) => agent.set_preset(preset),
            AgentCommand::SetMaxSteps(max) => agent.set_max_steps(max),
            AgentCommand::ClearHistory => match agent.clear_history() {
                Ok(()) => events.send(AgentEvent::HistoryCleared),
                Err(e) => events.send(AgentEvent::Error {
                    message: format!("Could not clear the history: {e}"),
                }),
            },
        }
    }
}
