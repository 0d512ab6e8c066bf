//! Moving around the panes: focus, scrolling, selecting and expanding steps, folding prompts.

use std::time::Instant;

use super::effect::flash;
use crate::tui::keymap::Action;
use crate::tui::state::{Focus, Overlay, Pane, State};

/// Scroll actions of the focused pane (or the pane under the pointer).
pub(super) fn scroll(state: &mut State, action: Action) {
    let slot = State::scroll_slot(state.focus);
    match action {
        Action::ScrollPage(pages) => {
            let s = &mut state.scroll[slot];
            let page = s.height.saturating_sub(1).max(1) as isize;
            s.by(pages * page);
        }
        Action::ScrollLine(lines) => state.scroll[slot].by(lines),
        Action::ScrollAt { column, row, delta } => {
            if let Some(slot) = pane_at(state, column, row) {
                state.scroll[slot].by(delta);
            }
        }
        Action::ScrollTop => {
            // Home in the timeline selects its first step, as End returns to the live one.
            if state.focus == Focus::Timeline && !state.view.transcript.steps.is_empty() {
                state.view.selected = Some(0);
                state.view.reveal_selection = true;
            }
            state.scroll[slot].jump_to_top();
        }
        Action::ScrollBottom => {
            // End in a side pane also returns the panes to following the live step.
            if matches!(
                state.focus,
                Focus::Timeline | Focus::Reasoning | Focus::ToolOutput
            ) {
                state.view.selected = None;
            }
            state.scroll[slot].jump_to_bottom();
        }
        _ => {}
    }
}

/// Step actions of the timeline: select, expand one, expand all.
pub(super) fn steps(state: &mut State, action: Action) {
    match action {
        Action::SelectPrev => select(state, -1),
        Action::SelectNext => select(state, 1),
        Action::ToggleStep => {
            if let Some(i) = state
                .view
                .selected
                .filter(|&i| i < state.view.transcript.steps.len())
            {
                if !state.view.expanded.remove(&i) {
                    state.view.expanded.insert(i);
                }
                state.view.reveal_selection = true;
            }
        }
        Action::ToggleAllSteps => {
            let steps = &state.view.transcript.steps;
            let expand = state.view.expanded.len() < steps.len();
            state.view.expanded = if expand {
                (0..steps.len()).collect()
            } else {
                Default::default()
            };
            // Expanded, the view opens at the selected step (else the latest turn's first), not
            // at the bottom of the last one.
            if expand && let Some(last) = steps.last().map(|s| s.turn) {
                if state.view.selected.is_none() {
                    state.view.selected = steps.iter().position(|s| s.turn == last);
                }
                state.view.reveal_selection = true;
                state.scroll[Pane::Timeline].follow = false;
            }
        }
        _ => {}
    }
}

/// Panes shown or hidden, and the help overlay.
pub(super) fn view(state: &mut State, action: Action) {
    match action {
        Action::ToggleReasoning => state.show_reasoning = !state.show_reasoning,
        Action::ToggleSidePanes => state.side_collapsed = !state.side_collapsed,
        Action::ShowHelp => state.overlay = Overlay::Help { scroll: 0 },
        Action::ScrollHelp(lines) => {
            let limit =
                crate::tui::panes::help::scroll_limit(state.areas.screen, state.keyboard_enhanced);
            if let Overlay::Help { scroll } = &mut state.overlay {
                *scroll = scroll.saturating_add_signed(lines).min(limit);
            }
        }
        _ => {}
    }
}

/// Enter in the conversation shows whole (or folds again) the long prompts in view.
pub(super) fn toggle_fold(state: &mut State, now: Instant) {
    let scroll = &state.scroll[Pane::Conversation];
    let top = scroll.effective_top();
    let bottom = top + scroll.height;
    let offsets = &state.view.conv_index.offsets;
    let in_view: Vec<usize> = (0..state.view.entries.len())
        .filter(|&i| {
            let (start, end) = (
                offsets.get(i).copied().unwrap_or(usize::MAX),
                offsets.get(i + 1).copied().unwrap_or(usize::MAX),
            );
            start < bottom
                && end > top
                && crate::tui::panes::conversation::foldable(&state.view.entries[i])
        })
        .collect();
    if in_view.is_empty() {
        flash(state, now, "No long message in view to show whole");
        return;
    }
    let expand = in_view.iter().any(|&i| !state.view.entries[i].expanded);
    for i in in_view {
        state.view.entries[i].expanded = expand;
        state.view.touch_entry(i);
    }
}

pub(super) fn cycle_focus(state: &mut State, direction: isize) {
    let panes = state.focusable();
    let here = panes.iter().position(|f| *f == state.focus).unwrap_or(0) as isize;
    let n = panes.len() as isize;
    state.focus = panes[((here + direction).rem_euclid(n)) as usize];
    let steps = state.view.transcript.steps.len();
    if state.focus == Focus::Timeline && state.view.selected.is_none() && steps > 0 {
        state.view.selected = Some(steps - 1);
        state.view.reveal_selection = true;
    }
}

fn select(state: &mut State, direction: isize) {
    if state.view.transcript.steps.is_empty() {
        return;
    }
    let last = state.view.transcript.steps.len() as isize - 1;
    let current = state.view.selected.map_or(last + 1, |s| s as isize);
    state.view.selected = Some((current + direction).clamp(0, last) as usize);
    state.view.reveal_selection = true;
    state.scroll[Pane::Timeline].follow = false;
}

fn pane_at(state: &State, column: u16, row: u16) -> Option<Pane> {
    let a = &state.areas;
    let pos = ratatui::layout::Position::new(column, row);
    let hit = |r: Option<ratatui::layout::Rect>| r.is_some_and(|r| r.contains(pos));
    if hit(Some(a.conversation)) {
        Some(Pane::Conversation)
    } else if hit(a.timeline) {
        Some(Pane::Timeline)
    } else if hit(a.reasoning) {
        Some(Pane::Reasoning)
    } else if hit(a.tool_output) {
        Some(Pane::ToolOutput)
    } else {
        None
    }
}
