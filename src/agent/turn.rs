//! The ReAct loop: model, tool calls, observations, model ... until an answer or the step limit.
//!
//! Invariants: every assistant tool call in the session gets exactly one tool message, even when
//! the turn is interrupted or fails; the history is saved after every step; the loop makes at most
//! `max_steps` model calls, and the whole turn, sub-agents included, at most what its
//! [`RequestBudget`] allows.

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::advice::{error_advice, fail_cause};
use super::approvals::Approvals;
use super::budget::RequestBudget;
use super::context::ContextBudget;
use super::history::{self, HistoryStore, HistoryWriter, TurnChanges};
use super::session::{Incomplete, Message, Session};
use super::turn_input::{TurnInput, TurnSpec};
use crate::approval::ApprovalMode;
use crate::events::{AgentEvent, AgentState, EventSink, FailCause, StepEnd, TurnOutcome};
use crate::llm::prices::{Billed, Prices};
use crate::llm::{
    ChatError, ClientEvent, Completion, FinishReason, LlmClient, LlmError, Preset, StreamEvent,
    Usage,
};
use crate::tools::mcp::McpHub;
use crate::tools::{Sandbox, ToolRegistry};

/// How the agent runs.
#[derive(Clone, Debug)]
pub struct AgentSettings {
    /// The model preset of the next request.
    pub preset: Preset,
    /// At most this many model calls of the agent's own loop per turn (the turn's request budget,
    /// which sub-agents share, follows from it: see [`RequestBudget::for_turn`]).
    pub max_steps: usize,
    /// Where the history is saved (`None`: not saved, e.g. for sub-agents).
    pub history_path: Option<PathBuf>,
}

/// An agent: a model client, tools, a sandbox and a conversation.
pub struct Agent {
    pub(super) client: LlmClient,
    pub(super) registry: Arc<ToolRegistry>,
    pub(super) sandbox: Arc<Sandbox>,
    pub(super) session: Session,
    pub(super) settings: AgentSettings,
    pub(super) budget: ContextBudget,
    /// When the session is compacted by itself, as a percent of the context budget (0: never).
    pub(super) compact_at: u8,
    /// The context budget at which compacting by itself failed: it is not tried again (each
    /// try is a paid request) until `/compact`, another session or another budget.
    pub(super) compaction_failed_at: Option<usize>,
    /// The preset of the next request: the one place it lives. A handle holds a clone of the
    /// sender and may change it while a turn runs; the agent reads it before every request.
    pub(super) preset: tokio::sync::watch::Sender<Preset>,
    /// A sub-agent's: the budget of the turn that started it (`None`: each turn has its own).
    pub(super) request_budget: Option<RequestBudget>,
    /// Writes the history off the async runtime; started at the first save.
    pub(super) history: Option<HistoryWriter>,
    /// The store the writer starts with (from loading the history), if given.
    pub(super) history_store: Option<HistoryStore>,
    /// The file the open session is saved in, locked (`None`: `settings.history_path`,
    /// unlocked, as in tests and for agents that keep no history).
    pub(super) slot: Option<super::history::Slot>,
    /// Which calls run without asking, and who is asked about the others.
    pub(super) approvals: Approvals,
    /// The files the running turn changed, as they were before (for `/undo`).
    pub(super) changes: Arc<TurnChanges>,
    /// What the model is told with the next prompt (that the person undid a turn).
    pub(super) undo_note: Option<String>,
    /// The MCP servers whose tools the registry offers, when any are configured.
    pub(super) mcp: Option<Arc<McpHub>>,
    /// `run_command`'s tools, when the registry offers them (their jobs end with the session).
    pub(super) commands: Option<crate::tools::command::CommandTools>,
    /// What the running turn changes for its own requests (a `/plan` run's preset).
    pub(super) turn_spec: TurnSpec,
    /// The presets of `/plan` runs.
    pub(super) plan_presets: super::plan::PlanPresets,
    /// The project instructions the system prompt carries (`None`: none).
    pub(super) instructions: Option<String>,
    /// How the instructions changed since this session's prompt last carried them, when they
    /// did (a unified diff, shown by `/instructions diff`).
    pub(super) instructions_diff: Option<String>,
    /// What responses cost (DeepSeek's table and the person's `[cost]` prices).
    pub(super) prices: Arc<Prices>,
    /// The person's hooks, when any are configured.
    pub(super) hooks: Option<Arc<crate::hooks::Hooks>>,
    /// What the `SessionStart` hooks added, for the session's next prompt.
    pub(super) session_context: Option<String>,
    /// The subfolders' `AGENTS.md` this turn looked for.
    pub(super) nested_read: std::sync::Mutex<NestedRead>,
}

