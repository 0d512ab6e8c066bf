//! State changes: actions and agent events in, effects out as data (the event loop performs
//! them). Time is passed in so tests are deterministic.

use std::time::{Duration, Instant};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::keymap::{Action, KeyContext};
use super::paste;
use super::state::{
    CallStatus, Entry, EntryKind, Focus, Overlay, RetryView, State, StepStop, StepView, TIMELINE,
};
use crate::agent::{AgentCommand, AgentEvent, AgentState, TurnOutcome};
use crate::llm::Preset;

/// How long after a Ctrl+C a second one quits.
pub const QUIT_WINDOW: Duration = Duration::from_secs(2);

/// Something the event loop must do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Send a command to the agent.
    Command(AgentCommand),
    /// Use this preset from the next request on.
    SetPreset(Preset),
    /// Interrupt the running turn.
    Interrupt,
    /// Copy text to the clipboard.
    Copy(String),
    /// Leave.
    Quit,
}

/// The keymap's view of the state at `now`.
pub fn key_context(state: &State, now: Instant) -> KeyContext {
    let row = state.input.cursor().0;
    KeyContext {
        focus: state.focus,
        overlay: state.overlay,
        busy: state.busy(),
        input_empty: state.input_empty(),
        on_first_line: row == 0,
        on_last_line: row + 1 >= state.input.lines().len(),
        quit_armed: state
            .last_ctrl_c
            .is_some_and(|t| now.saturating_duration_since(t) < QUIT_WINDOW),
    }
}

/// Applies an action.
pub fn apply(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    match action {
        Action::None => {}
        Action::Send => send(state, now, &mut effects),
        Action::Newline => state.input.insert_newline(),
        Action::Edit(key) => {
            state.focus = Focus::Input;
            state.history_pos = None;
            if !delete_paste(state, key) {
                state.input.input(key);
            }
        }
        Action::Paste(text) => paste(state, &text),
        Action::ToggleFold => toggle_fold(state, now),
        Action::HistoryPrev => recall(state, -1),
        Action::HistoryNext => recall(state, 1),
        Action::TogglePreset => {
            let preset = state.preset.toggled();
            set_preset(state, preset, &mut effects);
        }
        // Clearing under a running turn would let its answer land in a history just emptied.
        Action::AskClear => ask_clear(state, now),
        Action::ConfirmYes => {
            state.overlay = Overlay::None;
            clear_view(state);
            effects.push(Effect::Command(AgentCommand::ClearHistory));
        }
        Action::ConfirmNo | Action::CloseOverlay => state.overlay = Overlay::None,
        Action::ScrollPage(pages) => {
            let s = &mut state.scroll[State::scroll_slot(state.focus)];
            let page = s.height.saturating_sub(1).max(1) as isize;
            s.by(pages * page);
        }
        Action::ScrollLine(lines) => state.scroll[State::scroll_slot(state.focus)].by(lines),
        Action::ScrollAt { column, row, delta } => {
            if let Some(slot) = pane_at(state, column, row) {
                state.scroll[slot].by(delta);
            }
        }
        Action::ScrollTop => state.scroll[State::scroll_slot(state.focus)].to_top(),
        Action::ScrollBottom => {
            // End in a side pane also returns the panes to following the live step.
            if matches!(
                state.focus,
                Focus::Timeline | Focus::Reasoning | Focus::ToolOutput
            ) {
                state.selected = None;
            }
            state.scroll[State::scroll_slot(state.focus)].to_bottom();
        }
        Action::FocusNext => cycle_focus(state, 1),
        Action::FocusPrev => cycle_focus(state, -1),
        Action::FocusInput => state.focus = Focus::Input,
        Action::SelectPrev => select(state, -1),
        Action::SelectNext => select(state, 1),
        Action::ToggleStep => {
            if let Some(step) = state.selected.and_then(|i| state.steps.get_mut(i)) {
                step.expanded = !step.expanded;
                state.reveal_selection = true;
            }
        }
        Action::ToggleAllSteps => {
            let expand = !state.steps.iter().all(|s| s.expanded);
            for s in &mut state.steps {
                s.expanded = expand;
            }
            // Expanded, the view opens at the selected step (else the latest turn's first), not
            // at the bottom of the last one.
            if expand && let Some(last) = state.steps.last().map(|s| s.turn) {
                if state.selected.is_none() {
                    state.selected = state.steps.iter().position(|s| s.turn == last);
                }
                state.reveal_selection = true;
                state.scroll[TIMELINE].follow = false;
            }
        }
        Action::ToggleReasoning => state.show_reasoning = !state.show_reasoning,
        Action::ToggleSidePanes => state.side_collapsed = !state.side_collapsed,
        Action::ShowHelp => {
            state.overlay = Overlay::Help;
            state.help_scroll = 0;
        }
        Action::ScrollHelp(lines) => {
            state.help_scroll = state
                .help_scroll
                .saturating_add_signed(lines)
                .min(super::panes::help::line_count());
        }
        Action::Interrupt => {
            if state.busy() {
                effects.push(Effect::Interrupt);
            }
        }
        Action::ClearInput => {
            if state.input_empty() {
                flash(state, now, "Press Ctrl+C again within 2 s to quit");
            } else {
                // The cleared text can be recalled with Up, like a sent prompt.
                let text = state.input_expanded();
                state.prompt_history.push(text);
                flash(
                    state,
                    now,
                    "Input cleared (Up brings it back) · Ctrl+C again quits",
                );
            }
            state.reset_input();
            state.history_pos = None;
            state.last_ctrl_c = Some(now);
        }
        Action::Quit => {
            state.quit = true;
            effects.push(Effect::Quit);
        }
        Action::Copy => copy(state, &mut effects),
    }
    effects
}

