//! Agent events in: the conversation, the steps and the status follow what the agent reports.
//! Live turns and sessions replayed from the history go through here alike.

use std::time::{Duration, Instant};

use crate::agent::replay::replay;
use crate::agent::{AgentEvent, AgentState, Session, TurnOutcome};
use crate::llm::Role;
use crate::tui::calls;
use crate::tui::state::{
    ApprovalView, CallStatus, CallView, Entry, EntryKind, Overlay, Pane, PickerKind, RetryView,
    State, StepStop, StepView,
};

/// Applies an agent event.
pub fn on_event(state: &mut State, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::State(s) => {
            state.agent_state = s;
            if s == AgentState::Idle {
                state.busy_since = None;
                state.retry = None;
                finish_live(state);
            } else if state.busy_since.is_none() {
                state.busy_since = Some(now);
            }
        }
        AgentEvent::TurnStarted { prompt } => turn_started(state, prompt),
        AgentEvent::FilesAttached(mentions) => {
            if let Some(i) = state
                .entries
                .iter()
                .rposition(|e| e.kind == EntryKind::User)
            {
                state.entries[i].mentions = mentions;
                state.touch_entry(i);
            }
        }
        AgentEvent::StepStarted { step, max } => step_started(state, step, max),
        AgentEvent::ReasoningDelta(text) => {
            state.retry = None;
            if let Some(step) = state.steps.last_mut() {
                step.reasoning.push_str(&text);
            }
        }
        AgentEvent::ContentDelta(text) => {
            state.retry = None;
            if let Some(step) = state.steps.last_mut() {
                step.content.push_str(&text);
            }
            let i = live_entry(state);
            state.entries[i].text.push_str(&text);
            state.entries[i].touch();
        }
        AgentEvent::ToolCallStarted {
            id,
            name,
            arguments,
        } => call_started(state, id, name, arguments),
        AgentEvent::ToolOutputDelta { id, text } => {
            if let Some(call) = state.call_mut(&id) {
                call.output.push_str(&text);
            }
        }
        AgentEvent::ToolFinished {
            id,
            result,
            duration,
            ..
        } => call_finished(state, &id, result, duration),
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            ..
        } => {
            state.retry = Some(RetryView {
                attempt,
                max_attempts,
                at: now + delay,
            });
        }
        AgentEvent::Nested { parent_id, event } => nested(state, &parent_id, *event),
        AgentEvent::Error { message } => {
            state.push(EntryKind::Error, message);
        }
        AgentEvent::TurnFinished { outcome, usage, .. } => {
            // A live turn (a replayed one is never busy) that failed without a key: the dialog
            // asks for one again.
            let live = state.busy_since.is_some();
            if live && outcome == TurnOutcome::Failed && !state.key_set {
                super::key_dialog::open_if_no_overlay(state);
            }
            turn_finished(state, outcome);
            if usage.is_some() {
                state.last_usage = usage;
            }
        }
        AgentEvent::ContextUsage { used, budget } => state.context = Some((used, budget)),
        AgentEvent::HistoryCleared => state.clear_conversation(),
        AgentEvent::Notice(text) => {
            state.push(EntryKind::Notice, text);
        }
        other => between_turns(state, other, now),
    }
}

/// A model call began: a new step of the turn (under its plan item, if it has one).
fn step_started(state: &mut State, step: usize, max: usize) {
    state.step = step;
    state.max_steps = max;
    state.retry = None;
    let turn = state.turns.saturating_sub(1);
    state.steps.push(StepView {
        turn,
        number: step,
        group: state.plans.group,
        ..Default::default()
    });
}

