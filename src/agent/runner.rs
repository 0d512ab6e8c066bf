//! The agent on its own tokio task: commands in, events out, and a handle to interrupt a turn.

use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::approvals::PendingAnswers;
use super::hook_points::SessionSource;
use super::opening::Opening;
use super::turn::Agent;
use super::undo::UndoOutcome;
use crate::approval::{ApprovalMode, Decision};
use crate::events::{AgentEvent, EventSink};
use crate::llm::Preset;
use crate::tools::mcp::McpHub;

/// What the UI asks of the agent task.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentCommand {
    /// Run a turn for this prompt.
    Prompt(String),
    /// Run a turn shown as one thing and sent as another (a custom command or `/skill`: shown
    /// as typed, sent as its prompt), with its own preset when given.
    Expanded(ExpandedPrompt),
    /// Empty the conversation and delete the history file.
    ClearHistory,
    /// Use at most this many steps per turn from the next turn on.
    SetMaxSteps(usize),
    /// Run the `/init` turn (the model writes a starter AGENTS.md), then read it again.
    Init,
    /// Archive the active session and start a new one.
    NewSession,
    /// Reopen the archived session this id, title or part of either names.
    Resume(String),
    /// Name the active session.
    Rename(String),
    /// List the archived sessions (answered with `AgentEvent::Sessions`).
    ListSessions,
    /// Delete an archived session, then list them again.
    DeleteSession(String),
    /// Put back the files the last turn changed (`true`: also those changed since).
    Undo(bool),
    /// Show what this session's turns changed.
    ShowDiff,
    /// Show how AGENTS.md changed since this session's prompt last carried it.
    InstructionsDiff,
    /// Stop the MCP server of this name and start it again (also during a turn).
    McpRestart(String),
    /// List the session's background jobs (answered with `AgentEvent::Jobs`).
    Jobs,
    /// List the hooks and their last results (answered with `AgentEvent::Hooks`).
    Hooks,
    /// End this background job (also during a turn), then list them.
    StopJob(u32),
    /// Plan this task (`/plan TASK`): a planner turn with the read-only tools.
    Plan(String),
    /// Carry out this plan (its numbered items), item by item.
    RunPlan(String),
    /// Summarize the session so far (`/compact`), dwelling on this when given.
    Compact(Option<String>),
}

/// A turn whose prompt is shown as typed and sent expanded (`AgentCommand::Expanded`).
#[derive(Clone, Debug, PartialEq)]
pub struct ExpandedPrompt {
    /// What the person typed (`/review-pr 12`), shown as the turn's prompt.
    pub shown: String,
    /// What the model gets.
    pub content: String,
    /// The preset of this turn's requests instead of the session's (a command's `model`).
    pub preset: Option<Preset>,
}

/// What travels to the task: a prompt carries the token that cancels its own turn, so an
/// interrupt always reaches the turn it meant, however the prompts queue up.
enum Job {
    Prompt(String, CancellationToken),
    Expanded(ExpandedPrompt, CancellationToken),
    Init(CancellationToken),
    Plan(String, CancellationToken),
    RunPlan(String, CancellationToken),
    Compact(Option<String>, CancellationToken),
    ClearHistory,
    SetMaxSteps(usize),
    Sessions(AgentCommand),
}

/// The UI's side of a running agent task.
#[derive(Clone, Debug)]
pub struct AgentHandle {
    tx: mpsc::UnboundedSender<Job>,
    /// The token of the latest prompt sent (what an interrupt cancels).
    latest: Arc<Mutex<CancellationToken>>,
    preset: watch::Sender<Preset>,
    approval: watch::Sender<ApprovalMode>,
    answers: PendingAnswers,
    /// The MCP servers, when any are configured.
    mcp: Option<Arc<McpHub>>,
    /// `run_command`'s background jobs, when it is offered.
    jobs: Option<crate::tools::command::Jobs>,
    /// The person's hooks, when any are configured.
    hooks: Option<Arc<crate::hooks::Hooks>>,
    /// The agent's events (for answers to commands that do not go through its task).
    events: EventSink,
    /// The command rules the agent's gate reads (`/permissions` removes from them).
    command_rules: Arc<crate::command_rules::CommandRules>,
}