fn send(state: &mut State, now: Instant, effects: &mut Vec<Effect>) {
    let text = state.input_expanded();
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return;
    }
    if let Some(command) = trimmed.strip_prefix('/') {
        let command = command.to_string();
        state.reset_input();
        slash(state, &command, now, effects);
        return;
    }
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: wait for it, or press Esc to interrupt it",
        );
        return;
    }
    state.prompt_history.push(text.clone());
    state.history_pos = None;
    state.reset_input();
    state.push(EntryKind::User, text.clone());
    state.scroll[super::state::CONV].to_bottom();
    state.busy_since = Some(now);
    state.agent_state = AgentState::Thinking;
    state.turns += 1;
    state.step = 0;
    state.retry = None;
    // A new turn is watched live: whatever step was selected or scrolled to before, the side
    // panes follow this turn's live step again (selecting a step stops following; End resumes).
    state.selected = None;
    for pane in [
        super::state::TIMELINE,
        super::state::REASONING,
        super::state::TOOL,
    ] {
        state.scroll[pane].to_bottom();
    }
    effects.push(Effect::Command(AgentCommand::Prompt(text)));
}

/// Inserts a paste; more than [`paste::FOLD_LINES`] lines stand in the input as one marker.
fn paste(state: &mut State, text: &str) {
    state.focus = Focus::Input;
    state.history_pos = None;
    // Terminals send pasted newlines as CR.
    let text = text.replace("\r\n", "\n").replace('\r', "\n");
    let lines = text.trim_end_matches('\n').split('\n').count();
    if lines <= paste::FOLD_LINES {
        state.input.insert_str(text);
        return;
    }
    let marker = paste::marker(lines, &state.pastes);
    state.input.insert_str(&marker);
    state.pastes.push(paste::Paste { marker, text });
}

/// Backspace just after a paste marker, or Delete just before one, removes the whole marker
/// and its paste. Returns whether it did.
fn delete_paste(state: &mut State, key: KeyEvent) -> bool {
    if state.pastes.is_empty() || !key.modifiers.is_empty() {
        return false;
    }
    let ratatui_textarea::DataCursor(row, col) = state.input.cursor();
    let line = state.input.lines().get(row).cloned().unwrap_or_default();
    let found = match key.code {
        KeyCode::Backspace => paste::ending_at(&line, col, &state.pastes),
        KeyCode::Delete => paste::starting_at(&line, col, &state.pastes),
        _ => None,
    };
    let Some(i) = found else {
        return false;
    };
    let removed = state.pastes.remove(i);
    let chars = removed.marker.chars().count();
    if key.code == KeyCode::Backspace {
        for _ in 0..chars {
            state.input.move_cursor(ratatui_textarea::CursorMove::Back);
        }
    }
    state.input.delete_str(chars);
    true
}

/// Enter in the conversation shows whole (or folds again) the long prompts in view.
fn toggle_fold(state: &mut State, now: Instant) {
    let scroll = &state.scroll[super::state::CONV];
    let top = scroll.effective_top();
    let bottom = top + scroll.height;
    let offsets = &state.conv_index.offsets;
    let in_view: Vec<usize> = (0..state.entries.len())
        .filter(|&i| {
            let (start, end) = (
                offsets.get(i).copied().unwrap_or(usize::MAX),
                offsets.get(i + 1).copied().unwrap_or(usize::MAX),
            );
            start < bottom && end > top && super::panes::conversation::foldable(&state.entries[i])
        })
        .collect();
    if in_view.is_empty() {
        flash(state, now, "No long message in view to show whole");
        return;
    }
    let expand = in_view.iter().any(|&i| !state.entries[i].expanded);
    for i in in_view {
        state.entries[i].expanded = expand;
        state.touch_entry(i);
    }
}

