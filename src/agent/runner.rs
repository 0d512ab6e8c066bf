//! The agent on its own tokio task: commands in, events out, and a handle to interrupt a turn.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::turn::Agent;
use crate::events::{AgentEvent, EventSink};
use crate::llm::Preset;
use crate::tools::mcp::McpHub;

/// What the UI asks of the agent task.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentCommand {
    /// Run a turn for this prompt.
    Prompt(String),
    /// Empty the conversation and delete the history file.
    ClearHistory,
    /// Use at most this many steps per turn from the next turn on.
    SetMaxSteps(usize),
    /// Run the `/init` turn (the model writes a starter AGENTS.md), then read it again.
    Init,
    /// Stop the MCP server of this name and start it again (also during a turn).
    McpRestart(String),
}

/// What travels to the task: a prompt carries the token that cancels its own turn, so an
/// interrupt always reaches the turn it meant, however the prompts queue up.
enum Job {
    Prompt(String, CancellationToken),
    Init(CancellationToken),
    ClearHistory,
    SetMaxSteps(usize),
}

/// The UI's side of a running agent task.
#[derive(Clone, Debug)]
pub struct AgentHandle {
    tx: mpsc::UnboundedSender<Job>,
    /// The token of the latest prompt sent (what an interrupt cancels).
    latest: Arc<Mutex<CancellationToken>>,
    preset: watch::Sender<Preset>,
    /// The MCP servers, when any are configured.
    mcp: Option<Arc<McpHub>>,
    /// The agent's events (for answers to commands that do not go through its task).
    events: EventSink,
}

impl AgentHandle {
    /// Queues a command (ignored once the task has ended). A prompt gets its cancel token here.
    pub fn send(&self, command: AgentCommand) {
        let job = match command {
            AgentCommand::Prompt(text) => Job::Prompt(text, self.fresh_token()),
            AgentCommand::Init => Job::Init(self.fresh_token()),
            AgentCommand::ClearHistory => Job::ClearHistory,
            AgentCommand::SetMaxSteps(max) => Job::SetMaxSteps(max),
            // Not queued behind a running turn: the servers have their own tasks.
            AgentCommand::McpRestart(name) => {
                self.restart_mcp(&name);
                return;
            }
        };
        let _ = self.tx.send(job);
    }

    /// Restarts an MCP server; an unknown or disabled one is an error event.
    fn restart_mcp(&self, name: &str) {
        let result = match &self.mcp {
            Some(hub) => hub.restart(name),
            None => Err("no MCP server is configured".to_string()),
        };
        if let Err(message) = result {
            self.events.send(AgentEvent::Error {
                message: format!("/mcp restart {name}: {message}."),
            });
        }
    }

    /// A new cancel token, remembered as the one an interrupt cancels.
    fn fresh_token(&self) -> CancellationToken {
        let token = CancellationToken::new();
        if let Ok(mut latest) = self.latest.lock() {
            *latest = token.clone();
        }
        token
    }

    /// Uses `preset` from the next request on, even within a running turn.
    pub fn set_preset(&self, preset: Preset) {
        self.preset.send_replace(preset);
    }

    /// Interrupts the turn of the latest prompt, if it runs.
    pub fn interrupt(&self) {
        if let Ok(token) = self.latest.lock() {
            token.cancel();
        }
    }
}

/// Starts `agent` on its own task; returns its handle and the receiver of its events.
pub fn spawn(agent: Agent) -> (AgentHandle, mpsc::UnboundedReceiver<AgentEvent>) {
    let (job_tx, job_rx) = mpsc::unbounded_channel();
    let (ev_tx, ev_rx) = mpsc::unbounded_channel();
    let events = EventSink::new(ev_tx);
    let mcp = agent.mcp().cloned();
    if let Some(hub) = &mcp {
        hub.attach(events.clone());
    }
    let handle = AgentHandle {
        tx: job_tx,
        latest: Arc::new(Mutex::new(CancellationToken::new())),
        preset: agent.preset_sender(),
        mcp,
        events: events.clone(),
    };
    tokio::spawn(run(agent, job_rx, events));
    (handle, ev_rx)
}

async fn run(mut agent: Agent, mut jobs: mpsc::UnboundedReceiver<Job>, events: EventSink) {
    while let Some(job) = jobs.recv().await {
        match job {
            Job::Prompt(prompt, token) => {
                // A test hook: proves that a panic in the agent task restores the terminal and
                // exits non-zero (tests/tui_e2e.rs). Compiled only into debug builds (which the
                // tests run); a release binary has no such switch.
                if cfg!(debug_assertions)
                    && std::env::var_os("MINICLAW_TEST_PANIC_IN_AGENT").is_some()
                {
                    panic!("test panic in the agent task (MINICLAW_TEST_PANIC_IN_AGENT)");
                }
                // The turn's `TurnFinished` is the one end-of-turn signal.
                agent.run_turn(&prompt, &events, &token).await;
            }
            Job::Init(token) => {
                agent
                    .run_turn(super::instructions::INIT_PROMPT, &events, &token)
                    .await;
                // The file it wrote is the session's instructions from the next request on.
                if let Some(notice) = agent.load_project_instructions() {
                    events.send(AgentEvent::Notice(notice));
                }
            }
            Job::SetMaxSteps(max) => agent.set_max_steps(max),
            Job::ClearHistory => match agent.clear_history() {
                Ok(()) => events.send(AgentEvent::HistoryCleared),
                Err(e) => events.send(AgentEvent::Error {
                    message: format!("Could not clear the history: {e}"),
                }),
            },
        }
    }
}
