//! The approval gate: in the `ask` mode a call that changes something waits for a person's
//! answer; in `read-only` it is refused; `auto` lets it run. The UI answers through
//! [`PendingAnswers`]; headless mode has no one to ask, so such calls are denied. `run_command`
//! has its own rules ([`command`]): prefix rules, and the network asking always.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};
use tokio_util::sync::CancellationToken;

mod command;

use super::blocking::off_runtime;
use crate::approval::{ApprovalMode, ApprovalRequest, Decision};
use crate::command_rules::{CommandCall, CommandRules, CommandTimeouts, RUN_COMMAND};
use crate::events::{AgentEvent, CallOutcome, EventSink, RefusedBy};
use crate::llm::ToolCall;
use crate::tools::{Sandbox, ToolRegistry};

/// The next approval ticket.
static TICKETS: AtomicU64 = AtomicU64::new(1);

/// Asks a person about a call and waits for the answer.
pub trait Asker: Send + Sync {
    /// The answer to `request` (reported on `events` for the UI to show).
    fn ask<'a>(
        &'a self,
        request: ApprovalRequest,
        events: &'a EventSink,
    ) -> BoxFuture<'a, Decision>;
}

/// The answers the UI owes, by call id: the agent waits on each, the UI's handle answers.
#[derive(Clone, Debug, Default)]
pub struct PendingAnswers(Arc<Mutex<HashMap<String, oneshot::Sender<Decision>>>>);

impl PendingAnswers {
    /// Answers the call `id` (ignored when nothing waits for it).
    pub fn answer(&self, id: &str, decision: Decision) {
        let waiting = self.0.lock().ok().and_then(|mut map| map.remove(id));
        if let Some(tx) = waiting {
            let _ = tx.send(decision);
        }
    }

    /// Denies every call waiting (Ctrl+C, quitting).
    pub fn deny_all(&self, reason: &str) {
        let waiting: Vec<_> = match self.0.lock() {
            Ok(mut map) => map.drain().collect(),
            Err(_) => Vec::new(),
        };
        for (_, tx) in waiting {
            let _ = tx.send(Decision::Deny(reason.to_string()));
        }
    }
}

impl Asker for PendingAnswers {
    fn ask<'a>(
        &'a self,
        request: ApprovalRequest,
        events: &'a EventSink,
    ) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let (tx, rx) = oneshot::channel();
            let mut request = request;
            // Answers are keyed by a ticket of MiniClaw's, not the model server's call id
            // (which a server may reuse): a late answer can never reach another call.
            request.id = format!("{}:{}", TICKETS.fetch_add(1, Ordering::Relaxed), request.id);
            if let Ok(mut map) = self.0.lock() {
                map.insert(request.id.clone(), tx);
            }
            events.send(AgentEvent::ApprovalRequested(request));
            rx.await
                .unwrap_or_else(|_| Decision::Deny("no one answered".into()))
        })
    }
}

/// The gate's state: the mode (changed by the UI at any time), who asks, the tools a person
/// let through for the rest of the session, and the command rules of the workspace.
pub struct Approvals {
    mode: watch::Sender<ApprovalMode>,
    asker: Option<Arc<dyn Asker>>,
    /// The person's hooks: `Notification` ones run whenever a person is asked.
    hooks: Option<Arc<crate::hooks::Hooks>>,
    allowed: Mutex<HashSet<String>>,
    commands: Arc<CommandRules>,
    /// `run_command`'s configured time limits, which its dialog says.
    command_timeouts: CommandTimeouts,
}

/// What the gate made of one call.
pub enum Gate {
    /// Run it; `asked` when a person said yes to it.
    Run {
        /// Whether a person approved it.
        asked: bool,
    },
    /// Do not run it; this is its observation, and how it ended.
    Refused(Value, CallOutcome),
}

impl Approvals {
    /// A gate in `mode`, asking through `asker` (none: calls that would ask are denied), with
    /// no command rules.
    pub fn new(mode: ApprovalMode, asker: Option<Arc<dyn Asker>>) -> Self {
        Self {
            mode: watch::Sender::new(mode),
            asker,
            hooks: None,
            allowed: Mutex::new(HashSet::new()),
            commands: Arc::new(CommandRules::empty(std::path::Path::new("."))),
            command_timeouts: CommandTimeouts::default(),
        }
    }