/// The subfolders' `AGENTS.md` a turn looked for (`nested_instructions`): each file once,
/// found or not, and how many joined.
#[derive(Debug, Default)]
pub(super) struct NestedRead {
    pub(super) looked: std::collections::BTreeSet<String>,
    pub(super) loaded: usize,
}

/// What one model call ended in.
enum StepResult {
    /// The turn is over.
    Finished(TurnOutcome),
    /// Tools ran; call the model again.
    Continue,
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
        let preset = settings.preset.clone();
        Self {
            client,
            registry,
            sandbox,
            session,
            settings,
            budget: ContextBudget::configured(None),
            compact_at: super::context::DEFAULT_COMPACT_AT,
            compaction_failed_at: None,
            preset: tokio::sync::watch::Sender::new(preset),
            request_budget: None,
            history: None,
            history_store: None,
            slot: None,
            approvals: Approvals::new(ApprovalMode::Auto, None),
            changes: Arc::default(),
            undo_note: None,
            mcp: None,
            commands: None,
            turn_spec: TurnSpec::default(),
            plan_presets: super::plan::PlanPresets::default(),
            instructions: None,
            instructions_diff: None,
            prices: Arc::default(),
            hooks: None,
            session_context: None,
            nested_read: Default::default(),
        }
    }

    /// Empties the conversation and deletes the history file and its journal (off the runtime).
    /// The system prompt (with the project's instructions) stays what the session was opened
    /// with.
    pub async fn clear_history(&mut self) -> Result<(), history::HistoryError> {
        self.session = self.session.cleared();
        self.compaction_failed_at = None;
        // A new session: a yes to a tool, a note about an undo and the jobs were the old one's.
        self.approvals.forget_allowed();
        self.end_jobs();
        self.undo_note = None;
        let saved_at = self.saved_at();
        match (&mut self.history, saved_at) {
            // After the saves queued before it (none between turns: each turn waits for its own).
            (Some(writer), _) => writer.clear().await,
            (None, Some(path)) => {
                super::blocking::off_runtime(move || history::clear(&path)).await?
            }
            (None, None) => Ok(()),
        }
    }

    /// Runs one turn for `prompt`, reporting through `events`; `cancel` stops it at once.
    /// The history is consistent and saved whatever the outcome.
    pub async fn run_turn(
        &mut self,
        prompt: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        self.run_turn_with(TurnInput::prompt(prompt), events, cancel)
            .await
    }

    /// Runs one turn for `input`: its tools, preset and system addition hold for this turn
    /// alone, whatever the outcome.
    pub async fn run_turn_with(
        &mut self,
        mut input: TurnInput,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        let full = input
            .tools
            .take()
            .map(|tools| std::mem::replace(&mut self.registry, tools));
        self.turn_spec = TurnSpec {
            preset: input.preset.take(),
            system_addition: input.system_addition.take(),
        };
        let outcome = self.turn(input, events, cancel).await;
        self.turn_spec = TurnSpec::default();
        if let Some(full) = full {
            self.registry = full;
        }
        outcome
    }

    async fn turn(
        &mut self,
        input: TurnInput,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> TurnOutcome {
        events.send(AgentEvent::TurnStarted {
            prompt: input.prompt.clone(),
        });
        let max = self.settings.max_steps.max(1);
        let mut turn = TurnTally::new(match &self.request_budget {
            Some(shared) => shared.clone(),
            None => RequestBudget::for_turn(max),
        });
        // A key written to the key file since the last send is used now, without a restart.
        if let Err(e) = self.client.key().refresh_off_thread().await {
            events.send(AgentEvent::Notice(format!(
                "The API key could not be read again: {e}."
            )));
        }
        if let Some(problem) = self.client.key_problem(&self.current_preset()) {
            // Nothing can be sent: say what to set, and leave the history as it was.
            events.send(AgentEvent::Error {
                message: error_advice(&problem),
            });
            let outcome = TurnOutcome::Failed(fail_cause(&problem));
            self.finish(events, &turn, outcome).await;
            return outcome;
        }
        self.tell_hooks_the_session();
        self.forget_nested_instructions();
        let hook_context = match self.prompt_hook(&input.prompt, events, cancel).await {
            Ok(context) => context,
            Err(reason) => {
                // Nothing is sent, and the prompt is not kept: the person reads why.
                events.send(AgentEvent::Error {
                    message: crate::agent::advice::prompt_blocked(&reason),
                });
                let outcome = TurnOutcome::Failed(crate::events::FailCause::Hook);
                self.finish(events, &turn, outcome).await;
                return outcome;
            }
        };
        let mut message = match input.content {
            Some(content) => {
                let mut message = Message::user(content);
                // The prompt as shown is kept beside what was sent, so a reopened session shows
                // it again (`/init`, not its instruction).
                message.attached = Some(super::mentions::Attached {
                    typed: input.prompt.clone(),
                    mentions: Vec::new(),
                });
                message
            }
            None => self.prompt_message(&input.prompt, events).await,
        };
        message.note = match (self.undo_note.take(), hook_context) {
            (Some(undo), Some(hooks)) => Some(format!("{undo}\n\n{hooks}")),
            (undo, hooks) => undo.or(hooks),
        };
        message.plan = input.plan;
        self.session.push(message);
        // Saved at once: a crash during the first step must not lose the prompt.
        self.save(events);
        let mut previous_calls: Vec<(String, String)> = Vec::new();
        let mut continuations = 0;
        tracing::info!(session = %self.session.id, preset = %self.current_preset(), "turn started");
        for step in 1..=max {
            if let Err(e) = self.draw_request(&turn.budget) {
                // Only a sub-agent can get here: the main loop's steps are reserved.
                tracing::info!(step, used = turn.budget.used(), "request budget used up");
                events.send(AgentEvent::Error {
                    message: format!("Stopped: {e}."),
                });
                self.finish(events, &turn, TurnOutcome::StepLimit).await;
                return TurnOutcome::StepLimit;
            }
            tracing::debug!(step, max, "model call");
            events.send(AgentEvent::StepStarted { step, max });
            events.send(AgentEvent::State(AgentState::Thinking));
            let end = self
                .step(events, cancel, &mut turn, &mut previous_calls)
                .await;
            self.save(events);
            if let StepResult::Finished(outcome) = end {
                if outcome == TurnOutcome::Answered
                    && self
                        .stop_hook_continues(continuations, events, cancel)
                        .await
                {
                    continuations += 1;
                    continue;
                }
                tracing::info!(?outcome, step, "turn finished");
                self.finish(events, &turn, outcome).await;
                return outcome;
            }
        }
        // A limit reached is not an error: said once; each front end names its way on.
        events.send(AgentEvent::StepLimitReached { max });
        self.finish(events, &turn, TurnOutcome::StepLimit).await;
        TurnOutcome::StepLimit
    }

    /// Uses at most `max_steps` steps per turn from the next turn on (`/steps N`).
    pub fn set_max_steps(&mut self, max_steps: usize) {
        self.settings.max_steps = max_steps.max(1);
    }

    /// Takes one request from the turn's budget: a reserved one for the main loop, a shared one
    /// for a sub-agent.
    fn draw_request(&self, budget: &RequestBudget) -> Result<(), super::budget::BudgetExhausted> {
        match self.request_budget {
            Some(_) => budget.take(),
            None => budget.take_reserved(),
        }
    }

    /// One model call and, when it asks for them, its tool calls.
    async fn step(
        &mut self,
        events: &EventSink,
        cancel: &CancellationToken,
        turn: &mut TurnTally,
        previous_calls: &mut Vec<(String, String)>,
    ) -> StepResult {
        let schemas = self.registry.schemas();
        let preset = self.current_preset();
        self.budget.for_model(preset.context_tokens());
        let reasoning_back = !schemas.is_empty() && preset.returns_reasoning();
        let overhead = crate::agent::context::estimate_schemas(&schemas);
        let mut chat = self.request_messages(reasoning_back);
        let estimate = self
            .budget
            .corrected(overhead + crate::agent::context::estimate_messages(&chat));
        if self.compaction_due(estimate) {
            match self.compact_automatically(events, cancel).await {
                Ok(done) => {
                    // Billed already, with the compaction's message.
                    if let Some(u) = &done.usage {
                        turn.add_usage(u);
                    }
                    chat = self.request_messages(reasoning_back);
                }
                Err(_) if cancel.is_cancelled() => {
                    return StepResult::Finished(TurnOutcome::Interrupted);
                }
                // Said already; the request is trimmed to fit as before compaction existed.
                Err(_) => self.compaction_failed_at = Some(self.budget.max_tokens),
            }
        }
        let (messages, fit, raw_estimate) = self.budget.fit(chat, overhead);
        turn.tell_trimmed(&fit, events);
        // The client keeps what arrives; this only passes it on as it comes.
        let mut on_event = |event: ClientEvent| forward(events, event);
        let result = self
            .client
            .chat(&preset, &messages, &schemas, cancel, &mut on_event)
            .await;
        let completion = match result {
            Ok(c) => c,
            Err(ChatError {
                error: LlmError::Cancelled,
                partial,
            }) => {
                self.keep_partial(&partial, Incomplete::Interrupted);
                return StepResult::Finished(TurnOutcome::Interrupted);
            }
            Err(ChatError { error, partial }) => {
                tracing::warn!(error = %error, "model call failed");
                self.keep_partial(&partial, Incomplete::Failed(error.to_string()));
                events.send(AgentEvent::Error {
                    message: error_advice(&error),
                });
                return StepResult::Finished(TurnOutcome::Failed(fail_cause(&error)));
            }
        };
        let mut billed = None;
        if let Some(u) = &completion.usage {
            billed = Some(self.account(&preset, u, turn, events));
            self.budget.correct(raw_estimate, u.prompt_tokens);
        }
        let used = completion
            .usage
            .map_or(fit.estimated_tokens, |u| u.prompt_tokens as usize);
        events.send(AgentEvent::ContextUsage {
            used,
            budget: self.budget.max_tokens,
            compact_at: self.compaction_threshold(),
        });
        if completion.tool_calls.is_empty() || is_cut(&completion.finish_reason) {
            // Calls of a cut response may have cut arguments: none of them is run, and they are
            // not kept (a half-written call sent back could make the server refuse the history).
            let mut completion = completion;
            completion.tool_calls.clear();
            return self.answered(events, completion, billed);
        }

        let calls = completion.tool_calls.clone();
        self.session.push(
            Message::assistant(
                completion.content.clone(),
                Some(completion.reasoning.clone()),
                calls.clone(),
            )
            .billed(billed),
        );
        events.send(AgentEvent::StepFinished(StepEnd::Thought));
        events.send(AgentEvent::State(AgentState::Acting));
        let (observations, made) = self
            .run_calls(&calls, previous_calls, &turn.budget, events, cancel)
            .await;
        for (call, observation) in calls.iter().zip(observations) {
            let message = Message::tool_result(
                call.id.clone(),
                observation.value.to_string(),
                (observation.outcome, observation.approved),
            );
            self.session.push(message.timed(observation.duration));
        }
        // Calls that ran, or were refused as repeats, count as made; a call refused for another
        // reason (too many in one step) may be asked for again.
        *previous_calls = calls
            .iter()
            .zip(made)
            .filter(|(_, made)| *made)
            .map(|(c, _)| (c.function.name.clone(), c.function.arguments.clone()))
            .collect();
        if cancel.is_cancelled() {
            return StepResult::Finished(TurnOutcome::Interrupted);
        }
        StepResult::Continue
    }

    /// The conversation as the next request sends it, before fitting.
    pub(super) fn request_messages(&self, reasoning_back: bool) -> Vec<crate::llm::ChatMessage> {
        let mut chat = self.session.to_chat(reasoning_back);
        self.turn_spec.add_to(&mut chat);
        chat
    }

    /// The model answered without tools: keep the answer, marking it when it was cut.
    fn answered(
        &mut self,
        events: &EventSink,
        c: Completion,
        billed: Option<Billed>,
    ) -> StepResult {
        events.send(AgentEvent::StepFinished(StepEnd::Answer));
        let cut = match &c.finish_reason {
            Some(FinishReason::Length) => Some(
                "The answer was cut off: the model reached its output limit. Ask it to continue.",
            ),
            Some(FinishReason::ContentFilter) => {
                Some("The answer was stopped by the provider's content filter.")
            }
            Some(FinishReason::InsufficientSystemResource) => Some(
                "The answer was cut off: the provider ran out of capacity. Send the prompt again in a moment.",
            ),
            _ => None,
        };
        let mut message =
            Message::assistant(c.content.clone(), Some(c.reasoning), vec![]).billed(billed);
        message.incomplete = cut.map(|text| Incomplete::Cut(text.to_string()));
        self.session.push(message);
        match cut {
            Some(text) => {
                events.send(AgentEvent::Error {
                    message: text.to_string(),
                });
                StepResult::Finished(TurnOutcome::Failed(FailCause::Cut))
            }
            None => StepResult::Finished(TurnOutcome::Answered),
        }
    }

    /// Accounts one model response of `preset` that reported `usage`: its tokens join the
    /// turn's, and what it cost (`preset`'s price now: DeepSeek's peak hours cost more) is told
    /// as a `ResponseCost` event. Every kind of model request calls this once per response, so
    /// all are billed alike; what it returns belongs on the message the response made.
    pub(super) fn account(
        &self,
        preset: &Preset,
        usage: &Usage,
        turn: &mut TurnTally,
        events: &EventSink,
    ) -> Billed {
        turn.add_usage(usage);
        self.bill(preset, usage, events)
    }

    /// What a response cost, told as a `ResponseCost` event (also for a request outside a
    /// turn, `/compact`'s).
    pub(super) fn bill(&self, preset: &Preset, usage: &Usage, events: &EventSink) -> Billed {
        let billed = self.prices.bill(preset, usage, chrono::Utc::now());
        events.send(AgentEvent::ResponseCost(billed.cost));
        billed
    }

    /// Keeps what arrived of an answer that did not finish, marked with why.
    /// (Kept even when nothing arrived: the step was made, and a reopened session shows it
    /// stopped as it did live.)
    fn keep_partial(&mut self, partial: &Completion, why: Incomplete) {
        let mut m = Message::assistant(
            partial.content.clone(),
            Some(partial.reasoning.clone()),
            vec![],
        );
        m.incomplete = Some(why);
        self.session.push(m);
    }

    /// The file the open session is saved in: its slot's, else the workspace's history file.
    pub(super) fn saved_at(&self) -> Option<PathBuf> {
        match &self.slot {
            Some(slot) => Some(slot.path().to_path_buf()),
            None => self.settings.history_path.clone(),
        }
    }

    /// Queues a save of what changed since the last one; the writer's thread does the file
    /// work, so the runtime never waits for the disk.
    pub(super) fn save(&mut self, events: &EventSink) {
        let Some(path) = self.saved_at() else {
            return;
        };
        if self.history.is_none() {
            let policy = self.slot.as_ref().map(|s| s.policy()).unwrap_or_default();
            let store = self
                .history_store
                .take()
                .unwrap_or_else(|| HistoryStore::open(&path).with_policy(policy));
            match HistoryWriter::start(store) {
                Ok(writer) => self.history = Some(writer),
                Err(e) => {
                    events.send(AgentEvent::Error {
                        message: format!("Could not save the history: {e}"),
                    });
                    return;
                }
            }
        }
        if let Some(writer) = &mut self.history {
            writer.save(&self.session, events);
        }
    }

    async fn finish(&mut self, events: &EventSink, turn: &TurnTally, outcome: TurnOutcome) {
        let prompt = self
            .session
            .prompts()
            .last()
            .unwrap_or_default()
            .to_string();
        if let Some(problem) = self.record_changes(&prompt).await {
            events.send(AgentEvent::Error { message: problem });
        }
        // The turn's saves are on disk before it is reported finished: a UI that quits then,
        // or a caller that reads the file, finds them all.
        if let Some(writer) = &mut self.history {
            writer.settle(&self.session, events).await;
        }
        self.notify_turn_ended(events);
        events.send(AgentEvent::TurnFinished {
            outcome,
            usage: turn.usage,
            last_usage: turn.last_usage,
        });
    }
}

