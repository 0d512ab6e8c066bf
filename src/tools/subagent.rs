//! `delegate_file_analysis`: a short-lived sub-agent with its own ReAct loop that may only list
//! and read files; its events appear nested under the call and its messages stay out of the
//! main history.
//!
//! Every model request of the sub-agent is drawn from the budget of the turn that delegated (see
//! [`crate::agent::budget`]), and only a few sub-agents run per step
//! ([`crate::agent::turn::MAX_AGENT_CALLS_PER_STEP`]).

use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, arg_str};
use crate::agent::{Agent, AgentSettings, BudgetExhausted, RequestBudget, Session, TurnOutcome};
use crate::llm::ToolSchema;

/// The sub-agent's step limit.
pub const SUBAGENT_MAX_STEPS: usize = 4;

/// The sub-agent's tools.
pub const SUBAGENT_TOOLS: [&str; 2] = ["list_files", "read_text_file"];

/// The sub-agent's instructions.
pub const SUBAGENT_PROMPT: &str = "You are a file analyst working for another assistant. You get \
one file of a sandboxed workspace (paths are relative to it) and one task. Read the file with \
read_text_file (list_files if you must find it), then answer the task concisely and concretely, \
quoting the lines that matter. Use only what the file says; if it cannot be read, say so. You \
have very few steps: read, then answer.";

/// The `delegate_file_analysis` tool.
#[derive(Clone, Default)]
pub struct DelegateTool {
    tools: Option<Arc<ToolRegistry>>,
}

impl DelegateTool {
    /// A delegate tool whose sub-agent uses the built-in list_files and read_text_file.
    pub fn new() -> Self {
        Self::default()
    }

    /// A delegate tool whose sub-agent uses `tools` (tests).
    pub fn with_tools(tools: ToolRegistry) -> Self {
        Self {
            tools: Some(Arc::new(tools)),
        }
    }
}

impl Tool for DelegateTool {
    /// A sub-agent makes several model calls: longer than the registry's default per call.
    fn call_timeout(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(600))
    }

    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "delegate_file_analysis".into(),
            description: "Hand one file to a helper agent that reads it and answers a task about \
                it (summarise, find, explain), so a long file does not fill this conversation. \
                Returns the helper's analysis."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "relative_path": {"type": "string", "description": "The file, relative to the workspace."},
                    "task": {"type": "string", "description": "What to find out about it."}
                },
                "required": ["relative_path", "task"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn runs_agent(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let path = arg_str(&args, "relative_path")?.trim();
            let task = arg_str(&args, "task")?.trim();
            if path.is_empty() || task.is_empty() {
                return Err(ToolError::InvalidArguments(
                    "`relative_path` and `task` may not be empty".into(),
                ));
            }
            let Some(model) = ctx.model.clone() else {
                return Err(ToolError::failed(
                    "no model configured: the sub-agent needs the same model as the main agent",
                ));
            };
            if model.budget.is_exhausted() {
                return Err(out_of_budget(&model.budget));
            }
            let registry = match &self.tools {
                Some(tools) => tools.clone(),
                None => Arc::new(super::builtin_registry().subset(&SUBAGENT_TOOLS)),
            };
            let budget = model.budget.clone();
            let mut agent = Agent::new(
                model.client,
                registry,
                ctx.sandbox.clone(),
                Session::with_system(SUBAGENT_PROMPT),
                AgentSettings {
                    preset: model.preset,
                    max_steps: SUBAGENT_MAX_STEPS,
                    history_path: None,
                },
            )
            .with_request_budget(budget.clone());
            let prompt = format!("File: {path}\nTask: {task}");
            let outcome = agent
                .run_turn(&prompt, &ctx.events.nested(&ctx.call_id), &ctx.cancel)
                .await;
            let answer = agent
                .session()
                .last_answer()
                .unwrap_or("")
                .trim()
                .to_string();
            // A step limit with the budget gone is the budget's doing (or both at once).
            let out_of_requests = outcome == TurnOutcome::StepLimit && budget.is_exhausted();
            match outcome {
                TurnOutcome::Interrupted => Err(ToolError::Cancelled),
                TurnOutcome::Answered if !answer.is_empty() => {
                    let mut out = Map::new();
                    out.insert("relative_path".into(), json!(path));
                    out.insert("analysis".into(), json!(answer));
                    Ok(out)
                }
                TurnOutcome::StepLimit if !answer.is_empty() => {
                    let mut out = Map::new();
                    out.insert("relative_path".into(), json!(path));
                    out.insert("analysis".into(), json!(answer));
                    let note = if out_of_requests {
                        out_of_budget(&budget).to_string()
                    } else {
                        "the helper ran out of steps".to_string()
                    };
                    out.insert("note".into(), json!(note));
                    Ok(out)
                }
                TurnOutcome::StepLimit if out_of_requests => Err(out_of_budget(&budget)),
                TurnOutcome::StepLimit => Err(ToolError::failed(format!(
                    "the helper used its {SUBAGENT_MAX_STEPS} steps without an answer"
                ))),
                _ => Err(ToolError::failed(
                    "the helper failed without an answer (see its nested events for the error)",
                )),
            }
        })
    }
}

/// The error of a helper stopped (or never started) because the turn's requests are used up.
fn out_of_budget(budget: &RequestBudget) -> ToolError {
    ToolError::failed(format!(
        "the helper stopped: {}; answer with what you have",
        BudgetExhausted {
            limit: budget.limit()
        }
    ))
}