/// How long a flash hint stays in the status line.
pub const FLASH_FOR: std::time::Duration = std::time::Duration::from_secs(2);

/// Shows `text` in the status line for a moment.
fn flash(state: &mut State, now: Instant, text: &str) {
    state.flash = Some((text.to_string(), now + FLASH_FOR));
}

/// Asks before clearing; refuses under a running turn, whose answer would otherwise land in a
/// history just emptied.
fn ask_clear(state: &mut State, now: Instant) {
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: press Esc to interrupt it, then clear the history",
        );
    } else {
        state.overlay = Overlay::ConfirmClear;
    }
}

fn slash(state: &mut State, command: &str, now: Instant, effects: &mut Vec<Effect>) {
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or("");
    let arg = words.next();
    match (name, arg) {
        ("model", None) => {
            let text = format!(
                "Model: {} (F2 switches; /model NAME picks one of: {}).",
                state.preset.model(),
                Preset::NAMES.join(", ")
            );
            state.push(EntryKind::Notice, text);
        }
        // Only the presets here: another model name is a start-up choice (--model), for
        // another server.
        ("model", Some(name)) => match Preset::from_name(name) {
            Preset::Custom(other) => {
                state.push(
                    EntryKind::Error,
                    format!(
                        "Unknown model \"{other}\": choose one of {}.",
                        Preset::NAMES.join(", ")
                    ),
                );
            }
            preset => {
                let text = format!("Model: {preset}.");
                set_preset(state, preset, effects);
                state.push(EntryKind::Notice, text);
            }
        },
        ("steps", None) => {
            let text = format!(
                "Steps per turn: at most {} (/steps N sets it for the rest of this session, 1 to 100).",
                state.max_steps
            );
            state.push(EntryKind::Notice, text);
        }
        ("steps", Some(n)) => match n.parse::<usize>() {
            Ok(max @ 1..=100) => {
                state.max_steps = max;
                effects.push(Effect::Command(AgentCommand::SetMaxSteps(max)));
                state.push(
                    EntryKind::Notice,
                    format!("Steps per turn: at most {max} from the next turn on."),
                );
            }
            _ => {
                state.push(
                    EntryKind::Error,
                    format!("`/steps {n}`: give a whole number from 1 to 100."),
                );
            }
        },
        ("clear", _) => ask_clear(state, now),
        ("quit" | "exit", _) => {
            state.quit = true;
            effects.push(Effect::Quit);
        }
        ("copy", None) => copy(state, effects),
        ("copy", Some(n)) => copy_block(state, n, effects),
        ("help", _) => state.overlay = Overlay::Help,
        ("tools", _) => {
            let mut text = String::from("Tools:");
            if state.tools.is_empty() {
                text.push_str(" none.");
            }
            for (name, source, description) in &state.tools {
                text.push_str(&format!("\n  {name} [{source}] — {description}"));
            }
            state.push(EntryKind::Notice, text);
        }
        _ => {
            state.push(
                EntryKind::Error,
                format!(
                    "Unknown command `/{name}`. Commands: /model [NAME], /steps [N], /clear, /copy [N], /tools, /help, /quit."
                ),
            );
        }
    }
}

fn set_preset(state: &mut State, preset: Preset, effects: &mut Vec<Effect>) {
    state.preset = preset.clone();
    effects.push(Effect::SetPreset(preset));
}

fn copy(state: &mut State, effects: &mut Vec<Effect>) {
    match state.last_answer().map(str::to_string) {
        Some(answer) => {
            let chars = answer.chars().count();
            effects.push(Effect::Copy(answer));
            state.push(
                EntryKind::Notice,
                format!(
                    "Sent the last answer ({chars} characters) to the clipboard with OSC 52. \
                     If nothing was copied, your terminal does not allow it (in tmux: \
                     set -g set-clipboard on)."
                ),
            );
        }
        None => {
            state.push(EntryKind::Notice, "There is no answer to copy yet.");
        }
    }
}

/// `/copy N`: the N-th code block of the last answer (the number in its header).
fn copy_block(state: &mut State, n: &str, effects: &mut Vec<Effect>) {
    let blocks = state
        .last_answer()
        .map(super::markdown::code_blocks)
        .unwrap_or_default();
    let count = blocks.len();
    let pick = n
        .parse::<usize>()
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| blocks.into_iter().nth(i));
    match pick {
        Some(code) => {
            let lines = code.lines().count();
            effects.push(Effect::Copy(code));
            state.push(
                EntryKind::Notice,
                format!(
                    "Sent code block {n} ({lines} lines) to the clipboard with OSC 52. If nothing \
                     was copied, your terminal does not allow it (in tmux: set -g set-clipboard on)."
                ),
            );
        }
        None if count == 0 => {
            state.push(
                EntryKind::Error,
                "The last answer has no code block: /copy copies the whole answer.",
            );
        }
        None => {
            state.push(
                EntryKind::Error,
                format!(
                    "`/copy {n}`: the last answer has {count} code block{}; give a number from 1 to {count} (the number in the block's header).",
                    if count == 1 { "" } else { "s" }
                ),
            );
        }
    }
}

