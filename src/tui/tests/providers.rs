//! Configured providers in the UI: `/model provider/model`, F2 through a provider's models, the
//! picker and the `/model` popup offering them, and the status line naming provider and model.

use std::time::Instant;

use crossterm::event::KeyCode;

use super::common::*;
use crate::llm::{ModelEntry, Preset, Provider, Providers, ToolProtocol};
use crate::tui::keymap::{Action, map_key};
use crate::tui::state::State;
use crate::tui::update::{self, Effect, key_context};

/// A state that knows the provider `local` with a text-protocol and a native model.
pub(super) fn with_local() -> State {
    let mut text = ModelEntry::named("qwen");
    text.tool_protocol = ToolProtocol::Text;
    let mut s = state();
    s.providers = Providers::new(vec![Provider {
        name: "local".into(),
        base_url: "http://127.0.0.1:11434/v1".into(),
        key_var: None,
        models: vec![text, ModelEntry::named("llama")],
    }]);
    s
}

fn chosen(effects: &[Effect]) -> String {
    match effects {
        [Effect::SetPreset(p)] => p.to_string(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn model_command_and_f2_reach_a_providers_models() {
    let t0 = Instant::now();
    let mut s = with_local();
    assert_eq!(chosen(&send(&mut s, t0, "/model local/qwen")), "local/qwen");
    assert_eq!(s.preset.provider(), "local");
    let said = &s.view.entries.last().unwrap().text;
    assert!(said.contains("local/qwen (tools as text tags)"), "{said}");
    // F2 cycles the active provider's models.
    let fx = update::apply(&mut s, Action::TogglePreset, t0);
    assert_eq!(chosen(&fx), "local/llama");
    let fx = update::apply(&mut s, Action::TogglePreset, t0);
    assert_eq!(chosen(&fx), "local/qwen");
    send(&mut s, t0, "/model local/other");
    assert!(s.view.entries.last().unwrap().text.contains("not listed"));
    // A name before a slash that is no provider is refused (never DeepSeek with its key);
    // `deepseek/` says a DeepSeek model name holds a slash.
    let fx = send(&mut s, t0, "/model org/model");
    assert!(fx.is_empty(), "{fx:?}");
    let said = &s.view.entries.last().unwrap().text;
    assert!(said.contains("unknown provider `org`"), "{said}");
    assert_eq!(s.preset.to_string(), "local/other");
    let fx = send(&mut s, t0, "/model deepseek/org/model");
    assert_eq!(fx, [Effect::SetPreset(Preset::Custom("org/model".into()))]);
    assert_eq!(
        &s.recent_models[..3],
        ["org/model", "local/other", "local/qwen"]
    );
}

#[test]
fn the_picker_and_the_popup_offer_the_providers_models() {
    let t0 = Instant::now();
    let mut s = with_local();
    send(&mut s, t0, "/model");
    let picker = s.overlay.picker().unwrap();
    let rows: Vec<(&str, &str)> = picker
        .items
        .iter()
        .map(|i| (i.label.as_str(), i.detail.as_str()))
        .collect();
    assert_eq!(
        &rows[2..],
        [
            ("local/qwen", "local · tools as text tags"),
            ("local/llama", "local · native tools")
        ]
    );
    update::apply(&mut s, Action::CloseOverlay, t0);
    s.composer.set_input("");
    for c in "/model lla".chars() {
        let action = map_key(&key_context(&s, t0), k(KeyCode::Char(c), NONE));
        update::apply(&mut s, action, t0);
    }
    let offered: Vec<String> = s
        .composer
        .popup
        .iter()
        .flat_map(|p| p.rows.iter().map(|r| r.choice.label.clone()))
        .collect();
    assert_eq!(offered, ["local/llama"]);
}

#[test]
fn the_status_line_names_provider_and_model() {
    let t0 = Instant::now();
    let mut s = with_local();
    send(&mut s, t0, "/model local/qwen");
    let backend = render_backend(&mut s, 100, 20, t0);
    let buffer = backend.buffer();
    let bottom: String = (0..100).map(|x| buffer[(x, 19)].symbol()).collect();
    assert!(bottom.contains("local/qwen"), "{bottom}");
}