    /// The same gate, letting `run_command` calls through by `rules`.
    pub fn with_command_rules(mut self, rules: Arc<CommandRules>) -> Self {
        self.commands = rules;
        self
    }

    /// Says `timeouts` (`run_command`'s configured limits) in its dialog from now on.
    pub fn set_command_timeouts(&mut self, timeouts: CommandTimeouts) {
        self.command_timeouts = timeouts;
    }

    /// Lets `run_command` calls through by `rules` from now on.
    pub fn set_command_rules(&mut self, rules: Arc<CommandRules>) {
        self.commands = rules;
    }

    /// `run_command`'s configured time limits.
    pub fn command_timeouts(&self) -> CommandTimeouts {
        self.command_timeouts
    }

    /// The command rules (shared with the UI's `/permissions`).
    pub fn command_rules(&self) -> Arc<CommandRules> {
        self.commands.clone()
    }

    /// Runs the `Notification` hooks of `hooks` whenever a person is asked.
    pub fn set_hooks(&mut self, hooks: Arc<crate::hooks::Hooks>) {
        self.hooks = Some(hooks);
    }

    /// Asks through `asker` from now on, keeping the mode, the session's yeses and the rules.
    pub fn set_asker(&mut self, asker: Arc<dyn Asker>) {
        self.asker = Some(asker);
    }

    /// The sender of the mode, for a handle that changes it.
    pub fn mode_sender(&self) -> watch::Sender<ApprovalMode> {
        self.mode.clone()
    }

    /// The mode now.
    pub fn mode(&self) -> ApprovalMode {
        *self.mode.borrow()
    }

    /// Forgets the tools let through for the session (a new session starts).
    pub fn forget_allowed(&self) {
        if let Ok(mut allowed) = self.allowed.lock() {
            allowed.clear();
        }
    }

    /// Whether a person let `tool` through for the rest of the session.
    fn allowed_for_session(&self, tool: &str) -> bool {
        self.allowed.lock().is_ok_and(|a| a.contains(tool))
    }

    /// Whether a call of `tool` with `arguments` that needs approval would ask now (for
    /// counting "1 of 3").
    pub fn asks(&self, tool: &str, arguments: &str) -> bool {
        if tool == RUN_COMMAND {
            return command::asks(self, arguments);
        }
        self.mode() == ApprovalMode::Ask && !self.allowed_for_session(tool)
    }

    /// Whether the call goes through the gate even in `auto` (a command with the network).
    pub fn always_asks(&self, tool: &str, arguments: &str) -> bool {
        tool == RUN_COMMAND && CommandCall::from_arguments(arguments).network
    }