fn clear_view(state: &mut State) {
    state.entries.clear();
    state.conv_dirty = None;
    state.steps.clear();
    state.live = None;
    state.selected = None;
    state.last_usage = None;
    state.context = None;
    state.step = 0;
    for s in &mut state.scroll {
        *s = Default::default();
    }
}

fn recall(state: &mut State, direction: isize) {
    if state.prompt_history.is_empty() {
        return;
    }
    let len = state.prompt_history.len() as isize;
    let current = match state.history_pos {
        Some(p) => p as isize,
        None => {
            if direction > 0 {
                return;
            }
            state.draft = state.input_text();
            len
        }
    };
    let next = current + direction;
    if next < 0 {
        return;
    }
    if next >= len {
        state.history_pos = None;
        let draft = std::mem::take(&mut state.draft);
        state.set_input(&draft);
        return;
    }
    state.history_pos = Some(next as usize);
    let text = state.prompt_history[next as usize].clone();
    state.set_input(&text);
}

fn cycle_focus(state: &mut State, direction: isize) {
    let panes = state.focusable();
    let here = panes.iter().position(|f| *f == state.focus).unwrap_or(0) as isize;
    let n = panes.len() as isize;
    state.focus = panes[((here + direction).rem_euclid(n)) as usize];
    if state.focus == Focus::Timeline && state.selected.is_none() && !state.steps.is_empty() {
        state.selected = Some(state.steps.len() - 1);
        state.reveal_selection = true;
    }
}

fn select(state: &mut State, direction: isize) {
    if state.steps.is_empty() {
        return;
    }
    let last = state.steps.len() as isize - 1;
    let current = state.selected.map_or(last + 1, |s| s as isize);
    state.selected = Some((current + direction).clamp(0, last) as usize);
    state.reveal_selection = true;
    state.scroll[TIMELINE].follow = false;
}

fn pane_at(state: &State, column: u16, row: u16) -> Option<usize> {
    let a = &state.areas;
    let pos = ratatui::layout::Position::new(column, row);
    let hit = |r: Option<ratatui::layout::Rect>| r.is_some_and(|r| r.contains(pos));
    if hit(Some(a.conversation)) {
        Some(super::state::CONV)
    } else if hit(a.timeline) {
        Some(TIMELINE)
    } else if hit(a.reasoning) {
        Some(super::state::REASONING)
    } else if hit(a.tool_output) {
        Some(super::state::TOOL)
    } else {
        None
    }
}

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
        AgentEvent::StepStarted { step, max } => {
            state.step = step;
            state.max_steps = max;
            state.retry = None;
            let turn = state.turns.saturating_sub(1);
            state.steps.push(StepView {
                turn,
                number: step,
                ..Default::default()
            });
        }
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
        } => {
            if let Some(step) = state.steps.last_mut() {
                step.calls.push(super::state::CallView {
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
        } => {
            if let Some(i) = state.call_entry(&id)
                && let Some(call) = &mut state.entries[i].call
            {
                call.status = match crate::tui::calls::failure_reason(&result) {
                    Some(reason) => CallStatus::Failed(reason),
                    None => CallStatus::Done(Some(duration)),
                };
                state.touch_entry(i);
            }
            if let Some(call) = state.call_mut(&id) {
                call.result = Some(result);
                call.duration = Some(duration);
            }
        }
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
            turn_finished(state, outcome);
            if usage.is_some() {
                state.last_usage = usage;
            }
        }
        AgentEvent::ContextUsage { used, budget } => state.context = Some((used, budget)),
        AgentEvent::HistoryCleared => clear_view(state),
        AgentEvent::Notice(text) => {
            state.push(EntryKind::Notice, text);
        }
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
                .push(format!("↳ {}", super::calls::call_label(&name, &arguments)));
        }
        AgentEvent::ToolFinished {
            result, duration, ..
        } => {
            let ok = result.get("ok").and_then(serde_json::Value::as_bool) != Some(false);
            if let Some(last) = call.nested.last_mut() {
                last.push_str(&format!(
                    "  {} {} ms",
                    if ok { "✓" } else { "✗" },
                    duration.as_millis()
                ));
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

/// A plain key event (for tests and callers building keys).
pub fn key(code: KeyCode, modifiers: KeyModifiers) -> KeyEvent {
    KeyEvent::new(code, modifiers)
}
