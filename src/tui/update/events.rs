//! Agent events in: each is folded once into the transcript (which the timeline and side panes
//! read), and what it changed moves the conversation cells and the turn's status. Live turns
//! and sessions told again from the history go through here alike.

use std::time::Instant;

use super::effect::Effect;
use crate::agent::history::Glimpse;
use crate::agent::replay::replay;
use crate::agent::{AgentCommand, AgentEvent, Session, TurnOutcome};
use crate::events::{CallOutcome, FailCause, StepEnd};
use crate::llm::Role;
use crate::transcript::{Change, Group};
use crate::tui::calls;
use crate::tui::state::{
    ApprovalView, CallStatus, ContextGauge, Entry, EntryKind, Glimpsed, Overlay, Pane, PickerKind,
    Preview, RetryView, State,
};

/// Whether an event happens now or tells a saved session again.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Told {
    /// The agent's live turn: it moves the turn's status, and its end starts a queued prompt.
    Live,
    /// A saved session: its turns are over; it changes what is shown, nothing that runs.
    Again,
}

/// Applies an agent event; returns what the event loop should do (a queued prompt starts when
/// the turn before it ends).
pub fn on_event(state: &mut State, event: AgentEvent, now: Instant) -> Vec<Effect> {
    apply(state, event, now, Told::Live)
}