    /// Decides about a call that needs approval.
    pub async fn gate(
        &self,
        request: ApprovalRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Gate {
        if request.name == RUN_COMMAND {
            return command::gate(self, request, events, cancel).await;
        }
        let tool = request.name.clone();
        // Configuration (an AGENTS.md) asks in every mode; a yes to the tool does not cover it.
        let configuration = request.configuration;
        match self.mode() {
            ApprovalMode::Auto if !configuration => return Gate::Run { asked: false },
            ApprovalMode::ReadOnly => return refusal(&tool, READ_ONLY),
            ApprovalMode::Ask if !configuration && !self.asks(&tool, &request.arguments) => {
                return Gate::Run { asked: false };
            }
            ApprovalMode::Auto | ApprovalMode::Ask => {}
        }
        let Some(asker) = &self.asker else {
            return refusal(
                &tool,
                if configuration {
                    CONFIGURATION_HEADLESS
                } else {
                    ASK_HEADLESS
                },
            );
        };
        let decision = match self.ask(asker, request, events, cancel).await {
            Ok(decision) => decision,
            Err(gate) => return gate,
        };
        match decision {
            // Prefixes are offered for commands only: a yes to this call alone.
            Decision::Approve | Decision::ApprovePrefixes(_) => Gate::Run { asked: true },
            Decision::ApproveTool => {
                if let Ok(mut allowed) = self.allowed.lock() {
                    allowed.insert(tool);
                }
                Gate::Run { asked: true }
            }
            Decision::Deny(reason) => denied(&tool, &reason),
        }
    }

    /// A person's answer to `request`, or the gate when the turn is interrupted first.
    async fn ask(
        &self,
        asker: &Arc<dyn Asker>,
        request: ApprovalRequest,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Decision, Gate> {
        let tool = request.name.clone();
        let interrupted = |error: &str| {
            let observation = json!({"ok": false, "tool": tool, "error": error, "denied": true});
            Gate::Refused(observation, CallOutcome::Interrupted)
        };
        if cancel.is_cancelled() {
            return Err(interrupted("not run: the turn was interrupted"));
        }
        if let Some(hooks) = &self.hooks {
            super::hook_notify::notify(
                hooks,
                "permission_prompt",
                format!("MiniClaw needs your permission to use {tool}"),
                events,
            );
        }
        tokio::select! {
            // An interrupt wins over an answer that arrives at the same moment.
            biased;
            () = cancel.cancelled() => Err(interrupted("denied by the user: interrupted")),
            d = asker.ask(request, events) => Ok(d),
        }
    }
}

/// A no from the person, with their reason (maybe empty).
fn denied(tool: &str, reason: &str) -> Gate {
    let reason = reason.trim();
    let error = if reason.is_empty() {
        "denied by the user".to_string()
    } else {
        format!("denied by the user: {reason}")
    };
    let observation = json!({"ok": false, "tool": tool, "error": error, "denied": true});
    let reason = reason.to_string();
    Gate::Refused(observation, CallOutcome::Denied { reason })
}

/// Why a call did not run in the read-only mode.
const READ_ONLY: &str = "refused: MiniClaw is in read-only mode, so calls that change files, \
     run commands or reach the network do not run (the person can change the mode with \
     /approval or Shift+Tab)";

/// Why a call that asks did not run in headless mode.
const ASK_HEADLESS: &str = "denied: the approval mode is `ask` and there is no one to ask in \
     headless mode (run with --approval auto to let such calls run)";

/// Why a write to configuration did not run in headless mode, whatever the approval mode.
const CONFIGURATION_HEADLESS: &str = "denied: AGENTS.md is configuration (it joins the system \
     prompt of later sessions), so writing it needs a person's yes in every approval mode, and \
     there is no one to ask in headless mode";

/// A call that did not run for want of approval: its observation says so.
fn refusal(tool: &str, error: &str) -> Gate {
    Gate::Refused(
        json!({"ok": false, "tool": tool, "error": error, "denied": true}),
        CallOutcome::Refused {
            why: error.to_string(),
            by: RefusedBy::Approval,
        },
    )
}

/// The diff the approval dialog shows for `call`: what it would change in a file (`None`: the
/// tool does not say, or the call would fail). The file is read and diffed off the runtime.
pub(super) async fn preview_diff(
    registry: &Arc<ToolRegistry>,
    sandbox: &Arc<Sandbox>,
    call: &ToolCall,
) -> Option<String> {
    let (registry, sandbox) = (registry.clone(), sandbox.clone());
    let (name, arguments) = (call.function.name.clone(), call.function.arguments.clone());
    let work = move || {
        registry
            .preview(&name, &arguments, &sandbox)
            .and_then(Result::ok)
            .map(|change| change.diff())
    };
    off_runtime(work).await.unwrap_or_else(|e| {
        // Asked without a diff, as for a tool that shows none.
        tracing::warn!(error = %e, "the approval diff could not be made");
        None
    })
}

/// What `call` will change in a file, as the conversation shows it once it ran (`None`: the
/// tool does not say, or the call would fail). Read just before the call runs, off the runtime,
/// so it is the change the call makes.
pub(super) async fn planned_diff(
    registry: &Arc<ToolRegistry>,
    sandbox: &Arc<Sandbox>,
    call: &ToolCall,
) -> Option<crate::diff::FileDiff> {
    let (registry, sandbox) = (registry.clone(), sandbox.clone());
    let (name, arguments) = (call.function.name.clone(), call.function.arguments.clone());
    let work = move || {
        registry
            .preview(&name, &arguments, &sandbox)
            .and_then(Result::ok)
            .map(|change| {
                crate::diff::FileDiff::new(
                    &change.path,
                    change.before.as_deref(),
                    Some(&change.after),
                )
            })
    };
    off_runtime(work).await.unwrap_or_else(|e| {
        tracing::warn!(error = %e, "the change of a call could not be told");
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers every question with `answer`, counting the questions.
    struct Person {
        answer: Decision,
        asked: Mutex<Vec<ApprovalRequest>>,
    }

    impl Asker for Person {
        fn ask<'a>(
            &'a self,
            request: ApprovalRequest,
            _events: &'a EventSink,
        ) -> BoxFuture<'a, Decision> {
            self.asked.lock().unwrap().push(request);
            Box::pin(async move { self.answer.clone() })
        }
    }

    fn person(answer: Decision) -> Arc<Person> {
        Arc::new(Person {
            answer,
            asked: Mutex::new(Vec::new()),
        })
    }

    fn request(configuration: bool) -> ApprovalRequest {
        ApprovalRequest {
            id: "c1".into(),
            name: "write_text_file".into(),
            arguments: r#"{"relative_path":"AGENTS.md","content":"x"}"#.into(),
            diff: Some("+x".into()),
            position: 1,
            of: 1,
            configuration,
            command: None,
        }
    }

    fn run(gate: &Approvals, request: ApprovalRequest) -> Gate {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(gate.gate(request, &EventSink::discard(), &CancellationToken::new()))
    }

    /// The error the model is told, and how the call ended.
    fn refused_with(gate: Gate) -> (String, CallOutcome) {
        match gate {
            Gate::Refused(v, outcome) => {
                assert_eq!(v["denied"], true);
                (v["error"].as_str().unwrap().to_string(), outcome)
            }
            Gate::Run { .. } => panic!("it ran"),
        }
    }

    #[test]
    fn configuration_asks_even_in_auto_and_a_no_keeps_it_from_running() {
        let no = person(Decision::Deny("not that".into()));
        let gate = Approvals::new(ApprovalMode::Auto, Some(no.clone()));
        assert!(matches!(
            run(&gate, request(false)),
            Gate::Run { asked: false }
        ));
        assert!(
            no.asked.lock().unwrap().is_empty(),
            "an ordinary write runs in auto"
        );
        let (error, outcome) = refused_with(run(&gate, request(true)));
        assert_eq!(error, "denied by the user: not that");
        assert_eq!(
            outcome,
            CallOutcome::Denied {
                reason: "not that".into()
            }
        );
        let asked = no.asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert!(asked[0].configuration && asked[0].diff.is_some());
    }

    #[test]
    fn a_yes_to_the_tool_does_not_cover_configuration() {
        let always = person(Decision::ApproveTool);
        let gate = Approvals::new(ApprovalMode::Ask, Some(always.clone()));
        assert!(matches!(
            run(&gate, request(false)),
            Gate::Run { asked: true }
        ));
        assert!(matches!(
            run(&gate, request(false)),
            Gate::Run { asked: false }
        ));
        assert!(matches!(
            run(&gate, request(true)),
            Gate::Run { asked: true }
        ));
        assert!(matches!(
            run(&gate, request(true)),
            Gate::Run { asked: true }
        ));
        assert_eq!(
            always.asked.lock().unwrap().len(),
            3,
            "configuration asked each time"
        );
    }

    #[test]
    fn read_only_refuses_and_headless_denies_configuration_in_every_mode() {
        let yes = person(Decision::Approve);
        let gate = Approvals::new(ApprovalMode::ReadOnly, Some(yes.clone()));
        let (error, outcome) = refused_with(run(&gate, request(true)));
        assert!(error.contains("read-only"));
        assert!(matches!(
            outcome,
            CallOutcome::Refused {
                by: RefusedBy::Approval,
                ..
            }
        ));
        assert!(yes.asked.lock().unwrap().is_empty());
        for mode in ApprovalMode::ALL {
            let headless = Approvals::new(mode, None);
            let (error, outcome) = refused_with(run(&headless, request(true)));
            assert!(outcome.is_denied(), "{outcome:?}");
            if mode == ApprovalMode::ReadOnly {
                assert!(error.contains("read-only"), "{error}");
            } else {
                assert!(
                    error.contains("AGENTS.md is configuration"),
                    "{mode:?}: {error}"
                );
            }
        }
    }

    #[test]
    fn an_interrupt_while_asking_ends_the_call_interrupted() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let never = Arc::new(PendingAnswers::default());
        let gate = Approvals::new(ApprovalMode::Ask, Some(never));
        let cancel = CancellationToken::new();
        cancel.cancel();
        let gated = rt.block_on(gate.gate(request(false), &EventSink::discard(), &cancel));
        let (error, outcome) = refused_with(gated);
        assert_eq!(error, "not run: the turn was interrupted");
        assert_eq!(outcome, CallOutcome::Interrupted);
    }
}
