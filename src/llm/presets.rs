//! The model of the next request: DeepSeek's two presets (or another name sent to DeepSeek's
//! base URL), or a model of a configured provider; and the request fields each one sends.

use serde_json::{Map, Value, json};

use super::provider::{DEEPSEEK, ProviderModel, ToolProtocol};

/// A model and how it thinks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Preset {
    /// `deepseek-v4-flash`, thinking off.
    Flash,
    /// `deepseek-v4-pro`, thinking on with high reasoning effort.
    Pro,
    /// Any other model name (for other OpenAI-compatible servers): no thinking fields are sent.
    Custom(String),
    /// A model of a configured provider (`[providers.NAME]`), sent to that provider only.
    Provided(ProviderModel),
}

impl Preset {
    /// The names of the built-in presets, in switching order.
    pub const NAMES: [&'static str; 2] = ["deepseek-v4-flash", "deepseek-v4-pro"];

    /// The preset for a model name (any letter case); unknown names become `Custom`.
    pub fn from_name(name: &str) -> Self {
        let name = name.trim();
        match name.to_ascii_lowercase().as_str() {
            "deepseek-v4-flash" => Self::Flash,
            "deepseek-v4-pro" => Self::Pro,
            _ => Self::Custom(name.to_string()),
        }
    }

    /// The model name sent to the server.
    pub fn model(&self) -> &str {
        match self {
            Self::Flash => "deepseek-v4-flash",
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

    /// The model's own context budget, when its provider's settings give one.
    pub fn context_tokens(&self) -> Option<usize> {
        match self {
            Self::Provided(p) => p.model.context_tokens.map(|t| t as usize),
            _ => None,
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
    pub fn apply(&self, body: &mut Map<String, Value>) {
        body.insert("model".into(), Value::String(self.model().to_string()));
        match self {
            Self::Flash => {
                body.insert("thinking".into(), json!({"type": "disabled"}));
            }
            Self::Pro => {
                body.insert("thinking".into(), json!({"type": "enabled"}));
                body.insert("reasoning_effort".into(), json!("high"));
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
        Preset::Flash.apply(&mut flash);
        assert_eq!(flash["model"], "deepseek-v4-flash");
        assert_eq!(flash["thinking"], json!({"type": "disabled"}));
        assert!(!flash.contains_key("reasoning_effort"));

        let mut pro = Map::new();
        Preset::Pro.apply(&mut pro);
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
}
