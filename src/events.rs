//! What a running agent reports: one stream consumed alike by the full-screen UI and headless mode.
//! A leaf below `agent` and `tools`, so tools can report live output without knowing the agent.

use std::time::Duration;

use serde_json::Value;
use tokio::sync::mpsc::UnboundedSender;

use crate::llm::Usage;

/// A call's observation as the events carry it, read as a JSON [`Value`] (it derefs to one).
/// Shared, since the transcript and the conversation keep the same one; and one told again
/// from a saved session keeps its text and is parsed when first read, since most of a long
/// session's calls are never looked at again and their outputs are most of its weight.
#[derive(Clone)]
pub struct Observation(std::sync::Arc<Parsed>);

/// An observation's value, and the text it is parsed from while it is not yet.
struct Parsed {
    text: Option<std::sync::Arc<String>>,
    value: std::sync::OnceLock<Value>,
}

impl Observation {
    /// An observation of `value`.
    pub fn new(value: Value) -> Self {
        Self(std::sync::Arc::new(Parsed {
            text: None,
            value: std::sync::OnceLock::from(value),
        }))
    }

    /// An observation saved as `text` (shared with the session's message, not copied): parsed
    /// when first read, and read as a JSON string of the text when it is not JSON (an older or
    /// edited session).
    pub fn saved(text: std::sync::Arc<String>) -> Self {
        Self(std::sync::Arc::new(Parsed {
            text: Some(text),
            value: std::sync::OnceLock::new(),
        }))
    }

    /// The value.
    pub fn value(&self) -> &Value {
        self.0.value.get_or_init(|| {
            let text = self.0.text.as_deref().map_or("", String::as_str);
            serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string()))
        })
    }
}

impl Observation {
    /// The value if it is parsed, else the saved text it is parsed from.
    pub fn parsed_or_text(&self) -> Result<&Value, &str> {
        match (
            self.0.value.get(),
            self.0.text.as_deref().map(String::as_str),
        ) {
            (Some(value), _) => Ok(value),
            (None, Some(text)) => Err(text),
            (None, None) => Ok(self.value()),
        }
    }
}

impl std::ops::Deref for Observation {
    type Target = Value;
    fn deref(&self) -> &Value {
        self.value()
    }
}

impl From<Value> for Observation {
    fn from(value: Value) -> Self {
        Self::new(value)
    }
}

impl PartialEq for Observation {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0) || self.value() == other.value()
    }
}

impl Eq for Observation {}

impl std::fmt::Display for Observation {
    /// As compact JSON, as [`Value`] shows itself.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl std::fmt::Debug for Observation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

/// A compaction of the session, as told to the screen and reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Compaction {
    /// How many turns the summary replaced.
    pub turns: usize,
    /// Whether the context budget set it off (not `/compact`).
    pub automatic: bool,
    /// The summary as later requests carry it (the goal in the person's words, then the
    /// model's summary).
    pub summary: String,
    /// The summary's size in (estimated) tokens.
    pub summary_tokens: usize,
    /// The summary request's token counts, when the server sent them.
    pub usage: Option<Usage>,
}

/// What the agent is doing while a turn runs (between turns it does nothing: `TurnFinished`
/// says so).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentState {
    /// Waiting for or reading the model.
    Thinking,
    /// Running tools.
    Acting,
}

/// How a turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnOutcome {
    /// The model answered without calling tools.
    Answered,
    /// `max_steps` model calls were used up. Not a failure: the work so far stands and the
    /// person can let it go on (so it is no [`FailCause`]).
    StepLimit,
    /// The person interrupted it.
    Interrupted,
    /// Something ended it; the `Error` event before says what in words.
    Failed(FailCause),
}

