//! `--output-format json` (and the last line of `stream-json`): the whole turn as one object,
//! built from the same events the trace prints.
//!
//! ```json
//! {"answer": "...", "outcome": "answered", "steps": [{"step": 1, "reasoning": null,
//!   "thought": "...", "tool_calls": [{"id": "...", "name": "...", "arguments": {...},
//!   "result": {...}, "duration_ms": 3}]}], "usage": {...}, "session_id": "...",
//!   "exit_code": 0, "errors": [], "notices": []}
//! ```

use serde::Serialize;

use super::plan_report::PlanReport;
pub use super::steps::{CallReport, StepReport, Steps};
use super::{exit_code, outcome_name};
use crate::agent::{AgentEvent, TurnOutcome};
use crate::events::PlanEvent;
use crate::llm::Usage;

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
    /// A `--plan` run's plan and its items' states (then `steps` are the planner's, and each
    /// item holds the executor's for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanReport>,
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
            plan: None,
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
    plan: Option<PlanReport>,
    /// The plan item whose turn runs: its steps go under it.
    item: Option<usize>,
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
                self.steps_mut().apply(event);
            }
            AgentEvent::TurnFinished { usage, .. } => {
                // A plan run has several turns: their tokens add up.
                match (&mut self.usage, usage) {
                    (Some(total), Some(u)) => total.add(u),
                    (total, u) => *total = total.or(*u),
                }
                self.answer = self.steps_mut().take_answer();
                if let (Some(i), Some(plan)) = (self.item, &mut self.plan)
                    && let Some(item) = plan.items.get_mut(i)
                {
                    item.answer = self.answer.clone();
                }
            }
            AgentEvent::Plan(plan) => self.plan_event(plan),
            other => self.steps_mut().apply(other),
        }
    }

    /// Where a step goes: under the running plan item, else the report's own steps.
    fn steps_mut(&mut self) -> &mut Steps {
        match (self.item, &mut self.plan) {
            (Some(i), Some(plan)) if i < plan.items.len() => &mut plan.items[i].steps,
            _ => &mut self.steps,
        }
    }

    fn plan_event(&mut self, event: &PlanEvent) {
        match event {
            PlanEvent::Planning { task, model } => {
                self.plan = Some(PlanReport::new(task, model));
            }
            PlanEvent::ItemStarted { index } => self.item = Some(*index),
            PlanEvent::ItemFinished { .. } => self.item = None,
            _ => {}
        }
        if let Some(plan) = &mut self.plan {
            plan.apply(event);
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
            plan: self.plan,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};
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