/// The events of the sessions, approvals, file changes and servers: what happens around turns.
fn between_turns(state: &mut State, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::SessionOpened {
            title,
            notice,
            replay,
        } => {
            state.clear_conversation();
            for event in replay {
                on_event(state, event, now);
            }
            state.step = 0;
            state.session_title = title;
            state.push(EntryKind::Notice, notice);
        }
        AgentEvent::SessionRenamed(title) => {
            state.push(
                EntryKind::Notice,
                format!("This session is now called \u{201c}{title}\u{201d}."),
            );
            state.session_title = Some(title);
        }
        AgentEvent::FileChanges(diff) => {
            state.push(EntryKind::Notice, "What this session's turns changed:");
            state.push(EntryKind::Diff, diff);
        }
        AgentEvent::InstructionsDiff(diff) => {
            state.push(
                EntryKind::Notice,
                "How AGENTS.md changed since this session last read it:",
            );
            state.push(EntryKind::Diff, diff);
        }
        AgentEvent::UndoConflict(diff) => {
            state.push(
                EntryKind::Notice,
                "Files were changed since that turn; undoing it would do this to them:",
            );
            state.push(EntryKind::Diff, diff);
            state.overlay = Overlay::ConfirmUndo;
        }
        AgentEvent::ApprovalRequested(request) => {
            state.approvals.push(ApprovalView::new(request));
            super::approval::show_waiting(state, now);
        }
        AgentEvent::Sessions(list) => {
            if let Some(picker) = state
                .picker
                .as_mut()
                .filter(|p| p.kind == PickerKind::Sessions)
            {
                picker.set_sessions(&list);
            }
        }
        AgentEvent::McpServers(servers) => state.mcp = servers,
        AgentEvent::Plan(event) => super::plan::on_plan(state, event),
        // The events of a turn are `on_event`'s.
        _ => {}
    }
}

/// A tool call began: under its step, and as a line in the conversation (the text before it
/// was a thought).
fn call_started(state: &mut State, id: String, name: String, arguments: String) {
    if let Some(step) = state.steps.last_mut() {
        step.calls.push(CallView {
            id: id.clone(),
            name: name.clone(),
            arguments: arguments.clone(),
            ..Default::default()
        });
    }
    // Text before a tool call was a thought, not the answer: it stays, dimmed.
    if let Some(i) = state.live.take() {
        thought(state, i);
    }
    state.push_entry(Entry::call(id, name, arguments));
}

/// A tool call ended: its conversation line says how, its step keeps the result.
fn call_finished(
    state: &mut State,
    id: &str,
    result: serde_json::Value,
    duration: Option<Duration>,
) {
    if let Some(i) = state.call_entry(id)
        && let Some(call) = &mut state.entries[i].call
    {
        call.status = match calls::failure_reason(&result) {
            Some(reason) => CallStatus::Failed(reason),
            None if result["approved_by_user"] == true => CallStatus::Approved(duration),
            None => CallStatus::Done(duration),
        };
        state.touch_entry(i);
    }
    if let Some(call) = state.call_mut(id) {
        call.result = Some(result);
        call.duration = duration;
    }
}

/// Shows a saved session as its turns were seen live: its events, replayed through
/// [`on_event`] (the same reducer live turns go through); its prompts can be recalled with Up.
pub fn show_session(state: &mut State, session: &Session, now: Instant) {
    for event in replay(session, state.max_steps) {
        on_event(state, event, now);
    }
    state.prompt_history.extend(
        session
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.shown().to_string()),
    );
    state.step = 0;
    state.session_title = session.title();
}

/// A turn began: its prompt joins the conversation, and the side panes follow its live step
/// again, whatever was selected or scrolled before (selecting a step stops following; End or
/// the next turn resumes it).
fn turn_started(state: &mut State, prompt: String) {
    if state.session_title.is_none() {
        state.session_title = Some(crate::agent::session::title_from_prompt(&prompt));
    }
    let entry = super::plan::turn_entry(state, prompt);
    state.push_entry(entry);
    state.scroll[Pane::Conversation].jump_to_bottom();
    state.turns += 1;
    state.step = 0;
    state.selected = None;
    for pane in Pane::SIDE {
        state.scroll[pane].jump_to_bottom();
    }
}

fn live_entry(state: &mut State) -> usize {
    match state.live {
        Some(i) if i < state.entries.len() => i,
        _ => {
            let i = state.push(EntryKind::Assistant, "");
            state.live = Some(i);
            i
        }
    }
}

