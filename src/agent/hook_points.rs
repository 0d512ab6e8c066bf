//! Where the agent runs the person's hooks (`crate::hooks`): before and after each tool call,
//! when a prompt is submitted, when a turn stops with an answer, and when a session starts.
//! Each point says what the hooks asked in the agent's own terms (a refused call, a note for
//! the model, a blocked prompt); a hook's failure is a notice and changes nothing.

use std::sync::Arc;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::dispatch::Observed;
use super::session::Message;
use super::turn::Agent;
use crate::events::{AgentEvent, CallOutcome, EventSink, RefusedBy};
use crate::hooks::{HookSession, Hooks, Verdict};
use crate::llm::ToolCall;
use crate::settings::HookEvent;

/// How often one turn's `Stop` hooks may send the model back to work: a script that always
/// blocks cannot keep a turn going for ever.
pub const MAX_STOP_CONTINUATIONS: usize = 3;

/// How a session came to start, as `SessionStart` hooks are told (`source`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionSource {
    /// MiniClaw started.
    Startup,
    /// An archived session was reopened.
    Resume,
    /// `/new` or `/clear` began an empty one.
    Clear,
}

impl SessionSource {
    fn name(self) -> &'static str {
        match self {
            Self::Startup => "startup",
            Self::Resume => "resume",
            Self::Clear => "clear",
        }
    }
}

impl Agent {
    /// Runs the person's hooks at the points above from now on.
    pub fn with_hooks(mut self, hooks: Arc<Hooks>) -> Self {
        self.approvals.set_hooks(hooks.clone());
        self.hooks = Some(hooks);
        self
    }

    /// The hooks, when any are configured (for `/hooks`).
    pub fn hooks(&self) -> Option<&Arc<Hooks>> {
        self.hooks.as_ref()
    }

    /// Tells the hooks which session they run for (a sub-agent's own session is not one).
    pub(super) fn tell_hooks_the_session(&self) {
        if let (Some(hooks), None) = (&self.hooks, &self.request_budget) {
            hooks.set_session(HookSession {
                id: self.session.id.clone(),
                transcript: self.saved_at(),
            });
        }
    }