fn apply(state: &mut State, event: AgentEvent, now: Instant, told: Told) -> Vec<Effect> {
    let change = state.view.transcript.apply(&event);
    let live = told == Told::Live;
    // Anything of the step after its reasoning ends the reasoning (its line says how long).
    if !matches!(
        event,
        AgentEvent::ReasoningDelta(_)
            | AgentEvent::State(_)
            | AgentEvent::Retrying { .. }
            | AgentEvent::ContextUsage { .. }
            | AgentEvent::McpServers(_)
    ) {
        end_reasoning(state, now);
    }
    match event {
        AgentEvent::State(doing) if live => state.status.running(Some(doing), now),
        AgentEvent::TurnStarted { prompt } => {
            state.status.go_on = false;
            if live {
                state.status.running(None, now);
            }
            turn_started(state, prompt);
        }
        AgentEvent::FilesAttached(mentions) => {
            if let Some(i) = state
                .view
                .entries
                .iter()
                .rposition(|e| e.kind == EntryKind::User)
            {
                state.view.entries[i].mentions = mentions;
                state.view.touch_entry(i);
            }
        }
        AgentEvent::StepStarted { step, max } => {
            state.status.step = step;
            state.status.max_steps = max;
            state.status.retry = None;
        }
        AgentEvent::ReasoningDelta(text) => {
            state.status.retry = None;
            reasoning(state, &text, now, live);
        }
        AgentEvent::ContentDelta(text) => {
            state.status.retry = None;
            let i = live_entry(state);
            state.view.entries[i].text.push_str(&text);
            state.view.entries[i].touch();
        }
        // The text so far was a thought, not the answer: it stays, dimmed.
        AgentEvent::StepFinished(StepEnd::Thought) => {
            if let Some(i) = state.view.live.take() {
                thought(state, i);
            }
        }
        AgentEvent::ToolCallStarted {
            id,
            name,
            arguments,
        } => {
            let mut entry = Entry::call(id, name, arguments);
            if let Some(call) = &mut entry.call
                && let Some(at) = state.allowed_by.iter().position(|(id, _)| *id == call.id)
            {
                call.allowed_by = Some(state.allowed_by.remove(at).1);
            }
            state.view.push_entry(entry);
        }
        // A running call shows how it gets on: a sub-agent's latest steps, a tool's latest
        // output (an MCP server's progress among it).
        AgentEvent::ToolOutputDelta { id, .. } | AgentEvent::Nested { parent_id: id, .. }
            if live =>
        {
            running_preview(state, &id);
        }
        AgentEvent::AllowedByRules { id, rules } => {
            let quoted: Vec<String> = rules.iter().map(|r| format!("\"{r}\"")).collect();
            let what = if quoted.len() == 1 { "rule" } else { "rules" };
            let text = format!("allowed by {what} {}", quoted.join(", "));
            state.allowed_by.retain(|(other, _)| *other != id);
            state.allowed_by.push((id, text));
        }
        AgentEvent::FileEdited { id, diff } => {
            if let Some(i) = state.view.call_entry(&id)
                && let Some(call) = &mut state.view.entries[i].call
            {
                call.diffs.push(diff);
                state.view.touch_entry(i);
            }
        }
        AgentEvent::ToolFinished {
            id,
            result,
            outcome,
            approved,
            duration,
            ..
        } => {
            if let Some(i) = state.view.call_entry(&id)
                && let Some(call) = &mut state.view.entries[i].call
            {
                let exit = crate::events::CommandExit::failed(&call.name, &result);
                call.status = match (calls::failure_reason(&outcome), exit) {
                    (Some(reason), _) => CallStatus::Failed(reason),
                    (None, Some(exit)) => CallStatus::Exited(exit, duration),
                    (None, None) if approved => CallStatus::Approved(duration),
                    (None, None) => CallStatus::Done(duration),
                };
                // A failed call shows only its reason; a finished one what it returned, and
                // one the person interrupted what it had printed by then.
                call.preview = match (&call.status, &outcome) {
                    (_, CallOutcome::Interrupted) => Preview::of_result(result, true),
                    (CallStatus::Failed(_), _) => Preview::default(),
                    _ => Preview::of_result(result, false),
                };
                // The preview changes the entry's lines: its cached wrap must be redone.
                state.view.touch_entry(i);
            }
        }
        AgentEvent::Retrying {
            attempt,
            max_attempts,
            delay,
            cause,
            restarts,
            ..
        } => {
            state.status.queued = None;
            state.status.retry = Some(RetryView {
                attempt,
                max_attempts,
                at: now + delay,
                cause: cause.label(),
            });
            // The answer so far is asked for again from the start: what was shown goes, and
            // a line says why (the transcript's step was emptied the same way).
            if restarts {
                // The same cells take the new attempt's reasoning and text.
                for i in [state.view.live, state.view.reasoning]
                    .into_iter()
                    .flatten()
                {
                    if let Some(entry) = state.view.entries.get_mut(i) {
                        entry.text.clear();
                        entry.touch();
                    }
                }
                state.view.push(
                    EntryKind::Notice,
                    "The stream was cut off mid-answer: asked again, once, from the start.",
                );
            }
        }
        AgentEvent::Error { message } => {
            state.view.push(EntryKind::Error, message);
        }
        AgentEvent::TurnFinished { outcome, usage, .. } if change == Change::TurnEnded => {
            // A live turn that failed for want of DeepSeek's key: the dialog asks for one.
            let no_key = outcome == TurnOutcome::Failed(FailCause::MissingKey);
            if live && no_key && state.preset.is_deepseek() && !state.key_set {
                super::key_dialog::open_if_no_overlay(state);
            }
            turn_finished(state, outcome);
            if usage.is_some() {
                state.status.last_usage = usage;
            }
            // A plan's executor goes on between its items: still busy.
            if live
                && !state
                    .view
                    .transcript
                    .plans
                    .last()
                    .is_some_and(|p| p.running())
            {
                return turn_over(state, now);
            }
        }
        AgentEvent::ContextUsage {
            used,
            budget,
            compact_at,
        } => {
            state.status.context = Some(ContextGauge {
                used,
                budget,
                compact_at,
            });
        }
        AgentEvent::Compacting { turns, .. } if live => state.status.compacting = Some(turns),
        // Counted from when the wait began, so the status line's seconds move with the frames.
        AgentEvent::Queued { waited, started } if live => {
            state.status.queued = match started {
                false => state
                    .status
                    .queued
                    .or_else(|| now.checked_sub(waited).or(Some(now))),
                true => None,
            };
        }
        AgentEvent::Compacted(compaction) => {
            state.status.compacting = None;
            let automatic = compaction.automatic;
            state.view.push_entry(Entry::compaction(&compaction));
            // `/compact` between turns: its request is over.
            if live && !automatic {
                return turn_over(state, now);
            }
        }
        AgentEvent::CompactionFailed { reason, automatic } => {
            state.status.compacting = None;
            state.view.push(
                EntryKind::Error,
                crate::agent::advice::compaction_failed_notice(&reason, automatic),
            );
            if live && !automatic {
                return turn_over(state, now);
            }
        }
        AgentEvent::CompactionInterrupted => {
            state.status.compacting = None;
            state.view.push(
                EntryKind::Notice,
                crate::agent::advice::COMPACTION_INTERRUPTED,
            );
            if live {
                return turn_over(state, now);
            }
        }
        AgentEvent::ContextTrimmed {
            dropped_turns,
            shortened,
        } => {
            state.view.push(
                EntryKind::Notice,
                crate::agent::advice::trimmed_notice(dropped_turns, shortened),
            );
        }
        AgentEvent::HistoryCleared => state.clear_conversation(),
        AgentEvent::Notice(text) => {
            state.view.push(EntryKind::Notice, text);
        }
        AgentEvent::Hooks(hooks) => {
            state
                .view
                .push(EntryKind::Notice, crate::tui::status_report::hooks(&hooks));
            state.scroll[crate::tui::state::Pane::Conversation].jump_to_bottom();
        }
        AgentEvent::Jobs(jobs) => {
            state
                .view
                .push(EntryKind::Notice, crate::tui::status_report::jobs(&jobs));
            state.scroll[crate::tui::state::Pane::Conversation].jump_to_bottom();
        }
        AgentEvent::StepLimitReached { max } => {
            let way_on = format!(
                "Press Enter to go on for another {max} step{} (it sends `continue`), or change the limit with /steps N.",
                if max == 1 { "" } else { "s" }
            );
            state.view.push(
                EntryKind::Notice,
                crate::agent::advice::step_limit_notice(max, if live { &way_on } else { "" }),
            );
            // Enter on the empty input goes on, until something else is sent.
            state.status.go_on = live;
        }
        AgentEvent::Plan(event) => {
            let over = matches!(event, crate::events::PlanEvent::Finished(_));
            super::plan::on_plan(state, event);
            if over && live {
                return turn_over(state, now);
            }
        }
        other => between_turns(state, other, now),
    }
    Vec::new()
}

