//! Choosing the model: the preset of the next request, and the names used recently.

use super::effect::Effect;
use crate::llm::Preset;
use crate::tui::state::State;

/// How many model names the `/model` picker remembers.
pub const RECENT_MODELS: usize = 8;

/// Puts `name` first among the recently used models.
pub(crate) fn note_recent(recent: &mut Vec<String>, name: &str) {
    recent.retain(|n| n != name);
    recent.insert(0, name.to_string());
    recent.truncate(RECENT_MODELS);
}

pub(super) fn set_preset(state: &mut State, preset: Preset, effects: &mut Vec<Effect>) {
    note_recent(&mut state.recent_models, preset.model());
    state.preset = preset.clone();
    effects.push(Effect::SetPreset(preset));
}