impl AgentHandle {
    /// Queues a command (ignored once the task has ended). A prompt gets its cancel token here.
    pub fn send(&self, command: AgentCommand) {
        let job = match command {
            AgentCommand::Prompt(text) => Job::Prompt(text, self.fresh_token()),
            AgentCommand::Expanded(prompt) => Job::Expanded(prompt, self.fresh_token()),
            AgentCommand::Init => Job::Init(self.fresh_token()),
            // Both halves of a plan stop at an interrupt: each carries its own token.
            AgentCommand::Plan(task) => Job::Plan(task, self.fresh_token()),
            AgentCommand::RunPlan(plan) => Job::RunPlan(plan, self.fresh_token()),
            AgentCommand::Compact(keep) => Job::Compact(keep, self.fresh_token()),
            AgentCommand::ClearHistory => Job::ClearHistory,
            AgentCommand::SetMaxSteps(max) => Job::SetMaxSteps(max),
            // Not queued behind a running turn: the servers have their own tasks.
            AgentCommand::McpRestart(name) => {
                self.restart_mcp(&name);
                return;
            }
            // Jobs run on their own tasks: answered at once, even during a turn.
            AgentCommand::Jobs => {
                self.list_jobs(None);
                return;
            }
            // Read from the hooks themselves: answered at once, even during a turn.
            AgentCommand::Hooks => {
                let statuses = self
                    .hooks
                    .as_ref()
                    .map(|h| h.statuses())
                    .unwrap_or_default();
                self.events.send(AgentEvent::Hooks(statuses));
                return;
            }
            AgentCommand::StopJob(id) => {
                self.list_jobs(Some(id));
                return;
            }
            other => Job::Sessions(other),
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

    /// Ends job `stop` (when given), then lists the jobs; an error event when there is no
    /// such job or run_command is not offered.
    fn list_jobs(&self, stop: Option<u32>) {
        let Some(jobs) = &self.jobs else {
            self.events.send(AgentEvent::Error {
                message: "/jobs: run_command is not offered here (see /status), so no job runs."
                    .into(),
            });
            return;
        };
        if let Some(id) = stop
            && !jobs.stop(id)
        {
            self.events.send(AgentEvent::Error {
                message: format!("/jobs stop {id}: no job {id} is running."),
            });
        }
        self.events.send(AgentEvent::Jobs(jobs.list()));
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

    /// Uses `mode` for the calls still to come, even within a running turn.
    pub fn set_approval(&self, mode: ApprovalMode) {
        self.approval.send_replace(mode);
    }

    /// Removes `rule` from the project's command rules in the folder records, off the event
    /// loop (the UI took it out of the rules in force already); a failure is said as a notice.
    pub fn forget_command_rule(&self, rule: crate::command_rules::CommandRule) {
        let (rules, events) = (self.command_rules.clone(), self.events.clone());
        tokio::task::spawn_blocking(move || {
            if let Err(e) = rules.save_forgotten(&rule) {
                events.send(AgentEvent::Notice(format!(
                    "The rule `{rule}` no longer counts this session, but it could not be removed from the folder records ({e}): it may count again at the next start."
                )));
            }
        });
    }

    /// Answers the call `id` waiting for approval.
    pub fn answer(&self, id: &str, decision: Decision) {
        self.answers.answer(id, decision);
    }

    /// Interrupts the turn of the latest prompt, if it runs (a call waiting for approval is
    /// denied).
    pub fn interrupt(&self) {
        self.answers.deny_all("interrupted");
        if let Ok(token) = self.latest.lock() {
            token.cancel();
        }
    }
}

/// Starts `agent` on its own task; returns its handle and the receiver of its events.
pub fn spawn(agent: Agent) -> (AgentHandle, mpsc::UnboundedReceiver<AgentEvent>) {
    spawn_opening(agent, Opening::Open)
}

/// Starts `agent` on its own task, which first takes the session `opening` reads and tells it
/// (`SessionLoaded`, or `SessionUnavailable` and the task ends); commands sent meanwhile wait.
pub fn spawn_opening(
    mut agent: Agent,
    opening: Opening,
) -> (AgentHandle, mpsc::UnboundedReceiver<AgentEvent>) {
    let answers = PendingAnswers::default();
    agent.set_asker(Arc::new(answers.clone()));
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
        approval: agent.approval_sender(),
        answers,
        mcp,
        jobs: agent.jobs().cloned(),
        hooks: agent.hooks().cloned(),
        events: events.clone(),
        command_rules: agent.command_rules(),
    };
    tokio::spawn(run(agent, opening, job_rx, events));
    (handle, ev_rx)
}

/// Takes the session `opening` reads and tells it; false when it cannot be read.
async fn open(agent: &mut Agent, opening: Opening, events: &EventSink) -> bool {
    if !opening.is_loading() {
        return true;
    }
    match agent.open(opening).await {
        Ok(notices) => {
            let session = agent.session();
            events.send(AgentEvent::SessionLoaded {
                id: session.id.clone(),
                title: session.title(),
                replay: super::replay::replay(session, agent.settings().max_steps),
                prompts: session.prompts().map(str::to_string).collect(),
                notices,
            });
            true
        }
        Err(e) => {
            events.send(AgentEvent::SessionUnavailable(e.to_string()));
            false
        }
    }
}

async fn run(
    mut agent: Agent,
    opening: Opening,
    mut jobs: mpsc::UnboundedReceiver<Job>,
    events: EventSink,
) {
    if !open(&mut agent, opening, &events).await {
        return;
    }
    agent
        .start_session_hooks(SessionSource::Startup, &events, &CancellationToken::new())
        .await;
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
            Job::Expanded(prompt, token) => {
                let input = super::turn_input::TurnInput {
                    prompt: prompt.shown,
                    content: Some(prompt.content),
                    preset: prompt.preset,
                    ..Default::default()
                };
                agent.run_turn_with(input, &events, &token).await;
            }
            Job::Init(token) => {
                // Shown (and reopened) as what was typed; the model gets the instruction.
                let input = super::turn_input::TurnInput {
                    prompt: "/init".into(),
                    content: Some(super::instructions::INIT_PROMPT.into()),
                    ..Default::default()
                };
                agent.run_turn_with(input, &events, &token).await;
                // The file it wrote is the session's instructions from the next request on.
                for notice in agent.reload_project_instructions().await {
                    events.send(AgentEvent::Notice(notice));
                }
            }
            Job::Plan(task, token) => {
                agent.plan(&task, &events, &token).await;
            }
            Job::RunPlan(plan, token) => {
                let items = super::plan::parse_items(&plan);
                agent.execute_plan(items, &events, &token).await;
            }
            Job::Compact(keep, token) => {
                agent.compact(keep.as_deref(), &events, &token).await;
            }
            Job::SetMaxSteps(max) => agent.set_max_steps(max),
            Job::Sessions(command) => sessions(&mut agent, command, &events).await,
            Job::ClearHistory => match agent.clear_history().await {
                Ok(()) => {
                    events.send(AgentEvent::HistoryCleared);
                    agent
                        .start_session_hooks(
                            SessionSource::Clear,
                            &events,
                            &CancellationToken::new(),
                        )
                        .await;
                }
                Err(e) => events.send(AgentEvent::Error {
                    message: format!("Could not clear the history: {e}"),
                }),
            },
        }
    }
}

