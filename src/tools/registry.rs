//! The tool registry: schemas the model sees, argument checking, and the `{"ok": ...}` result shape.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use super::error::ToolError;
use super::observation::cap_observation;
use super::panic_guard;
use super::sandbox::Sandbox;
use crate::events::{CallOutcome, EventSink};
use crate::llm::ToolSchema;

/// What a tool handler returns: the fields of a successful result, or an error.
pub type ToolFuture<'a> = BoxFuture<'a, Result<Map<String, Value>, ToolError>>;

/// Where a tool comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToolSource {
    /// Compiled into MiniClaw.
    BuiltIn,
    /// Declared by a plugin file at this path.
    Plugin(String),
    /// Offered by the MCP server of this name.
    Mcp(String),
}

// Delegation lives here, beside the context that carries it: a sub-agent's task names a
// registry, and the context names the delegator, so apart they would import each other.

/// A task for a sub-agent.
#[derive(Clone)]
pub struct SubTask {
    /// Its instructions (the system prompt).
    pub system_prompt: &'static str,
    /// The prompt of its one turn.
    pub prompt: String,
    /// The tools it may call.
    pub tools: Arc<ToolRegistry>,
    /// The workspace its tools work in.
    pub sandbox: Arc<Sandbox>,
    /// Its step limit.
    pub max_steps: usize,
}

/// How a sub-agent's turn ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubOutcome {
    /// It answered.
    Answered(String),
    /// It used its steps; what it had said last (may be empty).
    OutOfSteps(String),
    /// The turn's model requests ran out; what it had said last and why it stopped.
    OutOfRequests {
        /// Its last words (may be empty).
        answer: String,
        /// The sentence saying which budget ran out.
        reason: String,
    },
    /// The person interrupted the turn.
    Interrupted,
    /// An error ended it (its nested events say which).
    Failed,
}

/// Runs sub-agents for tools; the agent layer implements it.
pub trait Delegator: Send + Sync {
    /// Why no further sub-agent may start in this turn, if so (its model requests are used up).
    fn refusal(&self) -> Option<String>;
    /// Runs `task` as one turn of a new agent; its events go to `events`.
    fn run<'a>(
        &'a self,
        task: SubTask,
        events: EventSink,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, SubOutcome>;
}

/// What a running tool may use.
#[derive(Clone)]
pub struct ToolContext {
    /// The workspace and its path rules.
    pub sandbox: Arc<Sandbox>,
    /// The id of this call (for output events).
    pub call_id: String,
    /// Where to report live output.
    pub events: EventSink,
    /// Fires when the turn is interrupted.
    pub cancel: CancellationToken,
    /// Starts sub-agents, when a model is configured.
    pub delegator: Option<Arc<dyn Delegator>>,
    /// The live output so far, told to the model if the person interrupts the call.
    pub shown: super::shown::Shown,
    /// Where a call that may change any file keeps what it changed, for `/undo` (`None`: no
    /// history is kept, so changes are listed but cannot be undone).
    pub keeper: Option<Arc<dyn super::ChangeKeeper>>,
}

impl ToolContext {
    /// A context for calling a tool outside a turn (tests, benchmarks).
    pub fn standalone(sandbox: Arc<Sandbox>) -> Self {
        Self {
            sandbox,
            call_id: "call".into(),
            events: EventSink::discard(),
            cancel: CancellationToken::new(),
            delegator: None,
            shown: Default::default(),
            keeper: None,
        }
    }

    /// Reports a piece of live output of this call.
    pub fn output(&self, text: impl Into<String>) {
        let text = text.into();
        self.shown.push(&text);
        self.events.tool_output(&self.call_id, text);
    }
}

/// A tool the model can call.
pub trait Tool: Send + Sync {
    /// Name, description and parameter schema, as the model sees them.
    fn schema(&self) -> ToolSchema;
    /// Whether the tool only reads (read-only calls of one response run concurrently).
    fn read_only(&self) -> bool;
    /// Whether a call asks first in the `ask` approval mode (and is refused in `read-only`):
    /// it changes files, runs a command or reaches the network. By default: not read-only.
    fn needs_approval(&self) -> bool {
        !self.read_only()
    }
    /// Where it comes from.
    fn source(&self) -> ToolSource {
        ToolSource::BuiltIn
    }
    /// Whether a call may change any file of the workspace: the agent snapshots it before and
    /// compares after.
    fn changes_workspace(&self) -> bool {
        false
    }
    /// How long a call may run before the registry stops it (`None`: the registry's default).
    fn call_timeout(&self) -> Option<Duration> {
        None
    }
    /// Whether a call starts a sub-agent, which makes model requests of its own (the loop runs
    /// only a few such calls per step).
    fn runs_agent(&self) -> bool {
        false
    }
    /// What a call with these arguments would change in a file, without changing it (`None`:
    /// the tool does not say; only the file-editing tools do).
    fn preview(
        &self,
        _args: Map<String, Value>,
        _sandbox: &super::Sandbox,
    ) -> Option<Result<super::change::FileChange, ToolError>> {
        None
    }
    /// The workspace path a call would write, from its arguments (file-changing tools), so the
    /// approval gate can tell when the target is configuration (`Sandbox::write_kind`).
    fn written_path(&self, _args: &Map<String, Value>) -> Option<String> {
        None
    }
    /// Runs it with validated arguments (an object holding every required field).
    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a>;
}