/// Why a turn failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailCause {
    /// No API key for the model (nothing was sent).
    MissingKey,
    /// The server refused the key (401 or 403).
    RefusedKey,
    /// The connection failed, broke, or went silent.
    Network,
    /// The server answered with an error, or sent something unusable.
    Server,
    /// The answer was cut short by the provider (output limit, content filter, capacity).
    Cut,
    /// The model named a model or provider that cannot be used, or another problem of the
    /// request itself.
    Request,
    /// A `/plan` run made no plan, or one of its items did not get done.
    Plan,
    /// A `UserPromptSubmit` hook blocked the prompt (nothing was sent).
    Hook,
    /// A turn told again from a saved session, which keeps what went wrong in words but not
    /// its kind.
    Unrecorded,
}

impl FailCause {
    /// The name the JSON formats use.
    pub fn name(self) -> &'static str {
        match self {
            Self::MissingKey => "missing_key",
            Self::RefusedKey => "refused_key",
            Self::Network => "network",
            Self::Server => "server",
            Self::Cut => "cut",
            Self::Request => "request",
            Self::Plan => "plan",
            Self::Hook => "hook",
            Self::Unrecorded => "unrecorded",
        }
    }
}

impl TurnOutcome {
    /// The name the JSON formats use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::StepLimit => "step_limit",
            Self::Interrupted => "interrupted",
            Self::Failed(_) => "failed",
        }
    }

    /// Why it failed, when it did.
    pub fn cause(self) -> Option<FailCause> {
        match self {
            Self::Failed(cause) => Some(cause),
            _ => None,
        }
    }
}

/// How a tool call ended. The JSON observation is what the model reads; this is what the
/// program reads.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CallOutcome {
    /// It ran and succeeded.
    Ok,
    /// It ran, or tried to, and failed.
    Failed {
        /// The tool's error.
        error: String,
    },
    /// The person said no.
    Denied {
        /// What they said (empty when nothing).
        reason: String,
    },
    /// A rule kept it from running.
    Refused {
        /// Why, as the model is told.
        why: String,
        /// Which rule.
        by: RefusedBy,
    },
    /// The turn was interrupted before it could finish.
    Interrupted,
}

/// A shell command that ran (its call succeeded, `"ok": true`) but did not exit 0, read from
/// its observation's `exit_code`: the one place that tells it, for the call line and the
/// timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandExit {
    /// It exited with this status.
    Code(i64),
    /// It had no status: a signal or its time limit stopped it.
    Stopped,
}

impl CommandExit {
    /// How the call of `tool` with observation `result` exited, when it was a command that did
    /// not exit 0 (`None` for any other call, a command that exited 0, or a background job).
    pub fn failed(tool: &str, result: &Observation) -> Option<Self> {
        // Asked of every call: only a command's observation is read (a saved one is parsed
        // when first read).
        if tool != crate::command_rules::RUN_COMMAND && tool != "run_shell_command" {
            return None;
        }
        let result = result.value();
        if result.get("ok").and_then(Value::as_bool) != Some(true) {
            return None;
        }
        match result.get("exit_code")? {
            Value::Number(code) => match code.as_i64() {
                Some(0) => None,
                Some(code) => Some(Self::Code(code)),
                None => Some(Self::Stopped),
            },
            Value::Null if result.get("job").is_none() => Some(Self::Stopped),
            _ => None,
        }
    }
}

impl std::fmt::Display for CommandExit {
    /// `exit 1`, `stopped`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Code(code) => write!(f, "exit {code}"),
            Self::Stopped => f.write_str("stopped"),
        }
    }
}

/// The rule that refused a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusedBy {
    /// The approval mode (`read-only`, or nobody to ask in headless mode).
    Approval,
    /// The loop's guards: a repeated call, too many calls, an unknown tool, a broken call tag.
    Guard,
    /// A `PreToolUse` hook of the person's (or the trusted project's) settings.
    Hook,
}

impl CallOutcome {
    /// Whether it ran and succeeded.
    pub fn is_ok(&self) -> bool {
        matches!(self, Self::Ok)
    }

    /// Whether it counts as denied by approval (`--approval`, the person's no).
    pub fn is_denied(&self) -> bool {
        matches!(
            self,
            Self::Denied { .. }
                | Self::Refused {
                    by: RefusedBy::Approval,
                    ..
                }
        )
    }