/// Nothing runs any more: the oldest message queued meanwhile starts its turn.
fn turn_over(state: &mut State, now: Instant) -> Vec<Effect> {
    state.status.idle();
    if state.composer.queued.is_empty() {
        return Vec::new();
    }
    let text = state.composer.queued.remove(0);
    state.status.sent(now);
    vec![Effect::Command(AgentCommand::Prompt(text))]
}

/// The events of the sessions, approvals, file changes and servers: what happens around turns.
fn between_turns(state: &mut State, event: AgentEvent, now: Instant) {
    match event {
        AgentEvent::SessionOpened {
            id,
            title,
            notice,
            replay,
        } => {
            state.clear_conversation();
            state.session_id = Some(id);
            for event in replay {
                apply(state, event, now, Told::Again);
            }
            state.status.step = 0;
            state.view.session_title = title;
            state.view.push(EntryKind::Notice, notice);
        }
        AgentEvent::SessionLoaded {
            id,
            title,
            replay,
            prompts,
            notices,
        } => session_loaded(state, (id, title), replay, prompts, notices, now),
        AgentEvent::SessionUnavailable(why) => state.unavailable = Some(why),
        AgentEvent::SessionRenamed(title) => {
            state.view.push(
                EntryKind::Notice,
                format!("This session is now called \u{201c}{title}\u{201d}."),
            );
            state.view.session_title = Some(title);
        }
        AgentEvent::FileChanges(diff) => {
            state
                .view
                .push(EntryKind::Notice, "What this session's turns changed:");
            state.view.push(EntryKind::Diff, diff);
        }
        AgentEvent::InstructionsDiff(diff) => {
            state.view.push(
                EntryKind::Notice,
                "How AGENTS.md changed since this session last read it:",
            );
            state.view.push(EntryKind::Diff, diff);
        }
        AgentEvent::UndoConflict(diff) => {
            state.view.push(
                EntryKind::Notice,
                "Files were changed since that turn; undoing it would do this to them:",
            );
            state.view.push(EntryKind::Diff, diff);
            state.overlay = Overlay::ConfirmUndo;
        }
        AgentEvent::ApprovalRequested(request) => {
            state.approvals.push(ApprovalView::new(request));
            super::approval::show_waiting(state, now);
        }
        AgentEvent::Sessions(list) => {
            // Ctrl+R searches their prompts too (newest session first).
            state.composer.archived_prompts = list
                .iter()
                .flat_map(|s| s.prompts.iter().cloned())
                .collect();
            if let Some(picker) = state
                .overlay
                .picker_mut()
                .filter(|p| p.kind == PickerKind::Sessions)
            {
                picker.set_sessions(&list);
            }
        }
        AgentEvent::McpServers(servers) => state.mcp = servers,
        // The transcript holds a call's output and a sub-agent's work; the panes read it there.
        _ => {}
    }
}

