//! The steps of a turn as the JSON report lists them: each model call with its thought,
//! reasoning and tool calls (a sub-agent's steps under the call that started it).

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::wire::{arguments_value, millis};
use crate::agent::AgentEvent;

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
    /// How long it ran.
    pub duration_ms: Option<u64>,
    /// A sub-agent's steps, for a call that delegated to one.
    #[serde(skip_serializing_if = "Steps::is_empty")]
    pub steps: Steps,
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

/// The steps of one agent, as they arrive. Written as the list of steps.
#[derive(Debug, Default)]
pub struct Steps {
    steps: Vec<StepReport>,
    /// The text of the current step, until it turns out to be a thought or the answer.
    text: String,
}

impl Serialize for Steps {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(&self.steps)
    }
}

impl Steps {
    /// Whether no step started.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// Adds what `event` tells about the steps.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::StepStarted { step, .. } => {
                self.text.clear();
                self.steps.push(StepReport {
                    step: *step,
                    reasoning: None,
                    thought: None,
                    tool_calls: Vec::new(),
                });
            }
            AgentEvent::ReasoningDelta(text) => {
                if let Some(step) = self.steps.last_mut() {
                    step.reasoning.get_or_insert_default().push_str(text);
                }
            }
            AgentEvent::ContentDelta(text) => self.text.push_str(text),
            AgentEvent::ToolCallStarted {
                id,
                name,
                arguments,
            } => {
                let text = std::mem::take(&mut self.text);
                if let Some(step) = self.steps.last_mut() {
                    if !text.is_empty() {
                        step.thought = Some(text);
                    }
                    step.tool_calls.push(CallReport {
                        id: id.clone(),
                        name: name.clone(),
                        arguments: arguments_value(arguments),
                        result: None,
                        duration_ms: None,
                        steps: Steps::default(),
                    });
                }
            }
            AgentEvent::ToolFinished {
                id,
                result,
                duration,
                ..
            } => {
                if let Some(call) = self.call_mut(id) {
                    call.result = Some(result.clone());
                    call.duration_ms = duration.map(millis);
                }
            }
            AgentEvent::Nested { parent_id, event } => {
                if let Some(call) = self.call_mut(parent_id) {
                    call.steps.apply(event);
                }
            }
            _ => {}
        }
    }

    /// The call with this id, the latest first (ids are unique within a turn).
    fn call_mut(&mut self, id: &str) -> Option<&mut CallReport> {
        self.steps
            .iter_mut()
            .rev()
            .flat_map(|s| s.tool_calls.iter_mut().rev())
            .find(|c| c.id == id)
    }

    /// What the last step said without calling tools after it: the answer (maybe partial).
    pub fn take_answer(&mut self) -> Option<String> {
        Some(std::mem::take(&mut self.text)).filter(|t| !t.is_empty())
    }
}