/// What a turn adds up to.
pub(super) struct TurnTally {
    usage: Option<Usage>,
    last_usage: Option<Usage>,
    /// The model requests the turn may still make, sub-agents included.
    budget: RequestBudget,
    /// What fitting last left out, as told (turns dropped, outputs shortened).
    trimmed: (usize, usize),
}

impl TurnTally {
    fn new(budget: RequestBudget) -> Self {
        Self {
            usage: None,
            last_usage: None,
            budget,
            trimmed: (0, 0),
        }
    }

    /// Tells the person when fitting left more out than the turn's requests did before.
    fn tell_trimmed(&mut self, fit: &super::context::FitReport, events: &EventSink) {
        let now = (fit.dropped_turns, fit.shortened);
        if now.0 > self.trimmed.0 || now.1 > self.trimmed.1 {
            events.send(AgentEvent::ContextTrimmed {
                dropped_turns: fit.dropped_turns,
                shortened: fit.shortened,
            });
        }
        self.trimmed = (now.0.max(self.trimmed.0), now.1.max(self.trimmed.1));
    }

    fn add_usage(&mut self, u: &Usage) {
        self.usage.get_or_insert_with(Usage::default).add(u);
        self.last_usage = Some(*u);
    }
}

/// Whether the response was cut short by a limit rather than finished.
fn is_cut(reason: &Option<FinishReason>) -> bool {
    matches!(
        reason,
        Some(
            FinishReason::Length
                | FinishReason::ContentFilter
                | FinishReason::InsufficientSystemResource
        )
    )
}

/// Passes what the model client reports on as agent events.
pub(super) fn forward(events: &EventSink, event: ClientEvent) {
    match event {
        ClientEvent::Stream(StreamEvent::Reasoning(text)) => {
            events.send(AgentEvent::ReasoningDelta(text));
        }
        ClientEvent::Stream(StreamEvent::Content(text)) => {
            events.send(AgentEvent::ContentDelta(text));
        }
        ClientEvent::Stream(_) => {}
        ClientEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
            cause,
            restarts,
        } => events.send(AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
            cause,
            restarts,
        }),
        ClientEvent::Queued { waited, started } => {
            events.send(AgentEvent::Queued { waited, started });
        }
    }
}
