//! The picker's keys: the filter, the selection, and what choosing a row does (reopen a
//! session, use a model), or deleting one (after a yes).

use super::effect::Effect;
use super::preset::set_preset;
use crate::agent::AgentCommand;
use crate::tui::keymap::Action;
use crate::tui::state::{EntryKind, Overlay, Picker, PickerKind, State};

/// Opens the session picker and asks the agent for the list.
pub(crate) fn open_sessions(state: &mut State, effects: &mut Vec<Effect>) {
    state.overlay = Overlay::Picker(Picker::sessions());
    effects.push(Effect::Command(AgentCommand::ListSessions));
}

/// Opens the model picker.
pub(super) fn open_models(state: &mut State) {
    let listed = state.providers.listed();
    let picker = Picker::models(&state.preset, &listed, &state.recent_models);
    state.overlay = Overlay::Picker(picker);
}

/// Applies a picker action.
pub(super) fn apply(state: &mut State, action: Action, effects: &mut Vec<Effect>) {
    let Some(picker) = state.overlay.picker_mut() else {
        state.overlay = Overlay::None;
        return;
    };
    match action {
        Action::PickerType(c) => {
            picker.filter.push(c);
            picker.selected = 0;
        }
        Action::PickerBackspace => {
            picker.filter.pop();
            picker.clamp();
        }
        Action::PickerMove(delta) => picker.step(delta),
        Action::PickerDelete => {
            picker.confirm_delete =
                picker.kind == PickerKind::Sessions && picker.chosen().is_some();
        }
        Action::PickerConfirmDelete(yes) => {
            picker.confirm_delete = false;
            if let (true, Some(item)) = (yes, picker.chosen()) {
                effects.push(Effect::Command(AgentCommand::DeleteSession(
                    item.key.clone(),
                )));
                picker.loading = true;
            }
        }
        Action::PickerChoose => choose(state, effects),
        _ => {}
    }
}

/// Enter: reopens the selected session, or uses the selected model (the typed name when no
/// row matches it, as `/model NAME` would).
fn choose(state: &mut State, effects: &mut Vec<Effect>) {
    let Some(picker) = state.overlay.picker() else {
        return;
    };
    let chosen = picker.chosen().cloned();
    match (picker.kind, chosen) {
        (_, Some(item)) if item.problem.is_some() => {
            let problem = item.problem.unwrap_or_default();
            state.view.push(
                EntryKind::Error,
                format!("{} cannot be opened: it {problem}.", item.label),
            );
        }
        (PickerKind::Sessions, Some(item)) => {
            close(state);
            effects.push(Effect::Command(AgentCommand::Resume(item.key)));
        }
        (PickerKind::Sessions, None) => {}
        (PickerKind::Models, chosen) => {
            let name = match chosen {
                Some(item) => item.key,
                None if !picker.filter.trim().is_empty() => picker.filter.trim().to_string(),
                None => return,
            };
            close(state);
            match state.providers.resolve(&name) {
                Ok(preset) => {
                    state
                        .view
                        .push(EntryKind::Notice, super::preset::chosen_text(&preset));
                    set_preset(state, preset, effects);
                }
                Err(e) => {
                    state.view.push(EntryKind::Error, format!("{name}: {e}."));
                }
            }
        }
    }
}

fn close(state: &mut State) {
    state.overlay = Overlay::None;
}