/// Turns the live answer `i` into a thought (the model went on to call tools), or drops it
/// when nothing was said.
fn thought(state: &mut State, i: usize) {
    let Some(e) = state.entries.get_mut(i) else {
        return;
    };
    if e.text.trim().is_empty() {
        if i + 1 == state.entries.len() {
            state.entries.pop();
        }
        return;
    }
    let text = std::mem::take(&mut e.text);
    *e = Entry::new(EntryKind::Thought, text.trim_end());
    state.touch_entry(i);
}

fn finish_live(state: &mut State) {
    if let Some(i) = state.live.take()
        && let Some(e) = state.entries.get_mut(i)
    {
        e.done = true;
        e.touch();
    }
}

fn turn_finished(state: &mut State, outcome: TurnOutcome) {
    // Nothing of a finished turn waits for an answer any more.
    state.approvals.clear();
    if state.overlay == Overlay::Approval {
        state.overlay = Overlay::None;
    }
    let stopped = match outcome {
        TurnOutcome::Interrupted => Some(StepStop::Interrupted),
        TurnOutcome::Failed => Some(StepStop::Failed),
        _ => None,
    };
    let turn = state.turns.saturating_sub(1);
    if let Some(step) = state.steps.last_mut().filter(|s| s.turn == turn) {
        step.stopped = stopped;
    }
    let interrupted = outcome == TurnOutcome::Interrupted;
    match state.live {
        Some(i) => {
            let e = &mut state.entries[i];
            e.interrupted = interrupted;
            if e.text.is_empty() && !interrupted {
                state.entries.remove(i);
                state.live = None;
            }
        }
        None if interrupted => {
            let i = state.push(EntryKind::Assistant, "");
            state.entries[i].interrupted = true;
        }
        None => {}
    }
    finish_live(state);
    // A call that never reported its end (the turn was stopped under it) stops spinning.
    let open: Vec<usize> = (0..state.entries.len())
        .rev()
        .take_while(|&i| state.entries[i].kind != EntryKind::User)
        .filter(|&i| {
            state.entries[i]
                .call
                .as_ref()
                .is_some_and(|c| c.status == CallStatus::Running)
        })
        .collect();
    for i in open {
        if let Some(call) = &mut state.entries[i].call {
            let why = match stopped {
                Some(StepStop::Interrupted) => "interrupted",
                Some(StepStop::Failed) => "failed",
                None => "stopped",
            };
            call.status = CallStatus::Failed(why.to_string());
        }
        state.touch_entry(i);
    }
    state.agent_state = AgentState::Idle;
    state.busy_since = None;
    state.retry = None;
}

fn nested(state: &mut State, parent_id: &str, event: AgentEvent) {
    let Some(call) = state.call_mut(parent_id) else {
        return;
    };
    match event {
        AgentEvent::ToolCallStarted {
            name, arguments, ..
        } => {
            call.nested_text.clear();
            call.nested
                .push(format!("↳ {}", calls::call_label(&name, &arguments)));
        }
        AgentEvent::ToolFinished {
            result, duration, ..
        } => {
            let ok = result.get("ok").and_then(serde_json::Value::as_bool) != Some(false);
            if let Some(last) = call.nested.last_mut() {
                last.push_str(if ok { "  ✓" } else { "  ✗" });
                if let Some(d) = duration {
                    last.push_str(&format!(" {} ms", d.as_millis()));
                }
            }
        }
        AgentEvent::StepStarted { step, .. } => {
            call.nested_text.clear();
            call.nested.push(format!("↳ step {step}"));
        }
        AgentEvent::ContentDelta(text) => call.nested_text.push_str(&text),
        AgentEvent::Error { message } => call.nested.push(format!("↳ ✗ {message}")),
        AgentEvent::TurnFinished { .. } if !call.nested_text.trim().is_empty() => {
            let first = call.nested_text.trim().lines().next().unwrap_or("");
            call.nested.push(format!("↳ answer: {first}"));
        }
        _ => {}
    }
}
