//! Tool-call dispatch for one step: the repeated-call guard, the per-step caps, read-only calls
//! run together and changing calls alone, each call's events and observation.

use std::time::Instant;

use futures::future::join_all;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::approvals::{Gate, planned_diff, preview_diff};
use super::budget::RequestBudget;
use super::turn::Agent;
use crate::approval::{ApprovalMode, ApprovalRequest};
use crate::events::{AgentEvent, CallOutcome, EventSink, RefusedBy};
use crate::llm::{ToolCall, text_protocol};
use crate::tools::ToolContext;
use crate::tools::sandbox::WriteKind;

/// A response's calls and what running them needs.
#[derive(Clone, Copy)]
struct StepCalls<'a> {
    calls: &'a [ToolCall],
    budget: &'a RequestBudget,
    events: &'a EventSink,
    cancel: &'a CancellationToken,
}

/// Calls run together, whether a person approved them, and what a lone changing call will
/// change in a file (told once it succeeded).
struct Batch {
    indices: Vec<usize>,
    asked: bool,
    planned: Option<crate::diff::FileDiff>,
}

impl Batch {
    /// The read-only calls gathered so far (leaving none), which nobody had to approve.
    fn taken(gathered: &mut Vec<usize>) -> Self {
        Self {
            indices: std::mem::take(gathered),
            asked: false,
            planned: None,
        }
    }
}

/// A call's observation (what the model reads) and how it ended (what the program reads).
pub(super) struct Observed {
    /// The JSON observation (the one the events carry).
    pub value: crate::events::Observation,
    /// How the call ended.
    pub outcome: CallOutcome,
    /// Whether a person said yes to it first.
    pub approved: bool,
    /// How long it ran (zero for a call that did not run; none for one the interrupt kept
    /// from starting).
    pub duration: Option<std::time::Duration>,
}

/// What the guard and the caps made of a response's calls.
struct Screened {
    /// The refused calls' observations (the rest are filled as they run).
    observations: Vec<Option<Observed>>,
    /// The calls that may run, in order.
    runnable: Vec<usize>,
    /// The calls refused as repeats (they count as made).
    repeated: Vec<usize>,
}

/// The error of a call the person's interrupt kept from starting.
const NOT_STARTED: &str = "not run: the person interrupted the turn before it started";

/// Every call's observation: a call that never got one (the turn was interrupted first) says so.
fn filled(observations: Vec<Option<Observed>>, calls: &[ToolCall]) -> Vec<Observed> {
    observations
        .into_iter()
        .zip(calls)
        .map(|(o, c)| {
            o.unwrap_or_else(|| Observed {
                value: json!({
                    "ok": false,
                    "tool": c.function.name,
                    "error": NOT_STARTED,
                })
                .into(),
                outcome: CallOutcome::Interrupted,
                approved: false,
                duration: None,
            })
        })
        .collect()
}

/// Reports a call that did not run as one that started and finished at once with `refused`.
fn report_refused(events: &EventSink, call: &ToolCall, refused: &Observed) {
    events.send(AgentEvent::ToolCallStarted {
        id: call.id.clone(),
        name: call.function.name.clone(),
        arguments: call.function.arguments.clone(),
    });
    events.send(AgentEvent::ToolFinished {
        id: call.id.clone(),
        name: call.function.name.clone(),
        result: refused.value.clone(),
        outcome: refused.outcome.clone(),
        approved: false,
        duration: refused.duration,
    });
}

/// More calls than this in one response are answered with an error instead of being run.
pub const MAX_CALLS_PER_STEP: usize = 32;

/// At most this many calls that start a sub-agent run per step; later ones are answered with an
/// error (each sub-agent makes several model requests, so they multiply quickly).
pub const MAX_AGENT_CALLS_PER_STEP: usize = 3;

