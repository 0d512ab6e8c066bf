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

/// What is said when a model is chosen.
pub(super) fn chosen_text(preset: &Preset) -> String {
    match preset {
        Preset::Custom(other) => format!(
            "Model: {other} (not one of the presets {}: sent as it is, without thinking settings).",
            Preset::NAMES.join(", ")
        ),
        Preset::Provided(p) => {
            let tools = match p.model.tool_protocol {
                crate::llm::ToolProtocol::Native => "native tools",
                crate::llm::ToolProtocol::Text => "tools as text tags",
            };
            let listed = p.provider.models.iter().any(|m| m.name == p.model.name);
            let note = if listed {
                ""
            } else {
                ", not listed in its settings"
            };
            format!("Model: {preset} ({tools}{note}).")
        }
        preset => format!("Model: {preset}."),
    }
}

pub(super) fn set_preset(state: &mut State, preset: Preset, effects: &mut Vec<Effect>) {
    note_recent(&mut state.recent_models, &preset.to_string());
    state.preset = preset.clone();
    effects.push(Effect::SetPreset(preset));
}
