//! `--output-format stream-json`: each agent event as one JSON object on one line.
//!
//! A wire enum of its own rather than serde derives on [`AgentEvent`]: the lines are a contract
//! with scripts, so they should not change shape when the agent's events are reorganised, and
//! they want a form the in-process events do not have — a flat `"type"` tag, a sub-agent's event
//! with a `"parent_id"` beside its fields instead of boxed inside another, tool arguments as
//! JSON, durations in milliseconds, outcomes as snake_case names. It also keeps `events.rs`, a
//! leaf every layer imports, free of wire concerns. It borrows from the event: a tool's result
//! (up to megabytes) is written without being copied.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::agent::{AgentEvent, AgentState};
use crate::events::{PlanEvent, StepEnd};
use crate::llm::Usage;
use crate::llm::prices::{Cost, Spend};

/// One event as it goes on the wire.
#[derive(Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum WireEvent<'a> {
    /// `{"type":"turn_started","prompt":...}`
    TurnStarted {
        /// What the person asked.
        prompt: &'a str,
    },
    /// `{"type":"files_attached","mentions":["notes.md"]}`
    FilesAttached {
        /// The `@` mentions whose files the prompt carries, as written after `@`.
        mentions: &'a [String],
    },
    /// `{"type":"state","state":"thinking|acting"}`
    State {
        /// What the agent is doing.
        state: &'static str,
    },
    /// `{"type":"step_started","step":1,"max":6}`
    StepStarted {
        /// 1-based step number.
        step: usize,
        /// The step limit.
        max: usize,
    },
    /// `{"type":"reasoning_delta","text":...}`
    ReasoningDelta {
        /// A piece of the reasoning.
        text: &'a str,
    },
    /// `{"type":"content_delta","text":...}`
    ContentDelta {
        /// A piece of the step's text (a thought, or the answer).
        text: &'a str,
    },
    /// `{"type":"step_finished","end":"thought|answer"}`: the step's text was a thought (calls
    /// follow) or the answer.
    StepFinished {
        /// `thought` or `answer`.
        end: &'static str,
    },
    /// `{"type":"tool_call_started","id":...,"name":...,"arguments":{...}}`
    ToolCallStarted {
        /// The call id.
        id: &'a str,
        /// The tool.
        name: &'a str,
        /// The arguments: parsed JSON when they parse, else the string the model wrote.
        arguments: Value,
    },
    /// `{"type":"tool_output_delta","id":...,"text":...}`
    ToolOutputDelta {
        /// The call id.
        id: &'a str,
        /// Output of the running tool.
        text: &'a str,
    },
    /// `{"type":"tool_finished","id":...,"name":...,"result":{...},"outcome":"ok",
    /// "approved":false,"duration_ms":3}`
    ToolFinished {
        /// The call id.
        id: &'a str,
        /// The tool.
        name: &'a str,
        /// The observation sent to the model.
        result: &'a Value,
        /// `ok`, `failed`, `denied` (by the person), `refused` (by a rule) or `interrupted`.
        outcome: &'static str,
        /// Whether a person said yes to it first.
        approved: bool,
        /// How long it ran.
        duration_ms: Option<u64>,
    },
    /// `{"type":"retrying","attempt":2,"max_attempts":5,"delay_ms":500,"reason":...}`
    Retrying {
        /// The attempt about to start.
        attempt: u32,
        /// The most attempts there will be.
        max_attempts: u32,
        /// How long until it starts.
        delay_ms: u64,
        /// What went wrong.
        reason: &'a str,
        /// Why, by name (`rate_limited`, `server_error`, `network`, `no_data`, `stream_cut`).
        cause: &'static str,
        /// The HTTP status of a server error.
        #[serde(skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// What arrived of the step is dropped: the request starts again.
        restarts: bool,
    },
    /// `{"type":"queued","waited_ms":45000,"started":false}`: the model server holds the
    /// request in its queue (one line per keep-alive; `started` once the answer begins).
    Queued {
        /// How long it has waited.
        waited_ms: u64,
        /// The wait is over.
        started: bool,
    },
    /// `{"type":"error","message":...}`
    Error {
        /// What went wrong and what to do.
        message: &'a str,
    },
    /// `{"type":"turn_finished","outcome":"answered","cause":null,"usage":{...},"last_usage":{...},
    /// "cost":{"usd":0.0012,"cny":null,"unpriced_responses":0}}`
    TurnFinished {
        /// `answered`, `step_limit`, `interrupted` or `failed`.
        outcome: &'static str,
        /// Why it failed: `missing_key`, `refused_key`, `network`, `server`, `cut`, `request`,
        /// `plan` or `unrecorded` (`null` unless it failed).
        cause: Option<&'static str>,
        /// The turn's tokens added up.
        usage: Option<Usage>,
        /// The last request's tokens.
        last_usage: Option<Usage>,
        /// The turn's responses' costs added up (left out when no response reported tokens).
        #[serde(skip_serializing_if = "Option::is_none")]
        cost: Option<Spend>,
    },
    /// `{"type":"response_cost","cost":{"currency":"USD","amount":0.0000225}}`: what a model
    /// response cost when it finished (`"cost":null`: its model has no price).
    ResponseCost {
        /// The amount and its currency.
        cost: Option<WireCost>,
    },
    /// `{"type":"context_usage","used":1200,"budget":100000,"compact_at":80000}`
    ContextUsage {
        /// Prompt tokens of the last request.
        used: usize,
        /// The context budget.
        budget: usize,
        /// The prompt tokens at which the session is compacted (`null`: never by itself).
        compact_at: Option<usize>,
    },
    /// `{"type":"compacting","turns":126,"automatic":true}`: a summary is being written.
    Compacting {
        /// The turns it will replace.
        turns: usize,
        /// Whether the context budget set it off.
        automatic: bool,
    },
    /// `{"type":"compacted","turns":126,"automatic":true,"summary_tokens":900,"usage":{...}}`
    Compacted {
        /// The turns the summary replaced.
        turns: usize,
        /// Whether the context budget set it off.
        automatic: bool,
        /// The summary's size in estimated tokens.
        summary_tokens: usize,
        /// The summary request's tokens.
        usage: Option<Usage>,
    },
    /// `{"type":"compaction_failed","reason":...,"automatic":true}`: older turns are trimmed
    /// instead.
    CompactionFailed {
        /// What went wrong.
        reason: &'a str,
        /// Whether the context budget set it off.
        automatic: bool,
    },
    /// `{"type":"compaction_interrupted"}`: `/compact` was stopped; nothing changed.
    CompactionInterrupted,
    /// `{"type":"context_trimmed","dropped_turns":3,"shortened":2}`
    ContextTrimmed {
        /// Whole earlier turns left out of the request.
        dropped_turns: usize,
        /// Tool outputs shortened.
        shortened: usize,
    },
    /// `{"type":"history_cleared"}`
    HistoryCleared,
    /// `{"type":"allowed_by_rules","id":...,"rules":["cargo test"]}`: a command runs unasked
    /// because these remembered rules cover it.
    AllowedByRules {
        /// The call id.
        id: &'a str,
        /// The rules, as written.
        rules: Vec<String>,
    },
    /// `{"type":"notice","text":...}`
    Notice {
        /// The notice.
        text: &'a str,
    },
    /// `{"type":"step_limit","max_steps":6}`: the turn used its steps without an answer.
    StepLimit {
        /// The steps a turn may take.
        max_steps: usize,
    },
    /// `{"type":"session_opened","title":...,"notice":...}` (its turns are not told again)
    SessionOpened {
        /// The session's title.
        title: Option<&'a str>,
        /// What happened.
        notice: &'a str,
    },
    /// `{"type":"jobs","ids":[...]}`: the session's background jobs, oldest first.
    Jobs {
        /// Job ids.
        ids: Vec<u32>,
    },
    /// `{"type":"instructions_read","id":...,"file":"src/AGENTS.md","bytes":812,"truncated":false}`:
    /// a subfolder's instructions joined the call's observation for the rest of the turn.
    InstructionsRead {
        /// The call's id.
        id: &'a str,
        /// The file, workspace-relative.
        file: &'a str,
        /// Its size.
        bytes: u64,
        /// Whether only its start was used.
        truncated: bool,
    },
    /// `{"type":"hooks","events":["PreToolUse",...]}`: the configured hooks' events.
    Hooks {
        /// Each hook's event.
        events: Vec<&'static str>,
    },
    /// `{"type":"session_renamed","title":...}`
    SessionRenamed {
        /// The new title.
        title: &'a str,
    },
    /// `{"type":"approval_requested","id":...,"name":...}` (not sent by headless runs, which
    /// cannot ask)
    ApprovalRequested {
        /// The call's id.
        id: &'a str,
        /// The tool.
        name: &'a str,
    },
    /// `{"type":"file_edited","id":...,"path":...,"added":1,"removed":3}`: what a call that
    /// succeeded changed in a file (sent before its `tool_finished`).
    FileEdited {
        /// The call id.
        id: &'a str,
        /// The file, relative to the workspace.
        path: &'a str,
        /// Lines added.
        added: usize,
        /// Lines removed.
        removed: usize,
    },
    /// `{"type":"file_changes","diff":...}`: what the session's turns changed.
    FileChanges {
        /// A unified diff.
        diff: &'a str,
    },
    /// `{"type":"instructions_diff","diff":...}`: how AGENTS.md changed since the session
    /// last read it.
    InstructionsDiff {
        /// A unified diff.
        diff: &'a str,
    },
    /// `{"type":"undo_conflict","diff":...}`: files changed since the turn to undo.
    UndoConflict {
        /// A unified diff.
        diff: &'a str,
    },
    /// `{"type":"sessions","ids":[...]}`: the archived sessions, newest first.
    Sessions {
        /// Their ids.
        ids: Vec<&'a str>,
    },
    /// `{"type":"mcp_servers","servers":[{"name":...,"state":"ready","tools":[...],"last_error":...}]}`
    McpServers {
        /// Every MCP server as it is now.
        servers: Vec<WireMcpServer<'a>>,
    },
    /// `{"type":"plan_planning","task":...,"model":"deepseek-v4-pro"}`
    PlanPlanning {
        /// The task being planned.
        task: &'a str,
        /// The planner's model.
        model: &'a str,
    },
    /// `{"type":"plan_proposed","items":[...]}`
    PlanProposed {
        /// The plan's items, in order.
        items: &'a [String],
    },
    /// `{"type":"plan_executing","items":[...],"model":"deepseek-flash"}`
    PlanExecuting {
        /// The items being carried out, in order.
        items: &'a [String],
        /// The executor's model.
        model: &'a str,
    },
    /// `{"type":"plan_item_started","index":0}` (0-based)
    PlanItemStarted {
        /// Which item.
        index: usize,
    },
    /// `{"type":"plan_item_finished","index":0,"state":"done|failed|interrupted","reason":...}`
    PlanItemFinished {
        /// Which item.
        index: usize,
        /// How it ended.
        state: &'static str,
        /// Why it failed.
        reason: Option<&'a str>,
    },
    /// `{"type":"plan_finished","done":2,"total":3,"stopped_at":1}`
    PlanFinished {
        /// Items done.
        done: usize,
        /// Items in the plan.
        total: usize,
        /// The item that stopped the run (0-based), if one did.
        stopped_at: Option<usize>,
    },
}