/// Tools that come and go while MiniClaw runs (MCP servers start, stop and change their lists):
/// the registry asks for them whenever it needs them.
pub trait ToolProvider: Send + Sync {
    /// The tools offered right now.
    fn tools(&self) -> Vec<Arc<dyn Tool>>;
}

/// A call running longer than this is stopped: the safety net behind each tool's own limits.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);
pub use super::observation::OBSERVATION_CAP;

/// Every tool by name.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    providers: Vec<Arc<dyn ToolProvider>>,
    call_timeout: Duration,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self {
            tools: BTreeMap::new(),
            providers: Vec::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
        }
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Stops any call that runs longer than `timeout`.
    pub fn with_call_timeout(mut self, timeout: Duration) -> Self {
        self.call_timeout = timeout;
        self
    }

    /// Adds a tool; a later tool of the same name replaces the earlier one.
    pub fn register(&mut self, tool: impl Tool + 'static) {
        self.register_arc(Arc::new(tool));
    }

    /// Adds a shared tool.
    pub fn register_arc(&mut self, tool: Arc<dyn Tool>) {
        self.tools.insert(tool.schema().name, tool);
    }

    /// Adds tools that change while MiniClaw runs; a name a fixed tool already has stays the
    /// fixed tool's.
    pub fn add_provider(&mut self, provider: Arc<dyn ToolProvider>) {
        self.providers.push(provider);
    }

    /// A registry holding only the named tools (for sub-agents; never a provider's).
    pub fn subset(&self, names: &[&str]) -> Self {
        Self {
            tools: self
                .tools
                .iter()
                .filter(|(n, _)| names.contains(&n.as_str()))
                .map(|(n, t)| (n.clone(), t.clone()))
                .collect(),
            providers: Vec::new(),
            call_timeout: self.call_timeout,
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<Arc<dyn Tool>> {
        if let Some(tool) = self.tools.get(name) {
            return Some(tool.clone());
        }
        self.provided().find(|t| t.schema().name == name)
    }

    /// The providers' tools now, without those whose name a fixed tool has.
    fn provided(&self) -> impl Iterator<Item = Arc<dyn Tool>> + '_ {
        self.providers
            .iter()
            .flat_map(|p| p.tools())
            .filter(|t| !self.tools.contains_key(&t.schema().name))
    }

    /// Every tool: the fixed ones by name, then the providers' as they are now.
    pub fn iter(&self) -> impl Iterator<Item = Arc<dyn Tool>> + '_ {
        self.tools.values().cloned().chain(self.provided())
    }

    /// The schemas sent to the model.
    pub fn schemas(&self) -> Vec<ToolSchema> {
        self.iter().map(|t| t.schema()).collect()
    }

    /// Whether `name` is a known read-only tool.
    pub fn is_read_only(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.read_only())
    }

    /// What call `name(raw_arguments)` would change in a file, if the tool says (an error: the
    /// call would fail, and why).
    pub fn preview(
        &self,
        name: &str,
        raw_arguments: &str,
        sandbox: &super::Sandbox,
    ) -> Option<Result<super::change::FileChange, ToolError>> {
        let tool = self.get(name)?;
        match parse_arguments(raw_arguments, &tool.schema().parameters) {
            Ok(args) => tool.preview(args, sandbox),
            Err(e) => Some(Err(e)),
        }
    }

    /// What a call of `name` with these arguments would write: configuration (an `AGENTS.md`)
    /// or an ordinary file. Arguments that are not an object cannot run at all.
    pub fn write_kind(
        &self,
        name: &str,
        raw_arguments: &str,
        sandbox: &super::Sandbox,
    ) -> super::sandbox::WriteKind {
        let path = self.get(name).and_then(|tool| {
            match serde_json::from_str::<Value>(raw_arguments.trim()) {
                Ok(Value::Object(args)) => tool.written_path(&args),
                _ => None,
            }
        });
        path.map_or(super::sandbox::WriteKind::Ordinary, |p| {
            sandbox.write_kind(&p)
        })
    }

    /// Whether calls of `name` ask first in the `ask` approval mode.
    pub fn needs_approval(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.needs_approval())
    }

    /// Whether `name` is a known tool that starts a sub-agent.
    pub fn runs_agent(&self, name: &str) -> bool {
        self.get(name).is_some_and(|t| t.runs_agent())
    }

    /// Runs a call and always returns an observation: `{"ok": true, "tool", ...}` or
    /// `{"ok": false, "tool", "error"}`. Nothing a model writes can make this panic, and a panic
    /// inside the tool becomes the call's error.
    /// The observation is capped at `OBSERVATION_CAP` bytes, its longest texts cut with a note.
    pub async fn execute(&self, name: &str, raw_arguments: &str, ctx: &ToolContext) -> Value {
        self.run(name, raw_arguments, ctx).await.0
    }

    /// Runs the call: its observation (capped, for the model) and how it ended (for the
    /// program, which never reads it back from the observation).
    pub async fn run(
        &self,
        name: &str,
        raw_arguments: &str,
        ctx: &ToolContext,
    ) -> (Value, CallOutcome) {
        let (mut observation, outcome) = match self.try_execute(name, raw_arguments, ctx).await {
            Ok(fields) => {
                let mut out = Map::new();
                out.insert("ok".into(), Value::Bool(true));
                out.insert("tool".into(), Value::String(name.to_string()));
                for (k, v) in fields {
                    if k != "ok" && k != "tool" {
                        out.insert(k, v);
                    }
                }
                (Value::Object(out), CallOutcome::Ok)
            }
            Err(ToolError::Cancelled) => (interrupted(name, ctx), CallOutcome::Interrupted),
            Err(e) => {
                let error = e.to_string();
                let observation = error_observation(name, &error);
                let error = cap_error(error);
                (observation, CallOutcome::Failed { error })
            }
        };
        cap_observation(&mut observation, OBSERVATION_CAP);
        (observation, outcome)
    }

    async fn try_execute(
        &self,
        name: &str,
        raw_arguments: &str,
        ctx: &ToolContext,
    ) -> Result<Map<String, Value>, ToolError> {
        let Some(tool) = self.get(name) else {
            let known: Vec<String> = self.iter().map(|t| t.schema().name).collect();
            return Err(ToolError::failed(format!(
                "unknown tool `{name}`; the tools are: {}",
                known.join(", ")
            )));
        };
        let args = parse_arguments(raw_arguments, &tool.schema().parameters)?;
        if ctx.cancel.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let limit = tool.call_timeout().unwrap_or(self.call_timeout);
        // A panic in the tool is this call's error (see `panic_guard`).
        let call = panic_guard::catch(Box::pin(async move {
            test_panic(name).await?;
            tool.call(args, ctx).await
        }));
        tokio::select! {
            // A call that finished as the interrupt came is told as it ended: it did run.
            biased;
            r = tokio::time::timeout(limit, call) => {
                r.unwrap_or(Err(ToolError::Timeout(limit.as_secs().max(1))))
            }
            _ = ctx.cancel.cancelled() => Err(ToolError::Cancelled),
        }
    }
}

