//! `--output-format json` (and the last line of `stream-json`): the whole turn as one object,
//! built from the same events the trace prints.
//!
//! ```json
//! {"answer": "...", "outcome": "answered", "steps": [{"step": 1, "reasoning": null,
//!   "thought": "...", "tool_calls": [{"id": "...", "name": "...", "arguments": {...},
//!   "result": {...}, "duration_ms": 3}]}], "usage": {...}, "session_id": "...",
//!   "exit_code": 0, "errors": [], "notices": []}
//! ```

use serde::{Serialize, Serializer};
use serde_json::Value;

use super::wire::{arguments_value, millis};
use super::{exit_code, outcome_name};
use crate::agent::{AgentEvent, TurnOutcome};
use crate::llm::Usage;

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

/// The whole turn.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The answer (`null` when there was none; it may be partial when the turn did not end
    /// `answered`).
    pub answer: Option<String>,
    /// `answered`, `step_limit`, `interrupted` or `failed`.
    pub outcome: &'static str,
    /// Every model call of the turn.
    pub steps: Steps,
    /// The turn's tokens added up (`null` when the server reported none).
    pub usage: Option<Usage>,
    /// The history's session id (`null` when the agent never started).
    pub session_id: Option<String>,
    /// The process's exit status.
    pub exit_code: u8,
    /// How many calls were denied or refused by the approval mode (`--approval`).
    pub denied: usize,
    /// What went wrong, as said on stderr.
    pub errors: Vec<String>,
    /// Notices, from start (e.g. the project instructions read) and from the turn.
    pub notices: Vec<String>,
}

impl Report {
    /// The report of a run that could not start (no key, workspace in use, ...): exit status 2.
    pub fn not_started(error: &str) -> Self {
        Self {
            answer: None,
            outcome: outcome_name(&TurnOutcome::Failed),
            steps: Steps::default(),
            usage: None,
            session_id: None,
            exit_code: 2,
            denied: 0,
            errors: vec![error.to_string()],
            notices: Vec::new(),
        }
    }
}

/// The exit status of a turn that answered after calls were denied by the approval mode.
pub const DENIED_EXIT_CODE: u8 = 4;

/// Builds the [`Report`] from the turn's events.
#[derive(Debug, Default)]
pub struct ReportBuilder {
    steps: Steps,
    answer: Option<String>,
    usage: Option<Usage>,
    errors: Vec<String>,
    notices: Vec<String>,
    denied: usize,
}

impl ReportBuilder {
    /// A builder that starts with the notices given at start.
    pub fn new(notices: Vec<String>) -> Self {
        Self {
            notices,
            ..Self::default()
        }
    }