/// One MCP server on the wire.
#[derive(Debug, Serialize)]
pub struct WireMcpServer<'a> {
    /// Its name.
    pub name: &'a str,
    /// `starting`, `ready`, `failed` or `disabled`.
    pub state: &'static str,
    /// Its tools' names as the model sees them.
    pub tools: Vec<&'a str>,
    /// Why it failed last.
    pub last_error: Option<&'a str>,
}

/// An amount of money on the wire.
#[derive(Debug, Serialize)]
pub struct WireCost {
    /// `USD` or `CNY`.
    pub currency: &'static str,
    /// In units of the currency (dollars, yuan).
    pub amount: f64,
}

impl From<&Cost> for WireCost {
    fn from(cost: &Cost) -> Self {
        Self {
            currency: cost.currency.code(),
            amount: cost.amount.units(),
        }
    }
}

/// One line: the event, with the delegating call's id when a sub-agent sent it.
#[derive(Debug, Serialize)]
pub struct WireLine<'a> {
    /// The event's own fields, `"type"` first.
    #[serde(flatten)]
    pub event: WireEvent<'a>,
    /// For a sub-agent's event: the id of the tool call that started the sub-agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_id: Option<&'a str>,
}

/// Tool arguments as JSON when they parse, else as the string they are (a model may write
/// broken JSON; the line must still say what it wrote).
pub fn arguments_value(arguments: &str) -> Value {
    serde_json::from_str(arguments).unwrap_or_else(|_| Value::String(arguments.to_string()))
}