/// The session commands: each answers with the event that shows its outcome.
async fn sessions(agent: &mut Agent, command: AgentCommand, events: &EventSink) {
    let (switched, source) = match command {
        AgentCommand::NewSession => (agent.new_session(events).await, SessionSource::Clear),
        AgentCommand::Resume(query) => (agent.resume(&query, events).await, SessionSource::Resume),
        AgentCommand::Rename(title) => {
            let title = agent.rename(&title, events).await;
            events.send(AgentEvent::SessionRenamed(title));
            return;
        }
        AgentCommand::DeleteSession(id) => {
            if let Err(e) = agent.delete_session(&id).await {
                events.send(AgentEvent::Error {
                    message: format!("Could not delete that session: {e}"),
                });
            }
            events.send(AgentEvent::Sessions(agent.list_sessions().await));
            return;
        }
        AgentCommand::ListSessions => {
            events.send(AgentEvent::Sessions(agent.list_sessions().await));
            return;
        }
        AgentCommand::Undo(force) => {
            events.send(match agent.undo(force).await {
                Ok(UndoOutcome::Nothing) => AgentEvent::Notice(
                    "Nothing to undo: no turn of this session changed a file (or all were undone)."
                        .into(),
                ),
                Ok(UndoOutcome::Conflict(diff)) => AgentEvent::UndoConflict(diff),
                Ok(UndoOutcome::Undone(said)) => AgentEvent::Notice(said),
                Err(e) => AgentEvent::Error {
                    message: format!("Could not undo: {e}"),
                },
            });
            return;
        }
        AgentCommand::InstructionsDiff => {
            events.send(match agent.instructions_diff() {
                Some(diff) => AgentEvent::InstructionsDiff(diff.to_string()),
                None => AgentEvent::Notice(
                    "AGENTS.md has not changed since this session last read it.".into(),
                ),
            });
            return;
        }
        AgentCommand::ShowDiff => {
            let diff = agent.session_diff().await;
            events.send(if diff.is_empty() {
                AgentEvent::Notice(
                    "No file was changed in this session (or every change was undone).".into(),
                )
            } else {
                AgentEvent::FileChanges(diff)
            });
            return;
        }
        AgentCommand::Prompt(_)
        | AgentCommand::Expanded(_)
        | AgentCommand::ClearHistory
        | AgentCommand::SetMaxSteps(_)
        | AgentCommand::Init
        | AgentCommand::Plan(_)
        | AgentCommand::RunPlan(_)
        | AgentCommand::Compact(_)
        | AgentCommand::McpRestart(_)
        | AgentCommand::Jobs
        | AgentCommand::Hooks
        | AgentCommand::StopJob(_) => return,
    };
    match switched {
        Ok(notice) => {
            events.send(AgentEvent::SessionOpened {
                id: agent.session().id.clone(),
                title: agent.session().title(),
                notice,
                replay: super::replay::replay(agent.session(), agent.settings().max_steps),
            });
            agent
                .start_session_hooks(source, events, &CancellationToken::new())
                .await;
        }
        Err(e) => events.send(AgentEvent::Error {
            message: format!("Could not switch sessions: {e}"),
        }),
    }
}