    /// Why it did not succeed, in the words the model was told (`None` when it did).
    pub fn problem(&self) -> Option<String> {
        match self {
            Self::Ok => None,
            Self::Failed { error } => Some(error.clone()),
            Self::Denied { reason } if reason.is_empty() => Some("denied by the user".into()),
            Self::Denied { reason } => Some(format!("denied by the user: {reason}")),
            Self::Refused { why, .. } => Some(why.clone()),
            Self::Interrupted => Some("interrupted".into()),
        }
    }

    /// The name the JSON formats use.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed { .. } => "failed",
            Self::Denied { .. } => "denied",
            Self::Refused { .. } => "refused",
            Self::Interrupted => "interrupted",
        }
    }
}

/// How a model call's text turned out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepEnd {
    /// Tool calls follow: the text was a thought.
    Thought,
    /// No tool calls follow: the text is the answer.
    Answer,
}

/// What an MCP server is doing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpState {
    /// Starting, or listing its tools.
    Starting,
    /// Running; its tools are offered.
    Ready,
    /// It could not start, or it stopped (`last_error` says why).
    Failed,
    /// `enabled = false` in its entry.
    Disabled,
}

impl McpState {
    /// The word `/mcp` shows.
    pub fn name(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Ready => "ready",
            Self::Failed => "failed",
            Self::Disabled => "disabled",
        }
    }
}

/// One MCP server as `/mcp` and the status line show it.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerStatus {
    /// Its name.
    pub name: String,
    /// What it is doing.
    pub state: McpState,
    /// Its tools as the model sees them: name and the first line of the description.
    pub tools: Vec<(String, String)>,
    /// Why it failed last, with its stderr's last lines.
    pub last_error: Option<String>,
    /// The file that declared it.
    pub source: String,
}

