//! The steps of a turn as the JSON report lists them, read from the transcript: each model call
//! with its thought, reasoning and tool calls (a sub-agent's steps under the call that started
//! it).

use serde::Serialize;
use serde_json::Value;

use super::wire::{arguments_value, millis};
use crate::transcript::{Call, Step};

/// One tool call of a step.
#[derive(Debug, Serialize)]
pub struct CallReport {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The arguments: parsed JSON when they parse, else the string the model wrote.
    pub arguments: Value,
    /// The observation sent to the model (`null` if the call never finished).
    pub result: Option<Value>,
    /// `ok`, `failed`, `denied` (by the person), `refused` (by a rule) or `interrupted`
    /// (`null` if the call never finished).
    pub outcome: Option<&'static str>,
    /// Whether a person said yes to it first.
    pub approved: bool,
    /// How long it ran.
    pub duration_ms: Option<u64>,
    /// A sub-agent's steps, for a call that delegated to one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepReport>,
}

/// One model call of the turn.
#[derive(Debug, Serialize)]
pub struct StepReport {
    /// 1-based step number.
    pub step: usize,
    /// The model's reasoning in this step (`null` when it gave none).
    pub reasoning: Option<String>,
    /// What the model wrote before calling tools (`null` when nothing; an answer is not a
    /// thought and goes in the report's `answer`).
    pub thought: Option<String>,
    /// The calls it made.
    pub tool_calls: Vec<CallReport>,
}

/// The report's list of `steps`.
pub fn report(steps: &[Step]) -> Vec<StepReport> {
    steps.iter().map(step_report).collect()
}

fn step_report(step: &Step) -> StepReport {
    StepReport {
        step: step.number,
        reasoning: Some(step.reasoning.clone()).filter(|r| !r.is_empty()),
        thought: step.thought().map(str::to_string),
        tool_calls: step.calls.iter().map(call_report).collect(),
    }
}

fn call_report(call: &Call) -> CallReport {
    let finished = call.finished.as_ref();
    CallReport {
        id: call.id.clone(),
        name: call.name.clone(),
        arguments: arguments_value(&call.arguments),
        result: finished.map(|f| (*f.result).clone()),
        outcome: finished.map(|f| f.outcome.name()),
        approved: finished.is_some_and(|f| f.approved),
        duration_ms: call.duration().map(millis),
        steps: call
            .sub
            .as_deref()
            .map(|s| report(&s.steps))
            .unwrap_or_default(),
    }
}
