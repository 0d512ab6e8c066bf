//! `--output-format json` (and the last line of `stream-json`): the whole turn as one object,
//! built from the same events the trace prints.
//!
//! ```json
//! {"answer": "...", "outcome": "answered", "steps": [{"step": 1, "reasoning": null,
//!   "thought": "...", "tool_calls": [{"id": "...", "name": "...", "arguments": {...},
//!   "result": {...}, "duration_ms": 3}]}], "usage": {...},
//!   "cost": {"usd": 0.0012, "cny": null, "unpriced_responses": 0}, "session_id": "...",
//!   "exit_code": 0, "errors": [], "notices": []}
//! ```

use serde::Serialize;

use super::exit_code;
use super::plan_report::{PlanReport, plan_report};
pub use super::steps::StepReport;
use crate::agent::{AgentEvent, TurnOutcome};
use crate::llm::Usage;
use crate::llm::prices::Spend;
use crate::transcript::Transcript;

/// The whole turn.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The answer (`null` when there was none; it may be partial when the turn did not end
    /// `answered`).
    pub answer: Option<String>,
    /// `answered`, `step_limit`, `interrupted` or `failed`.
    pub outcome: &'static str,
    /// Why it failed, when it did: `missing_key`, `refused_key`, `network`, `server`, `cut`
    /// (the provider cut the answer short), `request`, `plan` or `unrecorded`.
    pub cause: Option<&'static str>,
    /// Every model call of the turn.
    pub steps: Vec<StepReport>,
    /// The turn's tokens added up (`null` when the server reported none).
    pub usage: Option<Usage>,
    /// What the turn's model responses cost, added up: `{"usd": 0.0012, "cny": null,
    /// "unpriced_responses": 0}` (`null` when no response reported tokens).
    pub cost: Option<Spend>,
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
    /// How the run started: its session and approval mode (`null` when it never started).
    pub start: Option<RunStart>,
    /// The compactions of the run: each replaced older turns with a summary.
    pub compactions: Vec<CompactionReport>,
    /// A `--plan` run's plan and its items' states (then `steps` are the planner's, and each
    /// item holds the executor's for it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanReport>,
}

/// One compaction, as the report tells it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CompactionReport {
    /// The turns the summary replaced.
    pub turns: usize,
    /// Whether the context budget set it off (not `/compact`).
    pub automatic: bool,
    /// The summary's size in estimated tokens.
    pub summary_tokens: usize,
}

impl Report {
    /// The report of a run that could not start (no key, workspace in use, ...): exit status 2.
    pub fn not_started(error: &str) -> Self {
        Self {
            answer: None,
            outcome: "failed",
            cause: None,
            steps: Vec::new(),
            usage: None,
            cost: None,
            session_id: None,
            exit_code: 2,
            denied: 0,
            errors: vec![error.to_string()],
            notices: Vec::new(),
            start: None,
            compactions: Vec::new(),
            plan: None,
        }
    }
}

/// Which session a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionStart {
    /// A new one (a headless run's default, `--new`).
    New,
    /// The newest of this folder, gone on with (`--continue`).
    Continued,
    /// An earlier one reopened (`--resume`).
    Resumed,
}

/// How a headless run started, said on stderr before its first step and kept in the report.
#[derive(Clone, Debug, Serialize)]
pub struct RunStart {
    /// Which session it uses.
    pub session: SessionStart,
    /// That session's title (`null` for a new one).
    pub session_title: Option<String>,
    /// The approval mode.
    pub approval: crate::approval::ApprovalMode,
    /// Where the mode came from: `flag`, `folder` or `default`.
    pub approval_source: crate::approval::ApprovalSource,
}

impl RunStart {
    /// The lines said on stderr: `session: …` and `approval: ask (this folder's choice; …)`.
    pub fn lines(&self) -> [String; 2] {
        let title = self.session_title.as_deref().unwrap_or("(untitled)");
        let session = match self.session {
            SessionStart::New => "session: new (-c goes on with this folder's newest, --resume ID|TITLE with an earlier one)".to_string(),
            SessionStart::Continued => format!("session: continued \u{201c}{title}\u{201d}"),
            SessionStart::Resumed => format!("session: resumed \u{201c}{title}\u{201d}"),
        };
        let approval = format!(
            "approval: {} ({})",
            self.approval.name(),
            self.approval_source.describe()
        );
        [session, approval]
    }
}

/// The exit status of a turn that answered after calls were denied by the approval mode.
pub const DENIED_EXIT_CODE: u8 = 4;

/// Builds the [`Report`]: the run's words (errors, notices) as they come, the rest from the
/// transcript at the end.
#[derive(Debug, Default)]
pub struct ReportBuilder {
    errors: Vec<String>,
    notices: Vec<String>,
    start: Option<RunStart>,
    compactions: Vec<CompactionReport>,
}

impl ReportBuilder {
    /// A builder that starts with the notices given at start and how the run started.
    pub fn new(notices: Vec<String>, start: Option<RunStart>) -> Self {
        Self {
            notices,
            start,
            ..Self::default()
        }
    }