/// The whole session takes the place of its glimpse: told again from the start, the notices
/// and anything shown since the glimpse after it; the prompts typed meanwhile stay recallable.
fn session_loaded(
    state: &mut State,
    (id, title): (String, Option<String>),
    replay: Vec<AgentEvent>,
    prompts: Vec<String>,
    notices: Vec<String>,
    now: Instant,
) {
    let glimpsed = state.view.opening.unwrap_or_default();
    let after = state
        .view
        .entries
        .split_off(glimpsed.entries.min(state.view.entries.len()));
    let history = &mut state.composer.prompt_history;
    let typed = history.split_off(glimpsed.prompts.1.min(history.len()));
    history.truncate(glimpsed.prompts.0);
    // A prompt being recalled stays the one shown: those after the glimpse's move with them.
    let (glimpsed_count, loaded_count) = (glimpsed.prompts.1 - glimpsed.prompts.0, prompts.len());
    state.composer.history_pos = match state.composer.history_pos {
        Some(pos) if pos >= glimpsed.prompts.1 => Some(pos - glimpsed_count + loaded_count),
        Some(pos) if pos < glimpsed.prompts.0 => Some(pos),
        // One of the glimpse's: the whole session's own copy of it (the glimpse's are its
        // last), unless the session read is not the one glimpsed (a damaged history).
        Some(pos) if loaded_count >= glimpsed_count => Some(pos + loaded_count - glimpsed_count),
        Some(_) => None,
        None => None,
    };
    history.extend(prompts);
    history.extend(typed);
    // The replay tells the limit the agent had when it read the session; one set meanwhile
    // (`/steps`) reached the agent after that and stands.
    let max_steps = state.status.max_steps;
    state.clear_conversation();
    state.session_id = Some(id);
    for event in replay {
        apply(state, event, now, Told::Again);
    }
    state.status.max_steps = max_steps;
    state.status.step = 0;
    state.view.session_title = title;
    for notice in notices {
        state.view.push(EntryKind::Notice, notice);
    }
    for entry in after {
        state.view.push_entry(entry);
    }
}

/// Shows the glimpse of the session being read (its last turns): the whole session takes its
/// place when it is read (`SessionLoaded`); until then the timeline says it is being read.
pub fn show_glimpse(state: &mut State, glimpse: Option<&Glimpse>, now: Instant) {
    let from = state.composer.prompt_history.len();
    if let Some(glimpse) = glimpse {
        show_session(state, &glimpse.session, now);
        state.view.session_title = glimpse.title.clone();
        state.session_id = Some(glimpse.session.id.clone());
    }
    state.view.opening = Some(Glimpsed {
        entries: state.view.entries.len(),
        prompts: (from, state.composer.prompt_history.len()),
    });
}

/// Shows a saved session as its turns were seen live: its events, replayed through
/// [`on_event`] (the same reducer live turns go through); its prompts can be recalled with Up.
pub fn show_session(state: &mut State, session: &Session, now: Instant) {
    for event in replay(session, state.status.max_steps) {
        apply(state, event, now, Told::Again);
    }
    state.composer.prompt_history.extend(
        session
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(|m| m.shown().to_string()),
    );
    state.status.step = 0;
    state.view.session_title = session.title();
}

/// A turn began: its prompt joins the conversation, and the side panes follow its live step
/// again, whatever was selected or scrolled before (selecting a step stops following; End or
/// the next turn resumes it).
fn turn_started(state: &mut State, prompt: String) {
    if state.view.session_title.is_none() {
        state.view.session_title = Some(crate::agent::session::title_from_prompt(&prompt));
    }
    let entry = prompt_entry(state, prompt);
    state.view.push_entry(entry);
    state.scroll[Pane::Conversation].jump_to_bottom();
    state.status.step = 0;
    state.view.selected = None;
    for pane in Pane::SIDE {
        state.scroll[pane].jump_to_bottom();
    }
}

/// The cell that shows a turn's prompt: what the turn belongs to says how.
fn prompt_entry(state: &State, prompt: String) -> Entry {
    let group = state.view.transcript.turns.last().map(|t| t.group);
    match group {
        Some(Group::Planner { .. }) => Entry::new(EntryKind::User, format!("/plan {prompt}")),
        Some(Group::Item { plan, item }) => {
            let total = state
                .view
                .transcript
                .plans
                .get(plan)
                .map_or(0, |p| p.items.len());
            Entry::new(
                EntryKind::PlanItem,
                format!("Item {} of {total} · {prompt}", item + 1),
            )
        }
        _ => Entry::new(EntryKind::User, prompt),
    }
}

fn live_entry(state: &mut State) -> usize {
    match state.view.live {
        Some(i) if i < state.view.entries.len() => i,
        _ => {
            let i = state.view.push(EntryKind::Assistant, "");
            state.view.live = Some(i);
            i
        }
    }
}

