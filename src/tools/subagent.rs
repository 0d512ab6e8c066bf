//! `delegate_file_analysis`: a short-lived sub-agent with its own ReAct loop that may only list
//! and read files; its events appear nested under the call and its messages stay out of the
//! main history.
//!
//! The tool knows nothing of the agent: it describes the task and the context's
//! [`Delegator`](super::registry::Delegator) runs it. The agent layer draws every model request
//! of the sub-agent from the budget of the turn that delegated, and runs only a few sub-agents
//! per step.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{parameters_of, parse_args};
use super::registry::{
    SubOutcome, SubTask, Tool, ToolContext, ToolError, ToolFuture, ToolRegistry,
};
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

/// The arguments of `delegate_file_analysis`.
#[derive(Deserialize, JsonSchema)]
struct DelegateArgs {
    /// The file, relative to the workspace.
    relative_path: String,
    /// What to find out about it.
    task: String,
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
            parameters: parameters_of::<DelegateArgs>(),
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
            let DelegateArgs {
                relative_path,
                task,
            } = parse_args(args)?;
            let (path, task) = (relative_path.trim(), task.trim());
            if path.is_empty() || task.is_empty() {
                return Err(ToolError::InvalidArguments(
                    "`relative_path` and `task` may not be empty".into(),
                ));
            }
            // A path the helper could never read (outside, hidden) is refused before any request.
            ctx.sandbox.resolve_read(path)?;
            let Some(delegator) = ctx.delegator.clone() else {
                return Err(ToolError::failed(
                    "no model configured: the sub-agent needs the same model as the main agent",
                ));
            };
            if let Some(reason) = delegator.refusal() {
                return Err(out_of_budget(&reason));
            }
            let tools = match &self.tools {
                Some(tools) => tools.clone(),
                None => Arc::new(super::builtin_registry().subset(&SUBAGENT_TOOLS)),
            };
            let task = SubTask {
                system_prompt: SUBAGENT_PROMPT,
                prompt: format!("File: {path}\nTask: {task}"),
                tools,
                sandbox: ctx.sandbox.clone(),
                max_steps: SUBAGENT_MAX_STEPS,
            };
            let outcome = delegator
                .run(task, ctx.events.nested(&ctx.call_id), &ctx.cancel)
                .await;
            let analysis = |answer: String, note: Option<String>| {
                let mut out = Map::new();
                out.insert("relative_path".into(), json!(path));
                out.insert("analysis".into(), json!(answer));
                if let Some(note) = note {
                    out.insert("note".into(), json!(note));
                }
                Ok(out)
            };
            match outcome {
                SubOutcome::Interrupted => Err(ToolError::Cancelled),
                SubOutcome::Answered(answer) => analysis(answer, None),
                SubOutcome::OutOfRequests { answer, reason } if !answer.is_empty() => {
                    analysis(answer, Some(out_of_budget(&reason).to_string()))
                }
                SubOutcome::OutOfRequests { reason, .. } => Err(out_of_budget(&reason)),
                SubOutcome::OutOfSteps(answer) if !answer.is_empty() => {
                    analysis(answer, Some("the helper ran out of steps".into()))
                }
                SubOutcome::OutOfSteps(_) => Err(ToolError::failed(format!(
                    "the helper used its {SUBAGENT_MAX_STEPS} steps without an answer"
                ))),
                SubOutcome::Failed => Err(ToolError::failed(
                    "the helper failed without an answer (see its nested events for the error)",
                )),
            }
        })
    }
}

/// The error of a helper stopped (or never started) because the turn's requests are used up.
fn out_of_budget(reason: &str) -> ToolError {
    ToolError::failed(format!(
        "the helper stopped: {reason}; answer with what you have"
    ))
}