/// One thing that happened in a turn, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum AgentEvent {
    /// The state changed.
    State(AgentState),
    /// A turn began for this prompt (sent first, before anything else of the turn).
    TurnStarted {
        /// What the person asked.
        prompt: String,
    },
    /// The turn's prompt carries the files of these `@` mentions (as written after `@`); sent
    /// right after `TurnStarted` when it mentioned any that could be attached.
    FilesAttached(Vec<String>),
    /// A model call began: step `step` of at most `max`.
    StepStarted {
        /// 1-based step number.
        step: usize,
        /// The step limit.
        max: usize,
    },
    /// A piece of the model's reasoning in this step.
    ReasoningDelta(String),
    /// A piece of the model's answer text in this step.
    ContentDelta(String),
    /// A tool call is about to run.
    ToolCallStarted {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The raw JSON arguments the model wrote.
        arguments: String,
    },
    /// Output a running tool produced (e.g. a shell command's line).
    ToolOutputDelta {
        /// The call id.
        id: String,
        /// The new text.
        text: String,
    },
    /// The model call's stream ended: its text was a thought (calls follow) or the answer.
    /// Not sent for a step cut short by an interrupt or an error (`TurnFinished` follows).
    StepFinished(StepEnd),
    /// A call changed a file, and how (sent just before its `ToolFinished`, only when it
    /// succeeded; a call told again from a saved session has none).
    FileEdited {
        /// The call id.
        id: String,
        /// The change.
        diff: crate::diff::FileDiff,
    },
    /// A tool call ended; `result` is the observation sent to the model.
    ToolFinished {
        /// The call id.
        id: String,
        /// The tool name.
        name: String,
        /// The JSON observation (`{"ok": ..., "tool": ..., ...}`), for the model and reports.
        result: Observation,
        /// How it ended.
        outcome: CallOutcome,
        /// Whether a person said yes to it first.
        approved: bool,
        /// How long it ran, when known (a call replayed from a saved session has no timing).
        duration: Option<Duration>,
    },
    /// The request failed and will be retried.
    Retrying {
        /// The attempt about to start.
        attempt: u32,
        /// The most attempts there will be.
        max_attempts: u32,
        /// How long until it starts.
        delay: Duration,
        /// What went wrong.
        reason: String,
        /// Why, in a word (`rate limited`, `server error 503`).
        cause: crate::llm::RetryCause,
        /// The step's text and reasoning so far are dropped: the request starts again (a
        /// stream cut once something was shown, retried once).
        restarts: bool,
    },
    /// The model server holds the request in its queue (keep-alives, no data yet): told at each
    /// keep-alive with how long it has waited, then once with `started` when the answer begins.
    Queued {
        /// How long the request has waited since the server took it.
        waited: Duration,
        /// The wait is over: the first data came.
        started: bool,
    },
    /// An event of a sub-agent working for tool call `parent_id`.
    Nested {
        /// The delegating call's id.
        parent_id: String,
        /// What the sub-agent reported.
        event: Box<AgentEvent>,
    },
    /// Something went wrong; `message` says what and what to do.
    Error {
        /// A sentence for the person.
        message: String,
    },
    /// A turn ended: the one end-of-turn signal. Its answer is what `ContentDelta` brought in
    /// its last step (the session holds it too); it is not sent again here.
    TurnFinished {
        /// How it ended.
        outcome: TurnOutcome,
        /// Tokens of the turn's model calls added up.
        usage: Option<Usage>,
        /// The last call's usage (its prompt size tells the context used).
        last_usage: Option<Usage>,
    },
    /// A model response with token counts finished, priced by its request's preset and the
    /// time: what it cost (`None`: the model has no price, so only its tokens are known). A
    /// turn's cost is these added up (`transcript::Turn::cost`); `TurnFinished` carries none.
    ResponseCost(Option<crate::llm::prices::Cost>),
    /// How much of the context budget the last request used (prompt tokens).
    ContextUsage {
        /// Prompt tokens of the last request (as the server counted them, else estimated).
        used: usize,
        /// The budget.
        budget: usize,
        /// The prompt tokens at which the session is compacted by itself (`None`: never).
        compact_at: Option<usize>,
    },
    /// The session's older turns are being summarized (a model request without tools).
    Compacting {
        /// How many turns the summary will replace.
        turns: usize,
        /// Whether the context budget set it off (not `/compact`).
        automatic: bool,
    },
    /// The session was compacted: later requests carry the summary instead of older turns.
    Compacted(Compaction),
    /// Compacting failed; older turns are trimmed to fit instead (when automatic).
    CompactionFailed {
        /// What went wrong, for the person.
        reason: String,
        /// Whether the context budget set it off (not `/compact`).
        automatic: bool,
    },
    /// `/compact` was interrupted before its summary came: nothing changed.
    CompactionInterrupted,
    /// To fit the context budget, a request left out older turns or shortened tool outputs
    /// (said once per turn, when it first happens or grows).
    ContextTrimmed {
        /// Whole earlier turns left out.
        dropped_turns: usize,
        /// Tool outputs shortened.
        shortened: usize,
    },
    /// The history was cleared.
    HistoryCleared,
    /// A notice for the person that is not an error (e.g. a corrupt history was moved aside).
    Notice(String),
    /// A `run_command` call runs without asking because remembered rules allow it (told by
    /// the gate, before the call starts).
    AllowedByRules {
        /// The call id.
        id: String,
        /// The rules that cover its line, one or more.
        rules: Vec<crate::command_rules::CommandRule>,
    },
    /// The turn used its `max` steps without a final answer (`TurnFinished` with
    /// `StepLimit` follows). Each front end says how to go on in its own terms.
    StepLimitReached {
        /// The steps a turn may take.
        max: usize,
    },
    /// Another session is now the active one (`/new`, `/resume`): the view starts again from
    /// `replay`, the events that tell it.
    SessionOpened {
        /// Its id (what `--resume` takes).
        id: String,
        /// Its title (none while it is empty and unnamed).
        title: Option<String>,
        /// What to say about the switch (which session was archived, which one reopened).
        notice: String,
        /// The session told as the events of its turns (empty for a new one).
        replay: Vec<AgentEvent>,
    },
    /// The session the history held, read while the UI started (its first frame showed the
    /// history's glimpse): the view starts again from `replay`. Sent once, before anything
    /// else the agent does.
    SessionLoaded {
        /// Its id.
        id: String,
        /// Its title (none while it is empty and unnamed).
        title: Option<String>,
        /// The session told as the events of its turns.
        replay: Vec<AgentEvent>,
        /// Its prompts as typed, oldest first (what Up recalls).
        prompts: Vec<String>,
        /// What to tell the person about it (a damaged file moved aside, changed instructions).
        notices: Vec<String>,
    },
    /// The history could not be read at all (a damaged one is moved aside and never this): the
    /// agent stops rather than save over it. The reason, for the person.
    SessionUnavailable(String),
    /// The active session was renamed.
    SessionRenamed(String),
    /// The archived sessions of this workspace, newest first (for the picker).
    Sessions(Vec<SessionSummary>),
    /// The session's background jobs of `run_command`, oldest first (`/jobs`).
    Jobs(Vec<JobInfo>),
    /// A call worked in a subfolder whose `AGENTS.md` this turn had not read: its instructions
    /// joined the call's observation for the rest of the turn.
    InstructionsRead {
        /// The call's id.
        id: String,
        /// The file, workspace-relative (`src/parser/AGENTS.md`).
        file: String,
        /// Its size.
        bytes: u64,
        /// Whether only its start was used.
        truncated: bool,
    },
    /// The configured hooks with their last results (`/hooks`).
    Hooks(Vec<crate::hooks::HookStatus>),
    /// What this session's turns changed, as a unified diff (`/diff`).
    FileChanges(String),
    /// How AGENTS.md changed since this session's prompt last carried it, as a unified diff
    /// (`/instructions diff`).
    InstructionsDiff(String),
    /// `/undo` did nothing: files were changed since the turn; this diff shows what undoing
    /// would throw away (`/undo` again with a yes goes ahead).
    UndoConflict(String),
    /// A call waits for a person's yes or no (the `ask` approval mode).
    ApprovalRequested(crate::approval::ApprovalRequest),
    /// The MCP servers changed: every server as it is now (sent at any time, also between
    /// turns).
    McpServers(Vec<McpServerStatus>),
    /// A `/plan` run's planner or executor moved on.
    Plan(PlanEvent),
}

