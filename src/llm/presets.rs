//! The model of the next request: DeepSeek's two presets (or another name sent to DeepSeek's
//! base URL), or a model of a configured provider; and the request fields each one sends.

use serde_json::{Map, Value, json};

use super::provider::{DEEPSEEK, ProviderModel, ToolProtocol};

/// The context window of DeepSeek's V4 models, in tokens.
pub const DEEPSEEK_CONTEXT_TOKENS: usize = 1_000_000;

/// A model and how it thinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preset {
    /// `deepseek-flash` (DeepSeek's V4.1 Flash; the legacy name `deepseek-v4-flash` is taken as
    /// this preset), thinking off.
    Flash,
    /// `deepseek-v4-pro`, thinking on at the configured reasoning effort (high by default).
    Pro,
    /// Any other model name (for other OpenAI-compatible servers): no thinking fields are sent.
    Custom(String),
    /// A model of a configured provider (`[providers.NAME]`), sent to that provider only.
    Provided(ProviderModel),
}

impl Preset {
    /// The names of the built-in presets, in switching order.
    pub const NAMES: [&'static str; 2] = ["deepseek-flash", "deepseek-v4-pro"];

    /// The flash model's legacy name: still accepted by DeepSeek (served and billed as
    /// `deepseek-flash`), so typed or saved it selects the flash preset.
    pub const LEGACY_FLASH: &'static str = "deepseek-v4-flash";

    /// The preset for a model name (any letter case); unknown names become `Custom`.
    pub fn from_name(name: &str) -> Self {
        let name = name.trim();
        match name.to_ascii_lowercase().as_str() {
            "deepseek-flash" | "deepseek-v4-flash" => Self::Flash,
            "deepseek-v4-pro" => Self::Pro,
            _ => Self::Custom(name.to_string()),
        }
    }

    /// The model name sent to the server.
    pub fn model(&self) -> &str {
        match self {
            Self::Flash => "deepseek-flash",
            Self::Pro => "deepseek-v4-pro",
            Self::Custom(name) => name,
            Self::Provided(p) => &p.model.name,
        }
    }

    /// The provider whose server gets the request (`deepseek` for the built-in presets).
    pub fn provider(&self) -> &str {
        match self {
            Self::Provided(p) => &p.provider.name,
            _ => DEEPSEEK,
        }
    }

    /// Whether the request goes to DeepSeek's base URL with DeepSeek's key.
    pub fn is_deepseek(&self) -> bool {
        !matches!(self, Self::Provided(_))
    }

    /// How the model calls tools.
    pub fn tool_protocol(&self) -> ToolProtocol {
        match self {
            Self::Provided(p) => p.model.tool_protocol,
            _ => ToolProtocol::Native,
        }
    }

    /// The model's own context window: DeepSeek's V4 models take 1,000,000 tokens (their
    /// documentation); a provider's model, its entry's `context_tokens`; others say nothing.
    pub fn context_tokens(&self) -> Option<usize> {
        match self {
            Self::Flash | Self::Pro => Some(DEEPSEEK_CONTEXT_TOKENS),
            Self::Provided(p) => p.model.context_tokens.map(|t| t as usize),
            Self::Custom(_) => None,
        }
    }

    /// Whether the model streams reasoning.
    pub fn thinking(&self) -> bool {
        matches!(self, Self::Pro)
    }

    /// Whether the server is DeepSeek's, which wants `reasoning_content` sent back on assistant
    /// messages whenever tools are in play (other OpenAI-compatible servers may refuse the field).
    pub fn returns_reasoning(&self) -> bool {
        match self {
            Self::Flash | Self::Pro => true,
            Self::Custom(name) => name.starts_with("deepseek"),
            Self::Provided(_) => false,
        }
    }

    /// The next preset of the same provider (F2): DeepSeek's other preset, or the provider's
    /// next listed model.
    pub fn toggled(&self) -> Self {
        match self {
            Self::Flash => Self::Pro,
            Self::Pro | Self::Custom(_) => Self::Flash,
            Self::Provided(p) => Self::Provided(p.next()),
        }
    }

    /// Adds the preset's top-level body fields: always explicit, so the server never guesses.
    /// `effort` is the pro preset's reasoning effort.
    pub fn apply(&self, body: &mut Map<String, Value>, effort: ReasoningEffort) {
        body.insert("model".into(), Value::String(self.model().to_string()));
        match self {
            Self::Flash => {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
            Self::Pro => {
                body.insert("thinking".into(), json!({"type": "enabled"}));
                body.insert("reasoning_effort".into(), json!(effort.name()));
            }
            Self::Custom(_) => {}
            // The settings file's fields; those MiniClaw sets itself were refused there.
            Self::Provided(p) => {
                for (key, value) in &p.model.extra {
                    body.entry(key.clone()).or_insert_with(|| value.clone());
                }
            }
        }
    }
}

/// How hard the pro preset thinks (DeepSeek's `reasoning_effort`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReasoningEffort {
    /// `high`: the seed's default.
    #[default]
    High,
    /// `max`: the most reasoning DeepSeek offers, slower and dearer.
    Max,
}

impl ReasoningEffort {
    /// The value sent, and written in settings.
    pub fn name(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Max => "max",
        }
    }