/// Milliseconds, saturating (a duration never comes near the limit).
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn state_name(state: AgentState) -> &'static str {
    match state {
        AgentState::Thinking => "thinking",
        AgentState::Acting => "acting",
    }
}

/// The line for `event`. A sub-agent's events name the call they work for; a sub-agent of a
/// sub-agent reports under the outermost call, as the event stream does.
pub fn line(event: &AgentEvent) -> WireLine<'_> {
    match event {
        AgentEvent::Nested { parent_id, event } => WireLine {
            parent_id: Some(parent_id),
            ..line(event)
        },
        other => WireLine {
            event: wire_event(other),
            parent_id: None,
        },
    }
}

/// The line for `event`, a `turn_finished` one with the turn's cost (`turn_cost`, as the
/// transcript added up its `response_cost` events; `None`, or no response billed: left out).
pub fn line_with_turn_cost(event: &AgentEvent, turn_cost: Option<Spend>) -> WireLine<'_> {
    let mut line = line(event);
    if let WireEvent::TurnFinished { cost, .. } = &mut line.event {
        *cost = turn_cost.filter(|c| !c.is_empty());
    }
    line
}

/// A plan event's line.
fn plan_event(event: &PlanEvent) -> WireEvent<'_> {
    match event {
        PlanEvent::Planning { task, model } => WireEvent::PlanPlanning { task, model },
        PlanEvent::Proposed { items, .. } => WireEvent::PlanProposed { items },
        PlanEvent::Executing { items, model } => WireEvent::PlanExecuting { items, model },
        PlanEvent::ItemStarted { index } => WireEvent::PlanItemStarted { index: *index },
        PlanEvent::ItemFinished {
            index,
            state,
            reason,
        } => WireEvent::PlanItemFinished {
            index: *index,
            state: state.name(),
            reason: reason.as_deref(),
        },
        PlanEvent::Finished(summary) => WireEvent::PlanFinished {
            done: summary.done,
            total: summary.total,
            stopped_at: summary.stopped.as_ref().map(|(i, ..)| *i),
        },
    }
}