/// A test hook: proves that a panic in a tool call, in its future (`MINICLAW_TEST_PANIC_IN_TOOL=
/// name,...`) or on a blocking worker (`name@blocking`), is the call's error and the session goes
/// on (tests/tui_e2e.rs). Compiled only into debug builds (which the tests run).
async fn test_panic(name: &str) -> Result<(), ToolError> {
    if !cfg!(debug_assertions) {
        return Ok(());
    }
    let Some(targets) = std::env::var_os("MINICLAW_TEST_PANIC_IN_TOOL") else {
        return Ok(());
    };
    let targets = targets.to_string_lossy();
    if targets.split(',').any(|t| t == name) {
        panic!("test panic in the tool `{name}` (MINICLAW_TEST_PANIC_IN_TOOL)");
    }
    if targets
        .split(',')
        .any(|t| t.strip_suffix("@blocking") == Some(name))
    {
        let name = name.to_string();
        panic_guard::spawn_blocking(move || -> () {
            panic!("test panic on a worker of the tool `{name}` (MINICLAW_TEST_PANIC_IN_TOOL)")
        })
        .await?;
    }
    Ok(())
}

/// The most of a failed call's error its outcome keeps (the observation keeps what the model
/// is sent): a tool's error text can be megabytes, and the outcome is saved with every call.
const OUTCOME_ERROR_CAP: usize = 4096;