    /// Adds what `event` tells.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Error { message } => self.errors.push(message.clone()),
            AgentEvent::Notice(text) => self.notices.push(text.clone()),
            AgentEvent::ToolFinished { result, .. } if result["denied"] == true => {
                self.denied += 1;
                self.steps.apply(event);
            }
            AgentEvent::TurnFinished { usage, .. } => {
                self.usage = *usage;
                self.answer = self.steps.take_answer();
            }
            other => self.steps.apply(other),
        }
    }

    /// The report, for a turn of session `session_id` that ended in `outcome`.
    pub fn finish(self, outcome: &TurnOutcome, session_id: String) -> Report {
        Report {
            answer: self.answer,
            outcome: outcome_name(outcome),
            steps: self.steps,
            usage: self.usage,
            session_id: Some(session_id),
            exit_code: match (outcome, self.denied) {
                (TurnOutcome::Answered, 1..) => DENIED_EXIT_CODE,
                _ => exit_code(outcome),
            },
            denied: self.denied,
            errors: self.errors,
            notices: self.notices,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn nested(e: AgentEvent) -> AgentEvent {
        AgentEvent::Nested {
            parent_id: "c1".into(),
            event: Box::new(e),
        }
    }

    fn turn() -> Vec<AgentEvent> {
        vec![
            AgentEvent::TurnStarted {
                prompt: "go".into(),
            },
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ReasoningDelta("hm".into()),
            AgentEvent::ReasoningDelta("m".into()),
            AgentEvent::ContentDelta("Let me ".into()),
            AgentEvent::ContentDelta("look.".into()),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "delegate_file_analysis".into(),
                arguments: r#"{"relative_path":"a.md"}"#.into(),
            },
            AgentEvent::ToolCallStarted {
                id: "c2".into(),
                name: "list_files".into(),
                arguments: "not json".into(),
            },
            nested(AgentEvent::StepStarted { step: 1, max: 4 }),
            nested(AgentEvent::ToolCallStarted {
                id: "s1".into(),
                name: "read_text_file".into(),
                arguments: "{}".into(),
            }),
            nested(AgentEvent::ToolFinished {
                id: "s1".into(),
                name: "read_text_file".into(),
                result: json!({"ok": true}),
                duration: None,
            }),
            AgentEvent::ToolFinished {
                id: "c2".into(),
                name: "list_files".into(),
                result: json!({"ok": false}),
                duration: Some(Duration::from_millis(3)),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "delegate_file_analysis".into(),
                result: json!({"ok": true, "answer": "sub"}),
                duration: Some(Duration::from_millis(9)),
            },
            AgentEvent::Error {
                message: "oops".into(),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta("Done.".into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: Some(Usage {
                    total_tokens: 12,
                    ..Usage::default()
                }),
                last_usage: None,
            },
        ]
    }

    #[test]
    fn a_turn_becomes_steps_calls_results_and_the_answer() {
        let mut builder = ReportBuilder::new(vec!["start".into()]);
        for e in &turn() {
            builder.apply(e);
        }
        let report =
            serde_json::to_value(builder.finish(&TurnOutcome::Answered, "s-1".into())).unwrap();
        assert_eq!(report["answer"], "Done.");
        assert_eq!(report["outcome"], "answered");
        assert_eq!(report["exit_code"], 0);
        assert_eq!(report["session_id"], "s-1");
        assert_eq!(report["usage"]["total_tokens"], 12);
        assert_eq!(report["errors"], json!(["oops"]));
        assert_eq!(report["notices"], json!(["start"]));
        let steps = report["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[0]["reasoning"], "hmm");
        assert_eq!(steps[0]["thought"], "Let me look.");
        let calls = steps[0]["tool_calls"].as_array().unwrap();
        assert_eq!(calls[0]["arguments"], json!({"relative_path": "a.md"}));
        assert_eq!(calls[0]["result"]["answer"], "sub");
        assert_eq!(calls[0]["duration_ms"], 9);
        assert_eq!(calls[0]["steps"][0]["tool_calls"][0]["id"], "s1");
        assert_eq!(
            calls[0]["steps"][0]["tool_calls"][0]["result"],
            json!({"ok": true})
        );
        assert_eq!(calls[1]["arguments"], "not json");
        assert_eq!(calls[1]["result"], json!({"ok": false}));
        assert!(calls[1].get("steps").is_none(), "no sub-agent, no steps");
        assert_eq!(
            steps[1],
            json!({"step": 2, "reasoning": null, "thought": null, "tool_calls": []})
        );
    }

    #[test]
    fn a_turn_that_stopped_at_the_limit_has_no_answer() {
        let mut builder = ReportBuilder::default();
        for e in turn().iter().take(14) {
            builder.apply(e);
        }
        builder.apply(&AgentEvent::TurnFinished {
            outcome: TurnOutcome::StepLimit,
            usage: None,
            last_usage: None,
        });
        let report = builder.finish(&TurnOutcome::StepLimit, "s".into());
        assert_eq!(report.answer, None);
        assert_eq!(report.outcome, "step_limit");
        assert_eq!(report.exit_code, 3);
        let not_started = serde_json::to_value(Report::not_started("no key")).unwrap();
        assert_eq!(not_started["exit_code"], 2);
        assert_eq!(not_started["session_id"], Value::Null);
        assert_eq!(not_started["errors"], json!(["no key"]));
    }
}