    async fn run_hooks(
        &self,
        event: HookEvent,
        subject: &str,
        fields: Map<String, Value>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Verdict {
        let Some(hooks) = self.hooks.as_ref().filter(|h| h.any(event)) else {
            return Verdict::default();
        };
        let tool_event = matches!(event, HookEvent::PreToolUse | HookEvent::PostToolUse);
        if self.request_budget.is_some() && !tool_event {
            // A sub-agent's prompt, stop and session are the delegating call's, not the
            // person's.
            return Verdict::default();
        }
        let verdict = hooks.run(event, subject, fields, cancel).await;
        for said in verdict.problems.iter().chain(&verdict.messages) {
            events.send(AgentEvent::Notice(said.clone()));
        }
        verdict
    }

    /// `PreToolUse`: the call's refusal when a hook blocks it (the reason reaches the model as
    /// the call's error).
    pub(super) async fn pre_tool_hook(
        &self,
        call: &ToolCall,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Option<Observed> {
        let verdict = self
            .run_hooks(
                HookEvent::PreToolUse,
                &call.function.name,
                tool_fields(call),
                events,
                cancel,
            )
            .await;
        let reason = verdict.block?;
        let error = format!("blocked by a PreToolUse hook: {reason}");
        Some(Observed {
            value: json!({"ok": false, "tool": call.function.name, "error": error}).into(),
            outcome: CallOutcome::Refused {
                why: error,
                by: RefusedBy::Hook,
            },
            approved: false,
            duration: Some(std::time::Duration::ZERO),
        })
    }

    /// `PostToolUse`: what the hooks say to the model about the call's result (a block's reason
    /// and any context), kept with the observation as `hook_note`.
    pub(super) async fn post_tool_hook(
        &self,
        call: &ToolCall,
        result: &mut Value,
        events: &EventSink,
        cancel: &CancellationToken,
    ) {
        let mut fields = tool_fields(call);
        fields.insert("tool_response".into(), result.clone());
        let verdict = self
            .run_hooks(
                HookEvent::PostToolUse,
                &call.function.name,
                fields,
                events,
                cancel,
            )
            .await;
        let note: Vec<String> = verdict.block.into_iter().chain(verdict.context).collect();
        if let (false, Value::Object(o)) = (note.is_empty(), result) {
            o.insert("hook_note".into(), Value::String(note.join("\n\n")));
        }
    }

    /// `UserPromptSubmit`: `Err(reason)` when a hook blocks the prompt, else the context the
    /// hooks add (with the session start's, if this is the session's first prompt since).
    pub(super) async fn prompt_hook(
        &mut self,
        prompt: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String> {
        let mut fields = Map::new();
        fields.insert("prompt".into(), Value::String(prompt.to_string()));
        let verdict = self
            .run_hooks(HookEvent::UserPromptSubmit, "", fields, events, cancel)
            .await;
        if let Some(reason) = verdict.block {
            return Err(reason);
        }
        let context: Vec<String> = self
            .session_context
            .take()
            .into_iter()
            .chain(verdict.context)
            .collect();
        Ok((!context.is_empty()).then(|| hook_context(&context)))
    }

    /// `Stop`, for a turn that answered after going on `continuations` times for stop hooks:
    /// whether a hook sends the model back to work (its reason is then the next message, and
    /// said). `stop_hook_active` tells a script the turn already went on (Claude Code's name),
    /// so it can let it end; past [`MAX_STOP_CONTINUATIONS`] the hooks are not asked.
    pub(super) async fn stop_hook_continues(
        &mut self,
        continuations: usize,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> bool {
        if continuations >= MAX_STOP_CONTINUATIONS || cancel.is_cancelled() {
            return false;
        }
        let mut fields = Map::new();
        fields.insert("stop_hook_active".into(), Value::Bool(continuations > 0));
        let verdict = self
            .run_hooks(HookEvent::Stop, "", fields, events, cancel)
            .await;
        if let Some(reason) = verdict.stop {
            events.send(AgentEvent::Notice(format!(
                "A Stop hook ended the turn: {reason}"
            )));
            return false;
        }
        let Some(reason) = verdict.block else {
            return false;
        };
        events.send(AgentEvent::Notice(format!(
            "A Stop hook asked the model to go on: {reason}"
        )));
        self.session.push(Message::user(format!(
            "[A Stop hook of the person's asks you to go on before you finish:] {reason}"
        )));
        self.save(events);
        true
    }

    /// `SessionStart`: runs the hooks for a session that started from `source`; the context
    /// they add goes with the session's next prompt.
    pub async fn start_session_hooks(
        &mut self,
        source: SessionSource,
        events: &EventSink,
        cancel: &CancellationToken,
    ) {
        self.tell_hooks_the_session();
        let mut fields = Map::new();
        fields.insert("source".into(), Value::String(source.name().into()));
        let verdict = self
            .run_hooks(
                HookEvent::SessionStart,
                source.name(),
                fields,
                events,
                cancel,
            )
            .await;
        // Nothing to block at a start: a block's reason is only said.
        if let Some(reason) = verdict.block {
            events.send(AgentEvent::Notice(format!(
                "A SessionStart hook said: {reason}"
            )));
        }
        self.session_context = (!verdict.context.is_empty()).then(|| verdict.context.join("\n\n"));
    }

    /// `Notification` (`idle_prompt`): the turn ended and MiniClaw waits for the person.
    pub(super) fn notify_turn_ended(&self, events: &EventSink) {
        if let (Some(hooks), None) = (&self.hooks, &self.request_budget) {
            super::hook_notify::notify(
                hooks,
                "idle_prompt",
                "MiniClaw is waiting for your input".into(),
                events,
            );
        }
    }
}

/// A tool call as Claude Code's hooks read it: `tool_name`, `tool_input` (the arguments as
/// JSON, or their text when they are not), `tool_use_id`.
fn tool_fields(call: &ToolCall) -> Map<String, Value> {
    let input = serde_json::from_str::<Value>(&call.function.arguments)
        .unwrap_or_else(|_| Value::String(call.function.arguments.clone()));
    let mut fields = Map::new();
    fields.insert(
        "tool_name".into(),
        Value::String(call.function.name.clone()),
    );
    fields.insert("tool_input".into(), input);
    fields.insert("tool_use_id".into(), Value::String(call.id.clone()));
    fields
}

/// What hooks added to a prompt, framed so the model knows whose words they are.
fn hook_context(parts: &[String]) -> String {
    format!(
        "[Context added by the person's hooks:]\n{}",
        parts.join("\n\n")
    )
}