impl Agent {
    /// Runs the calls of one response and returns their observations in call order, with
    /// whether each one ran (a refused call did not).
    /// Consecutive read-only calls run concurrently; a call that changes something, or that a
    /// person approved, runs alone; a refused call is reported in its place, so the reads
    /// before it and after it run as two batches.
    pub(super) async fn run_calls(
        &self,
        calls: &[ToolCall],
        previous_calls: &[(String, String)],
        budget: &RequestBudget,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> (Vec<Observed>, Vec<bool>) {
        let Screened {
            mut observations,
            runnable,
            repeated,
        } = self.screen(calls, previous_calls);
        // Calls that ask, counted up front so each is shown as "k of n".
        let asking: Vec<usize> = runnable
            .iter()
            .copied()
            .filter(|&i| {
                let (name, arguments) = (&calls[i].function.name, &calls[i].function.arguments);
                self.registry.needs_approval(name)
                    && (self.approvals.asks(name, arguments)
                        || self.writes_configuration(&calls[i]))
            })
            .collect();
        let mut batch: Vec<usize> = Vec::new();
        let step = StepCalls {
            calls,
            budget,
            events,
            cancel,
        };
        // In the model's order, so every view lists the calls as the model wrote them (a
        // saved session is told in that order too).
        for i in 0..calls.len() {
            if !runnable.contains(&i) {
                if observations[i].is_some() {
                    // What ran before it has started: the refusal comes after it.
                    self.run_batch(&step, Batch::taken(&mut batch), &mut observations)
                        .await;
                }
                if let Some(refused) = &observations[i] {
                    report_refused(events, &calls[i], refused);
                }
                continue;
            }
            // The person's PreToolUse hooks come first: a call they block is never asked about.
            if !cancel.is_cancelled()
                && let Some(blocked) = self.pre_tool_hook(&calls[i], events, cancel).await
            {
                self.run_batch(&step, Batch::taken(&mut batch), &mut observations)
                    .await;
                report_refused(events, &calls[i], &blocked);
                observations[i] = Some(blocked);
                continue;
            }
            let name = &calls[i].function.name;
            let mut asked = false;
            // In `auto` nothing asks but a write to configuration and a command with the
            // network: no flush, no preview, read-only calls stay together.
            if self.registry.needs_approval(name)
                && (self.approvals.mode() != ApprovalMode::Auto
                    || self.writes_configuration(&calls[i])
                    || self
                        .approvals
                        .always_asks(name, &calls[i].function.arguments))
            {
                if cancel.is_cancelled() {
                    // Interrupted: nothing more is asked (or run).
                    continue;
                }
                // Whatever ran before it has run: a preview then shows the file as it will be.
                self.run_batch(&step, Batch::taken(&mut batch), &mut observations)
                    .await;
                match self.approve(calls, i, &asking, events, cancel).await {
                    Err(refused) => {
                        observations[i] = Some(refused);
                        continue;
                    }
                    Ok(yes) => asked = yes,
                }
            }
            if self.registry.is_read_only(name) && !asked {
                batch.push(i);
                continue;
            }
            self.run_batch(&step, Batch::taken(&mut batch), &mut observations)
                .await;
            let mut planned = None;
            if !self.registry.is_read_only(name) {
                self.keep_before(&calls[i]).await;
                planned = planned_diff(&self.registry, &self.sandbox, &calls[i]).await;
            }
            self.run_batch(
                &step,
                Batch {
                    indices: vec![i],
                    asked,
                    planned,
                },
                &mut observations,
            )
            .await;
        }
        self.run_batch(
            &step,
            Batch {
                indices: batch,
                asked: false,
                planned: None,
            },
            &mut observations,
        )
        .await;
        let made = (0..calls.len())
            .map(|i| runnable.contains(&i) || repeated.contains(&i))
            .collect();
        // Every call with an observation was reported as it got it.
        let reported: Vec<bool> = observations.iter().map(Option::is_some).collect();
        let observed = filled(observations, calls);
        // A call the interrupt kept from starting is reported too, so every view lists every
        // call the model made, as a saved session does.
        for (i, o) in observed.iter().enumerate() {
            if !reported[i] {
                report_refused(events, &calls[i], o);
            }
        }
        (observed, made)
    }

    /// Applies the repeated-call guard and the per-step caps: the refused calls get their
    /// observation at once (reported in their turn as calls that finished), the rest may run.
    fn screen(&self, calls: &[ToolCall], previous_calls: &[(String, String)]) -> Screened {
        let mut screened = Screened {
            observations: calls.iter().map(|_| None).collect(),
            runnable: Vec::new(),
            repeated: Vec::new(),
        };
        let mut agents = 0;
        for (i, call) in calls.iter().enumerate() {
            let (name, args) = (&call.function.name, &call.function.arguments);
            let runs_agent = self.registry.runs_agent(name);
            let refusal = if let Some(problem) = text_protocol::broken_problem(call) {
                // A `<tool_call>` tag that could not be read: the model hears what was wrong.
                Some(problem)
            } else if self.registry.get(name).is_none() {
                // Refused now, not when it runs: a tool that appears meanwhile (an MCP server
                // coming up) must not run without having passed the approval gate.
                let known: Vec<String> = self.registry.iter().map(|t| t.schema().name).collect();
                Some(format!(
                    "unknown tool `{name}`; the tools are: {}",
                    known.join(", ")
                ))
            } else if i >= MAX_CALLS_PER_STEP {
                Some(format!(
                    "not run: more than {MAX_CALLS_PER_STEP} tool calls in one response; make fewer calls per step"
                ))
            } else if previous_calls
                .iter()
                .any(|(n, a)| n == name && same_arguments(a, args))
            {
                screened.repeated.push(i);
                Some("not run again: this exact call (same tool, same arguments) was made in the previous step; use its result above or try something different".to_string())
            } else if runs_agent && agents >= MAX_AGENT_CALLS_PER_STEP {
                Some(format!(
                    "not run: at most {MAX_AGENT_CALLS_PER_STEP} sub-agents run per step; make this call again in a later step if it is still needed"
                ))
            } else {
                agents += usize::from(runs_agent);
                None
            };
            match refusal {
                Some(error) => {
                    let refused = Observed {
                        value: json!({"ok": false, "tool": name, "error": error}).into(),
                        outcome: CallOutcome::Refused {
                            why: error,
                            by: RefusedBy::Guard,
                        },
                        approved: false,
                        duration: Some(std::time::Duration::ZERO),
                    };
                    screened.observations[i] = Some(refused);
                }
                None => screened.runnable.push(i),
            }
        }
        screened
    }

    /// Passes call `i` through the approval gate: whether a person said yes, or its
    /// observation when it may not run (reported as a call that finished at once).
    async fn approve(
        &self,
        calls: &[ToolCall],
        i: usize,
        asking: &[usize],
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<bool, Observed> {
        let call = &calls[i];
        let configuration = self.writes_configuration(call);
        let diff = if configuration
            || self
                .approvals
                .asks(&call.function.name, &call.function.arguments)
        {
            preview_diff(&self.registry, &self.sandbox, call).await
        } else {
            None
        };
        let request = ApprovalRequest {
            id: call.id.clone(),
            name: call.function.name.clone(),
            arguments: call.function.arguments.clone(),
            diff,
            position: asking.iter().position(|&a| a == i).map_or(1, |p| p + 1),
            of: asking.len().max(1),
            configuration,
            command: None,
        };
        let refused = match self.approvals.gate(request, events, cancel).await {
            Gate::Run { asked } => return Ok(asked),
            Gate::Refused(value, outcome) => Observed {
                value: value.into(),
                outcome,
                approved: false,
                duration: Some(std::time::Duration::ZERO),
            },
        };
        report_refused(events, call, &refused);
        Err(refused)
    }

    /// Whether the call writes configuration (an `AGENTS.md`): the sandbox decides, from the
    /// path the tool says it writes.
    fn writes_configuration(&self, call: &ToolCall) -> bool {
        self.registry
            .write_kind(&call.function.name, &call.function.arguments, &self.sandbox)
            == WriteKind::Instructions
    }

    /// Runs the calls at `indices` concurrently.
    async fn run_batch(
        &self,
        step: &StepCalls<'_>,
        batch: Batch,
        observations: &mut [Option<Observed>],
    ) {
        let StepCalls {
            calls,
            budget,
            events,
            cancel,
        } = *step;
        let Batch {
            indices,
            asked,
            planned,
        } = batch;
        let indices = &indices[..];
        if indices.is_empty() {
            return;
        }
        let delegator = Some(self.delegator(budget));
        let planned = &planned;
        let runs = indices.iter().map(|&i| {
            let call = &calls[i];
            let ctx = ToolContext {
                sandbox: self.sandbox.clone(),
                call_id: call.id.clone(),
                events: events.clone(),
                cancel: cancel.clone(),
                delegator: delegator.clone(),
                shown: Default::default(),
                keeper: self.change_keeper(),
            };
            events.send(AgentEvent::ToolCallStarted {
                id: call.id.clone(),
                name: call.function.name.clone(),
                arguments: call.function.arguments.clone(),
            });
            async move {
                let started = Instant::now();
                let (mut result, outcome) = self
                    .registry
                    .run(&call.function.name, &call.function.arguments, &ctx)
                    .await;
                // A person's yes is kept with the observation: the model is told, and a saved
                // session from before outcomes were kept still shows it.
                if let (true, Value::Object(o)) = (asked, &mut result) {
                    o.insert("approved_by_user".into(), Value::Bool(true));
                }
                if outcome.is_ok() {
                    self.nested_instructions(call, &mut result, events).await;
                }
                self.post_tool_hook(call, &mut result, events, cancel).await;
                tracing::info!(
                    tool = %call.function.name,
                    outcome = outcome.name(),
                    ms = started.elapsed().as_millis() as u64,
                    "tool call finished"
                );
                let duration = Some(started.elapsed());
                // The change is told only when it was made.
                if let (Some(diff), true) = (planned, outcome.is_ok()) {
                    events.send(AgentEvent::FileEdited {
                        id: call.id.clone(),
                        diff: diff.clone(),
                    });
                }
                let result = crate::events::Observation::new(result);
                events.send(AgentEvent::ToolFinished {
                    id: call.id.clone(),
                    name: call.function.name.clone(),
                    result: result.clone(),
                    outcome: outcome.clone(),
                    approved: asked,
                    duration,
                });
                let observed = Observed {
                    value: result,
                    outcome,
                    approved: asked,
                    duration,
                };
                (i, observed)
            }
        });
        for (i, result) in join_all(runs).await {
            observations[i] = Some(result);
        }
    }
}

/// Whether two argument texts mean the same (as JSON when both parse, else as text).
fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<Value>(a),
        serde_json::from_str::<Value>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim() == b.trim(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_compare_as_json() {
        assert!(same_arguments(r#"{"a":1,"b":2}"#, r#"{ "b": 2, "a": 1 }"#));
        assert!(!same_arguments(r#"{"a":1}"#, r#"{"a":2}"#));
        assert!(same_arguments("not json", " not json "));
    }
}