    /// The effort a setting names (any letter case), if it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "high" => Some(Self::High),
            "max" => Some(Self::Max),
            _ => None,
        }
    }
}

/// DeepSeek's presets by their model name; another provider's models as `provider/model`.
impl std::fmt::Display for Preset {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Provided(p) => write!(f, "{}/{}", p.provider.name, p.model.name),
            _ => f.write_str(self.model()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flash_disables_thinking_and_pro_enables_it_with_high_effort() {
        let mut flash = Map::new();
        Preset::Flash.apply(&mut flash, ReasoningEffort::High);
        assert_eq!(flash["model"], "deepseek-flash");
        assert_eq!(flash["thinking"], json!({"type": "disabled"}));
        assert!(!flash.contains_key("reasoning_effort"));

        let mut pro = Map::new();
        Preset::Pro.apply(&mut pro, ReasoningEffort::High);
        assert_eq!(pro["model"], "deepseek-v4-pro");
        assert_eq!(pro["thinking"], json!({"type": "enabled"}));
        assert_eq!(pro["reasoning_effort"], "high");
    }

    #[test]
    fn toggling_switches_between_the_two_presets() {
        assert_eq!(Preset::Flash.toggled(), Preset::Pro);
        assert_eq!(Preset::Pro.toggled(), Preset::Flash);
        assert_eq!(Preset::from_name("deepseek-v4-pro"), Preset::Pro);
        assert_eq!(Preset::from_name("x").model(), "x");
        assert_eq!(Preset::from_name(" DeepSeek-V4-Pro "), Preset::Pro);
    }

    #[test]
    fn both_flash_names_select_the_flash_preset_which_sends_the_current_one() {
        assert_eq!(Preset::from_name("deepseek-flash"), Preset::Flash);
        assert_eq!(Preset::from_name(Preset::LEGACY_FLASH), Preset::Flash);
        assert_eq!(
            Preset::from_name("DeepSeek-V4-Flash").model(),
            "deepseek-flash"
        );
    }

    #[test]
    fn the_pro_preset_sends_the_configured_effort_and_flash_none() {
        let mut pro = Map::new();
        Preset::Pro.apply(&mut pro, ReasoningEffort::Max);
        assert_eq!(pro["reasoning_effort"], "max");
        let mut flash = Map::new();
        Preset::Flash.apply(&mut flash, ReasoningEffort::Max);
        assert!(!flash.contains_key("reasoning_effort"));
        assert_eq!(
            ReasoningEffort::from_name(" MAX "),
            Some(ReasoningEffort::Max)
        );
        assert_eq!(ReasoningEffort::from_name("low"), None);
    }
}