    /// Keeps what `event` says to the person.
    pub fn apply(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::Error { message } => self.errors.push(message.clone()),
            AgentEvent::Notice(text) => self.notices.push(text.clone()),
            AgentEvent::StepLimitReached { max } => {
                self.notices.push(super::step_limit_said(*max));
            }
            AgentEvent::Compacted(c) => self.compactions.push(CompactionReport {
                turns: c.turns,
                automatic: c.automatic,
                summary_tokens: c.summary_tokens,
            }),
            AgentEvent::CompactionFailed { reason, automatic } => {
                self.errors
                    .push(crate::agent::advice::compaction_failed_notice(
                        reason, *automatic,
                    ))
            }
            AgentEvent::ContextTrimmed {
                dropped_turns,
                shortened,
            } => self.notices.push(crate::agent::advice::trimmed_notice(
                *dropped_turns,
                *shortened,
            )),
            _ => {}
        }
    }

    /// The report of the run told by `transcript`, of session `session_id`, that ended in
    /// `outcome`.
    pub fn finish(self, t: &Transcript, outcome: &TurnOutcome, session_id: String) -> Report {
        // A plan run's items keep their own steps; the rest are the report's.
        let steps = t
            .steps
            .iter()
            .filter(|s| {
                t.turns
                    .get(s.turn)
                    .is_none_or(|turn| turn.group.item_of().is_none())
            })
            .cloned()
            .collect::<Vec<_>>();
        // A plan run has several turns: their tokens add up.
        let usage = t
            .turns
            .iter()
            .filter_map(|turn| turn.usage)
            .reduce(|mut a, b| {
                a.add(&b);
                a
            });
        let cost = t.cost();
        let denied = t.denied();
        let last = t.turns.len().checked_sub(1);
        Report {
            answer: last.and_then(|n| t.answer(n)).map(str::to_string),
            outcome: outcome.name(),
            cause: outcome.cause().map(|c| c.name()),
            steps: super::steps::report(&steps),
            usage,
            cost: (!cost.is_empty()).then_some(cost),
            session_id: Some(session_id),
            exit_code: match (outcome, denied) {
                (TurnOutcome::Answered, 1..) => DENIED_EXIT_CODE,
                _ => exit_code(outcome),
            },
            denied,
            errors: self.errors,
            notices: self.notices,
            start: self.start,
            compactions: self.compactions,
            plan: plan_report(t),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{CallOutcome, StepEnd};
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
            AgentEvent::StepFinished(StepEnd::Thought),
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
                result: json!({"ok": true}).into(),
                outcome: CallOutcome::Ok,
                approved: false,
                duration: None,
            }),
            AgentEvent::ToolFinished {
                id: "c2".into(),
                name: "list_files".into(),
                result: json!({"ok": false}).into(),
                outcome: CallOutcome::Denied {
                    reason: String::new(),
                },
                approved: false,
                duration: Some(Duration::from_millis(3)),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "delegate_file_analysis".into(),
                result: json!({"ok": true, "answer": "sub"}).into(),
                outcome: CallOutcome::Ok,
                approved: true,
                duration: Some(Duration::from_millis(9)),
            },
            AgentEvent::Error {
                message: "oops".into(),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta("Done.".into()),
            AgentEvent::StepFinished(StepEnd::Answer),
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

    fn report_of(
        mut builder: ReportBuilder,
        events: &[AgentEvent],
        outcome: TurnOutcome,
    ) -> Report {
        let mut t = Transcript::new();
        for e in events {
            t.apply(e);
            builder.apply(e);
        }
        builder.finish(&t, &outcome, "s-1".into())
    }

    #[test]
    fn a_turn_becomes_steps_calls_results_and_the_answer() {
        let builder = ReportBuilder::new(vec!["start".into()], None);
        let report = report_of(builder, &turn(), TurnOutcome::Answered);
        assert_eq!(report.denied, 1);
        assert_eq!(report.exit_code, DENIED_EXIT_CODE);
        let report = serde_json::to_value(report).unwrap();
        assert_eq!(report["answer"], "Done.");
        assert_eq!(report["outcome"], "answered");
        assert_eq!(report["cause"], Value::Null);
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
        assert_eq!(calls[0]["outcome"], "ok");
        assert_eq!(calls[0]["approved"], true);
        assert_eq!(calls[1]["outcome"], "denied");
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
        let mut events: Vec<AgentEvent> = turn().into_iter().take(15).collect();
        events.push(AgentEvent::TurnFinished {
            outcome: TurnOutcome::StepLimit,
            usage: None,
            last_usage: None,
        });
        let report = report_of(ReportBuilder::default(), &events, TurnOutcome::StepLimit);
        assert_eq!(report.answer, None);
        assert_eq!(report.outcome, "step_limit");
        assert_eq!(report.exit_code, 3);
        let not_started = serde_json::to_value(Report::not_started("no key")).unwrap();
        assert_eq!(not_started["exit_code"], 2);
        assert_eq!(not_started["session_id"], Value::Null);
        assert_eq!(not_started["errors"], json!(["no key"]));
    }
}