/// `error` cut to [`OUTCOME_ERROR_CAP`] bytes at a character boundary, marked when cut.
fn cap_error(mut error: String) -> String {
    if error.len() > OUTCOME_ERROR_CAP {
        let mut end = OUTCOME_ERROR_CAP;
        while !error.is_char_boundary(end) {
            end -= 1;
        }
        error.truncate(end);
        error.push('…');
    }
    error
}

/// The observation of a call the person interrupted while it ran: said so, with the tail of
/// what it had shown by then (`output_so_far`; `output_cut_bytes`: how much came before that).
fn interrupted(name: &str, ctx: &ToolContext) -> Value {
    let Some((text, dropped)) = ctx.shown.so_far() else {
        return error_observation(name, INTERRUPTED_SILENT);
    };
    let mut observation = error_observation(name, INTERRUPTED_WHILE_RUNNING);
    if let Some(fields) = observation.as_object_mut() {
        fields.insert("output_so_far".into(), Value::String(text));
        if dropped > 0 {
            fields.insert("output_cut_bytes".into(), Value::from(dropped));
        }
    }
    observation
}

/// The error of a call the person interrupted while it ran, after it had printed something.
pub const INTERRUPTED_WHILE_RUNNING: &str =
    "interrupted by the person while it ran (output_so_far is what it had printed)";

/// The error of a call the person interrupted while it ran, before it printed anything.
pub const INTERRUPTED_SILENT: &str =
    "interrupted by the person while it ran, before it printed anything";

/// `{"ok": false, "tool": name, "error": message}`.
pub fn error_observation(name: &str, message: &str) -> Value {
    json!({"ok": false, "tool": name, "error": message})
}

/// Parses the model's argument text into an object and checks the schema's required fields.
pub fn parse_arguments(raw: &str, schema: &Value) -> Result<Map<String, Value>, ToolError> {
    let raw = raw.trim();
    let value: Value = if raw.is_empty() {
        Value::Object(Map::new())
    } else {
        serde_json::from_str(raw).map_err(|e| {
            ToolError::InvalidArguments(format!("the arguments are not valid JSON ({e})"))
        })?
    };
    let Value::Object(args) = value else {
        return Err(ToolError::InvalidArguments(
            "the arguments must be a JSON object".into(),
        ));
    };
    if let Some(required) = schema.get("required").and_then(Value::as_array) {
        let missing: Vec<&str> = required
            .iter()
            .filter_map(Value::as_str)
            .filter(|field| args.get(*field).is_none_or(Value::is_null))
            .collect();
        if !missing.is_empty() {
            return Err(ToolError::InvalidArguments(format!(
                "missing required field(s): {}",
                missing.join(", ")
            )));
        }
    }
    Ok(args)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A tool whose call finishes when its gate opens.
    struct Gated(Arc<tokio::sync::Notify>);

    impl Tool for Gated {
        fn schema(&self) -> ToolSchema {
            ToolSchema {
                name: "gated".into(),
                description: "finishes when its gate opens".into(),
                parameters: serde_json::json!({"type": "object", "properties": {}}),
            }
        }
        fn read_only(&self) -> bool {
            true
        }
        fn call<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async move {
                self.0.notified().await;
                Ok(Map::new())
            })
        }
    }

    #[tokio::test]
    async fn a_call_that_finished_as_the_interrupt_came_is_told_as_finished() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Arc::new(Sandbox::new(dir.path()).unwrap());
        let gate = Arc::new(tokio::sync::Notify::new());
        let mut registry = ToolRegistry::new();
        registry.register(Gated(gate.clone()));
        // Without an order between the two, either would win about half the time.
        for _ in 0..64 {
            let ctx = ToolContext::standalone(sandbox.clone());
            let run = registry.run("gated", "{}", &ctx);
            tokio::pin!(run);
            assert!(futures::poll!(&mut run).is_pending(), "the call waits");
            // Both are ready before the registry looks again.
            gate.notify_one();
            ctx.cancel.cancel();
            let (_, outcome) = run.await;
            assert_eq!(outcome, CallOutcome::Ok);
        }
    }

    #[test]
    fn a_huge_error_is_kept_short_in_the_outcome() {
        let kept = cap_error("数".repeat(10_000));
        assert!(
            kept.len() <= OUTCOME_ERROR_CAP + "…".len(),
            "{}",
            kept.len()
        );
        assert!(kept.ends_with('…'));
        assert_eq!(cap_error("short".into()), "short");
    }
}
