//! A provider: a named OpenAI-compatible server and its models, as the presets carry it.

use std::sync::Arc;

pub use crate::settings::{ModelEntry, ToolProtocol};

/// The built-in provider's name: DeepSeek, with its two presets.
pub const DEEPSEEK: &str = crate::settings::BUILT_IN_PROVIDER;

/// A configured provider (from a `[providers.NAME]` table).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provider {
    /// Its name.
    pub name: String,
    /// Requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The variable its key is read from (none: requests carry no key).
    pub key_var: Option<String>,
    /// Its models, in the order F2 cycles through them.
    pub models: Vec<ModelEntry>,
}

impl Provider {
    /// The settings of `model`: as listed, or the defaults for a model the file does not list.
    pub fn model(&self, model: &str) -> ModelEntry {
        self.models
            .iter()
            .find(|m| m.name == model)
            .cloned()
            .unwrap_or_else(|| ModelEntry::named(model))
    }
}

/// A model of a configured provider: what a preset of that provider is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderModel {
    /// The provider (its whole list of models, for F2).
    pub provider: Arc<Provider>,
    /// The model and its settings.
    pub model: ModelEntry,
}

impl ProviderModel {
    /// The provider's next listed model after this one (the first when this one is not listed).
    pub fn next(&self) -> Self {
        let models = &self.provider.models;
        let at = models.iter().position(|m| m.name == self.model.name);
        let next = match at {
            Some(i) => models.get((i + 1) % models.len()),
            None => models.first(),
        };
        Self {
            provider: self.provider.clone(),
            model: next.cloned().unwrap_or_else(|| self.model.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(models: &[&str]) -> Arc<Provider> {
        Arc::new(Provider {
            name: "local".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            key_var: None,
            models: models.iter().map(|m| ModelEntry::named(m)).collect(),
        })
    }

    #[test]
    fn next_cycles_through_the_listed_models() {
        let p = provider(&["a", "b", "c"]);
        let mut at = ProviderModel {
            provider: p.clone(),
            model: p.model("a"),
        };
        let mut seen = Vec::new();
        for _ in 0..4 {
            at = at.next();
            seen.push(at.model.name.clone());
        }
        assert_eq!(seen, ["b", "c", "a", "b"]);
        let unlisted = ProviderModel {
            provider: p.clone(),
            model: p.model("z"),
        };
        assert_eq!(unlisted.model.tool_protocol, ToolProtocol::Native);
        assert_eq!(unlisted.next().model.name, "a");
        let none = provider(&[]);
        let only = ProviderModel {
            provider: none.clone(),
            model: none.model("x"),
        };
        assert_eq!(only.next().model.name, "x");
    }
}