impl AgentEvent {
    /// Whether this is one more piece of text streaming in (reasoning, answer, a tool's
    /// output): what a lower frame rate may gather, unlike events that change what happens.
    pub fn is_stream_delta(&self) -> bool {
        matches!(
            self,
            Self::ReasoningDelta(_) | Self::ContentDelta(_) | Self::ToolOutputDelta { .. }
        )
    }
}

/// Where one item of a plan stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ItemState {
    /// Not started yet.
    Pending,
    /// Its executor turn runs.
    Running,
    /// Carried out.
    Done,
    /// It could not be carried out; the run stopped there.
    Failed,
    /// The person interrupted it; the run stopped there.
    Interrupted,
}

impl ItemState {
    /// The word the trace and the JSON report use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Running => "running",
            Self::Done => "done",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }
}

/// What happened in a `/plan` run (planner, then executor), in order.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanEvent {
    /// The planner turn for `task` begins (sent before its `TurnStarted`).
    Planning {
        /// What the person asked to plan.
        task: String,
        /// The model the planner uses.
        model: String,
    },
    /// The planner wrote this plan (sent after its `TurnFinished`).
    Proposed {
        /// The numbered items, in order, without their numbers.
        items: Vec<String>,
        /// Told again from a saved session: shown, not put in the input to edit.
        replayed: bool,
    },
    /// The executor begins these items (the plan as edited), one turn each.
    Executing {
        /// The items, in order.
        items: Vec<String>,
        /// The model the executor uses.
        model: String,
    },
    /// Item `index` (0-based) begins (sent before its turn's `TurnStarted`).
    ItemStarted {
        /// Which item.
        index: usize,
    },
    /// Item `index` ended (sent after its turn's `TurnFinished`).
    ItemFinished {
        /// Which item.
        index: usize,
        /// Done, failed or interrupted.
        state: ItemState,
        /// Why it failed, when it did.
        reason: Option<String>,
    },
    /// The executor run ended: every item done, or stopped at the first that was not.
    Finished(PlanSummary),
}