fn wire_event(event: &AgentEvent) -> WireEvent<'_> {
    match event {
        AgentEvent::Plan(plan) => plan_event(plan),
        AgentEvent::State(state) => WireEvent::State {
            state: state_name(*state),
        },
        AgentEvent::TurnStarted { prompt } => WireEvent::TurnStarted { prompt },
        AgentEvent::FilesAttached(mentions) => WireEvent::FilesAttached { mentions },
        AgentEvent::StepStarted { step, max } => WireEvent::StepStarted {
            step: *step,
            max: *max,
        },
        AgentEvent::ReasoningDelta(text) => WireEvent::ReasoningDelta { text },
        AgentEvent::ContentDelta(text) => WireEvent::ContentDelta { text },
        AgentEvent::StepFinished(end) => WireEvent::StepFinished {
            end: match end {
                StepEnd::Thought => "thought",
                StepEnd::Answer => "answer",
            },
        },
        AgentEvent::ToolCallStarted {
            id,
            name,
            arguments,
        } => WireEvent::ToolCallStarted {
            id,
            name,
            arguments: arguments_value(arguments),
        },
        AgentEvent::ToolOutputDelta { id, text } => WireEvent::ToolOutputDelta { id, text },
        AgentEvent::FileEdited { id, diff } => WireEvent::FileEdited {
            id,
            path: &diff.path,
            added: diff.added,
            removed: diff.removed,
        },
        AgentEvent::ToolFinished {
            id,
            name,
            result,
            outcome,
            approved,
            duration,
        } => WireEvent::ToolFinished {
            id,
            name,
            result,
            outcome: outcome.name(),
            approved: *approved,
            duration_ms: duration.map(millis),
        },
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            reason,
            cause,
            restarts,
        } => WireEvent::Retrying {
            attempt: *attempt,
            max_attempts: *max_attempts,
            delay_ms: millis(*delay),
            reason,
            cause: cause.name(),
            status: match cause {
                crate::llm::RetryCause::ServerError(status) => Some(*status),
                _ => None,
            },
            restarts: *restarts,
        },
        // `line` unwraps these; one met here (a caller going around it) keeps its inner event.
        AgentEvent::Nested { event, .. } => wire_event(event),
        AgentEvent::Error { message } => WireEvent::Error { message },
        AgentEvent::Queued { waited, started } => WireEvent::Queued {
            waited_ms: millis(*waited),
            started: *started,
        },
        AgentEvent::TurnFinished {
            outcome,
            usage,
            last_usage,
        } => WireEvent::TurnFinished {
            outcome: outcome.name(),
            cause: outcome.cause().map(|c| c.name()),
            usage: *usage,
            last_usage: *last_usage,
            cost: None,
        },
        AgentEvent::ResponseCost(cost) => WireEvent::ResponseCost {
            cost: cost.as_ref().map(WireCost::from),
        },
        AgentEvent::ContextUsage {
            used,
            budget,
            compact_at,
        } => WireEvent::ContextUsage {
            used: *used,
            budget: *budget,
            compact_at: *compact_at,
        },
        AgentEvent::Compacting { turns, automatic } => WireEvent::Compacting {
            turns: *turns,
            automatic: *automatic,
        },
        AgentEvent::Compacted(c) => WireEvent::Compacted {
            turns: c.turns,
            automatic: c.automatic,
            summary_tokens: c.summary_tokens,
            usage: c.usage,
        },
        AgentEvent::CompactionFailed { reason, automatic } => WireEvent::CompactionFailed {
            reason,
            automatic: *automatic,
        },
        AgentEvent::CompactionInterrupted => WireEvent::CompactionInterrupted,
        AgentEvent::ContextTrimmed {
            dropped_turns,
            shortened,
        } => WireEvent::ContextTrimmed {
            dropped_turns: *dropped_turns,
            shortened: *shortened,
        },
        AgentEvent::HistoryCleared => WireEvent::HistoryCleared,
        AgentEvent::Notice(text) => WireEvent::Notice { text },
        AgentEvent::AllowedByRules { id, rules } => WireEvent::AllowedByRules {
            id,
            rules: rules.iter().map(ToString::to_string).collect(),
        },
        AgentEvent::StepLimitReached { max } => WireEvent::StepLimit { max_steps: *max },
        AgentEvent::SessionOpened { title, notice, .. } => WireEvent::SessionOpened {
            title: title.as_deref(),
            notice,
        },
        // A headless run opens its session before its turn: these come only to the UI.
        AgentEvent::SessionLoaded { title, .. } => WireEvent::SessionOpened {
            title: title.as_deref(),
            notice: "",
        },
        AgentEvent::SessionUnavailable(message) => WireEvent::Error { message },
        AgentEvent::SessionRenamed(title) => WireEvent::SessionRenamed { title },
        AgentEvent::FileChanges(diff) => WireEvent::FileChanges { diff },
        AgentEvent::InstructionsDiff(diff) => WireEvent::InstructionsDiff { diff },
        AgentEvent::UndoConflict(diff) => WireEvent::UndoConflict { diff },
        AgentEvent::ApprovalRequested(request) => WireEvent::ApprovalRequested {
            id: &request.id,
            name: &request.name,
        },
        AgentEvent::Sessions(list) => WireEvent::Sessions {
            ids: list.iter().map(|s| s.id.as_str()).collect(),
        },
        AgentEvent::Jobs(jobs) => WireEvent::Jobs {
            ids: jobs.iter().map(|j| j.id).collect(),
        },
        AgentEvent::InstructionsRead {
            id,
            file,
            bytes,
            truncated,
        } => WireEvent::InstructionsRead {
            id,
            file,
            bytes: *bytes,
            truncated: *truncated,
        },
        AgentEvent::Hooks(hooks) => WireEvent::Hooks {
            events: hooks.iter().map(|h| h.event.name()).collect(),
        },
        AgentEvent::McpServers(servers) => WireEvent::McpServers {
            servers: servers
                .iter()
                .map(|s| WireMcpServer {
                    name: &s.name,
                    state: s.state.name(),
                    tools: s.tools.iter().map(|(name, _)| name.as_str()).collect(),
                    last_error: s.last_error.as_deref(),
                })
                .collect(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnOutcome;
    use serde_json::json;

    fn wire(event: &AgentEvent) -> Value {
        serde_json::to_value(line(event)).unwrap()
    }

    #[test]
    fn costs_go_on_their_own_lines_and_the_turns_on_its_end() {
        use crate::llm::prices::{Cost, Money};
        let cost = Cost {
            currency: crate::settings::Currency::Cny,
            amount: Money::from_picos(330_000_000),
        };
        assert_eq!(
            wire(&AgentEvent::ResponseCost(Some(cost))),
            json!({"type": "response_cost", "cost": {"currency": "CNY", "amount": 0.00033}})
        );
        assert_eq!(
            wire(&AgentEvent::ResponseCost(None)),
            json!({"type": "response_cost", "cost": null})
        );
        let end = AgentEvent::TurnFinished {
            outcome: TurnOutcome::Answered,
            usage: None,
            last_usage: None,
        };
        let with = |spend: Spend| serde_json::to_value(line_with_turn_cost(&end, Some(spend)));
        let mut spend = Spend::default();
        assert_eq!(with(spend).unwrap().get("cost"), None);
        spend.add(None);
        assert_eq!(
            with(spend).unwrap()["cost"],
            json!({"usd": null, "cny": null, "unpriced_responses": 1})
        );
        spend.add(Some(&cost));
        assert_eq!(with(spend).unwrap()["cost"]["cny"], 0.00033);
        // Another event is left as it is.
        assert_eq!(
            serde_json::to_value(line_with_turn_cost(
                &AgentEvent::HistoryCleared,
                Some(spend)
            ))
            .unwrap(),
            json!({"type": "history_cleared"})
        );
    }

    #[test]
    fn events_become_flat_tagged_objects() {
        assert_eq!(
            wire(&AgentEvent::StepStarted { step: 1, max: 6 }),
            json!({"type": "step_started", "step": 1, "max": 6})
        );
        assert_eq!(
            wire(&AgentEvent::HistoryCleared),
            json!({"type": "history_cleared"})
        );
        // A file change says which file and how many lines, not the lines themselves.
        assert_eq!(
            wire(&AgentEvent::FileEdited {
                id: "c1".into(),
                diff: crate::diff::FileDiff::new("a.txt", Some("one\ntwo\n"), Some("one\n")),
            }),
            json!({"type": "file_edited", "id": "c1", "path": "a.txt", "added": 0, "removed": 1})
        );
        assert_eq!(
            wire(&AgentEvent::State(AgentState::Acting)),
            json!({"type": "state", "state": "acting"})
        );
        assert_eq!(
            wire(&AgentEvent::TurnFinished {
                outcome: TurnOutcome::StepLimit,
                usage: None,
                last_usage: None
            }),
            json!({"type": "turn_finished", "outcome": "step_limit", "cause": null, "usage": null, "last_usage": null})
        );
        assert_eq!(
            wire(&AgentEvent::TurnFinished {
                outcome: TurnOutcome::Failed(crate::events::FailCause::MissingKey),
                usage: None,
                last_usage: None
            })["cause"],
            "missing_key"
        );
        assert_eq!(
            wire(&AgentEvent::StepFinished(StepEnd::Thought)),
            json!({"type": "step_finished", "end": "thought"})
        );
        assert_eq!(
            wire(&AgentEvent::Retrying {
                attempt: 2,
                max_attempts: 5,
                delay: Duration::from_millis(1500),
                reason: "HTTP 429".into(),
                cause: crate::llm::RetryCause::RateLimited,
                restarts: false,
            }),
            json!({"type": "retrying", "attempt": 2, "max_attempts": 5, "delay_ms": 1500, "reason": "HTTP 429", "cause": "rate_limited", "restarts": false})
        );
        assert_eq!(
            wire(&AgentEvent::Retrying {
                attempt: 2,
                max_attempts: 5,
                delay: Duration::ZERO,
                reason: "HTTP 503".into(),
                cause: crate::llm::RetryCause::ServerError(503),
                restarts: false,
            })["status"],
            503
        );
    }

    #[test]
    fn compactions_say_how_many_turns_and_how_big_the_summary_not_the_summary_itself() {
        let done = AgentEvent::Compacted(crate::events::Compaction {
            turns: 126,
            automatic: true,
            summary: "the summary's words".into(),
            summary_tokens: 900,
            usage: None,
        });
        assert_eq!(
            wire(&done),
            json!({"type": "compacted", "turns": 126, "automatic": true, "summary_tokens": 900, "usage": null})
        );
        assert_eq!(
            wire(&AgentEvent::Compacting {
                turns: 126,
                automatic: false
            }),
            json!({"type": "compacting", "turns": 126, "automatic": false})
        );
        assert_eq!(
            wire(&AgentEvent::ContextTrimmed {
                dropped_turns: 3,
                shortened: 1
            }),
            json!({"type": "context_trimmed", "dropped_turns": 3, "shortened": 1})
        );
        assert_eq!(
            wire(&AgentEvent::ContextUsage {
                used: 10,
                budget: 100,
                compact_at: None
            }),
            json!({"type": "context_usage", "used": 10, "budget": 100, "compact_at": null})
        );
    }

    #[test]
    fn arguments_are_json_when_they_parse_and_text_otherwise() {
        let call = |arguments: &str| AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "list_files".into(),
            arguments: arguments.into(),
        };
        assert_eq!(
            wire(&call(r#"{"relative_dir":"src"}"#))["arguments"],
            json!({"relative_dir": "src"})
        );
        assert_eq!(
            wire(&call("{\"cut")).get("arguments"),
            Some(&json!("{\"cut"))
        );
    }

    #[test]
    fn a_sub_agents_event_names_its_call_and_keeps_its_fields() {
        let finished = AgentEvent::ToolFinished {
            id: "s1".into(),
            name: "read_text_file".into(),
            result: json!({"ok": true, "content": "\u{1b}[2J"}).into(),
            outcome: crate::events::CallOutcome::Ok,
            approved: true,
            duration: Some(Duration::from_millis(7)),
        };
        let nested = AgentEvent::Nested {
            parent_id: "c1".into(),
            event: Box::new(finished),
        };
        let text = serde_json::to_string(&line(&nested)).unwrap();
        assert!(text.starts_with(r#"{"type":"tool_finished""#), "{text}");
        // JSON escapes control characters itself: the line holds no raw escape.
        assert!(
            !text.contains('\u{1b}') && text.contains("\\u001b[2J"),
            "{text}"
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["parent_id"], "c1");
        assert_eq!(value["duration_ms"], 7);
        assert_eq!(value["outcome"], "ok");
        assert_eq!(value["approved"], true);
        assert_eq!(value["result"]["ok"], true);
        assert_eq!(
            wire(&AgentEvent::ContentDelta("x".into())).get("parent_id"),
            None
        );
    }
}