/// Adds `text` to the running step's reasoning line, which begins with its first piece.
fn reasoning(state: &mut State, text: &str, now: Instant, live: bool) {
    let open = state.view.reasoning.filter(|&i| {
        state
            .view
            .entries
            .get(i)
            .is_some_and(|e| e.kind == EntryKind::Reasoning)
    });
    let i = match open {
        Some(i) => i,
        None => {
            let mut entry = Entry::new(EntryKind::Reasoning, "");
            // A saved session keeps no timing: its line says only that it thought.
            entry.thinking.started = live.then_some(now);
            let i = state.view.push_entry(entry);
            state.view.reasoning = Some(i);
            i
        }
    };
    state.view.entries[i].text.push_str(text);
    state.view.touch_entry(i);
}

/// Ends the running step's reasoning, if one streams: its line now says how long it took.
fn end_reasoning(state: &mut State, now: Instant) {
    let Some(i) = state.view.reasoning.take() else {
        return;
    };
    if let Some(e) = state.view.entries.get_mut(i)
        && e.kind == EntryKind::Reasoning
    {
        e.thinking.ended = true;
        e.thinking.took = e
            .thinking
            .started
            .map(|at| now.saturating_duration_since(at));
        e.done = true;
        state.view.touch_entry(i);
    }
}

/// Turns the live answer `i` into a thought (the model went on to call tools), or drops it
/// when nothing was said.
fn thought(state: &mut State, i: usize) {
    let Some(e) = state.view.entries.get_mut(i) else {
        return;
    };
    if e.text.trim().is_empty() {
        if i + 1 == state.view.entries.len() {
            state.view.entries.pop();
        }
        return;
    }
    let text = std::mem::take(&mut e.text);
    *e = Entry::new(EntryKind::Thought, text.trim_end());
    state.view.touch_entry(i);
}

/// The lines a running call shows under its call line: the last few of its sub-agent's
/// steps, or the last of its output so far.
const RUNNING_LINES: usize = 3;

/// Updates what running call `id` shows of its progress (read from the transcript, which
/// has folded the event already).
fn running_preview(state: &mut State, id: &str) {
    let Some((step, call)) = state.view.transcript.find_call(id) else {
        return;
    };
    let folded = &state.view.transcript.steps[step].calls[call];
    let lines: Vec<String> = match folded.sub.as_deref() {
        Some(sub) => {
            let all = calls::sub_agent_lines(sub);
            all[all.len().saturating_sub(RUNNING_LINES)..].to_vec()
        }
        None => {
            let mut tail: Vec<String> = folded
                .output
                .lines()
                .rev()
                .filter(|l| !l.trim().is_empty())
                .take(RUNNING_LINES)
                .map(|l| crate::terminal_text::clean(l).replace('\t', "    "))
                .collect();
            tail.reverse();
            tail
        }
    };
    if let Some(i) = state.view.call_entry(id)
        && let Some(line) = &mut state.view.entries[i].call
        && line.status == CallStatus::Running
        && line.preview_lines() != lines.as_slice()
    {
        line.preview = Preview::Lines(lines);
        state.view.touch_entry(i);
    }
}

fn finish_live(state: &mut State) {
    if let Some(i) = state.view.live.take()
        && let Some(e) = state.view.entries.get_mut(i)
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
    let interrupted = outcome == TurnOutcome::Interrupted;
    match state.view.live {
        Some(i) => {
            let e = &mut state.view.entries[i];
            e.interrupted = interrupted;
            if e.text.is_empty() && !interrupted {
                state.view.entries.remove(i);
                state.view.live = None;
            }
        }
        None if interrupted => {
            let i = state.view.push(EntryKind::Assistant, "");
            state.view.entries[i].interrupted = true;
        }
        None => {}
    }
    finish_live(state);
    // A call that never reported its end (the turn was stopped under it) stops spinning.
    let open: Vec<usize> = (0..state.view.entries.len())
        .rev()
        .take_while(|&i| state.view.entries[i].kind != EntryKind::User)
        .filter(|&i| {
            state.view.entries[i]
                .call
                .as_ref()
                .is_some_and(|c| c.status == CallStatus::Running)
        })
        .collect();
    let why = match outcome {
        TurnOutcome::Interrupted => "interrupted",
        TurnOutcome::Failed(_) => "failed",
        _ => "stopped",
    };
    for i in open {
        if let Some(call) = &mut state.view.entries[i].call {
            call.status = CallStatus::Failed(why.to_string());
        }
        state.view.touch_entry(i);
    }
}