/// How an executor run ended.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanSummary {
    /// How many items were done.
    pub done: usize,
    /// How many items the plan has.
    pub total: usize,
    /// The item that stopped the run (0-based), how it ended, and why, when one did.
    pub stopped: Option<(usize, ItemState, Option<String>)>,
}

impl PlanSummary {
    /// Whether every item was done.
    pub fn completed(&self) -> bool {
        self.stopped.is_none() && self.done == self.total
    }
}

/// An archived session, as the picker lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionSummary {
    /// Its id (also its file name in the sessions folder).
    pub id: String,
    /// Its title.
    pub title: String,
    /// When it last changed (`None` when the file could not be read).
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
    /// How many prompts it holds.
    pub turns: usize,
    /// Its first prompt's first line.
    pub first_prompt: String,
    /// Its prompts as typed, last first (what Ctrl+R searches in the UI; the file is read
    /// whole for the summary anyway).
    pub prompts: Vec<String>,
    /// Why it cannot be opened, when it cannot (unreadable or damaged file).
    pub problem: Option<String>,
}

/// A cheap, cloneable sender of agent events; sending never blocks and never fails loudly.
#[derive(Clone, Debug)]
pub struct EventSink {
    tx: Option<UnboundedSender<AgentEvent>>,
    parent: Option<String>,
}

impl EventSink {
    /// A sink that sends on `tx`.
    pub fn new(tx: UnboundedSender<AgentEvent>) -> Self {
        Self {
            tx: Some(tx),
            parent: None,
        }
    }

    /// A sink that drops everything (for tests and one-off calls).
    pub fn discard() -> Self {
        Self {
            tx: None,
            parent: None,
        }
    }

    /// A sink whose events arrive wrapped as `Nested` under tool call `parent_id`.
    pub fn nested(&self, parent_id: &str) -> Self {
        Self {
            tx: self.tx.clone(),
            parent: Some(match &self.parent {
                // Nesting deeper keeps the outermost parent: the timeline shows one level.
                Some(p) => p.clone(),
                None => parent_id.to_string(),
            }),
        }
    }

    /// Sends one event (ignored when the receiver is gone: the UI may have quit).
    pub fn send(&self, event: AgentEvent) {
        if let Some(tx) = &self.tx {
            let event = match &self.parent {
                Some(parent_id) => AgentEvent::Nested {
                    parent_id: parent_id.clone(),
                    event: Box::new(event),
                },
                None => event,
            };
            let _ = tx.send(event);
        }
    }

    /// Reports output of running tool call `id`.
    pub fn tool_output(&self, id: &str, text: impl Into<String>) {
        self.send(AgentEvent::ToolOutputDelta {
            id: id.to_string(),
            text: text.into(),
        });
    }
}

/// Where a job is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobState {
    /// Still running.
    Running,
    /// Its command ended with this exit code (`None`: a signal).
    Exited(Option<i32>),
    /// It was ended: why.
    Ended(String),
}

impl JobState {
    /// The state as the model and `/jobs` read it.
    pub fn describe(&self) -> String {
        match self {
            JobState::Running => "running".into(),
            JobState::Exited(Some(code)) => format!("exited with code {code}"),
            JobState::Exited(None) => "ended by a signal".into(),
            JobState::Ended(why) => format!("ended: {why}"),
        }
    }
}

/// One job, as `/jobs` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobInfo {
    /// Its id (what the model names it by).
    pub id: u32,
    /// The command line.
    pub command: String,
    /// Its folder, as shown.
    pub dir: String,
    /// Where it is.
    pub state: JobState,
    /// How long since it started.
    pub age: Duration,
}
