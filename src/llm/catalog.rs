//! Every provider MiniClaw knows (the built-in DeepSeek and those of the settings files) and how
//! a name typed by the person (`--provider`, `--model`, `/model`) becomes a preset.
//!
//! Keys never cross providers: a key variable belongs to the first provider that names it, and
//! another provider naming it with another base URL is refused, as is one naming DeepSeek's or
//! SerpAPI's key.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::error::LlmError;
use super::presets::Preset;
use super::provider::{DEEPSEEK, Provider, ProviderModel};
use crate::settings::ProviderEntry;

/// Key variables that belong to a server of their own, never to a configured provider.
const OWNED_KEYS: [(&str, &str); 2] =
    [("DEEPSEEK_API_KEY", "DeepSeek"), ("SERPAPI_KEY", "SerpAPI")];

/// The configured providers, in the order they were declared (DeepSeek is built in).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Providers {
    configured: Vec<Arc<Provider>>,
}

impl Providers {
    /// These providers, as they are (tests, and what `from_entries` checked).
    pub fn new(configured: Vec<Provider>) -> Self {
        Self {
            configured: configured.into_iter().map(Arc::new).collect(),
        }
    }

    /// The providers of the settings files (in file order, the user's first): a later entry of
    /// a name replaces the earlier one, and an entry whose key variable belongs elsewhere is
    /// refused with a warning.
    pub fn from_entries(entries: &[ProviderEntry]) -> (Self, Vec<String>) {
        let mut owners: BTreeMap<&str, (&str, &str)> = BTreeMap::new();
        let mut list: Vec<Provider> = Vec::new();
        let mut warnings = Vec::new();
        for entry in entries {
            if let Some(var) = entry.api_key_env.as_deref() {
                let refused = match (OWNED_KEYS.iter().find(|(v, _)| *v == var), owners.get(var)) {
                    (Some((_, owner)), _) => Some(format!("that key goes only to {owner}")),
                    (None, Some((name, url))) if *url != entry.base_url => Some(format!(
                        "provider `{name}` ({url}) reads its key from it, and a key goes only to its own provider's server"
                    )),
                    _ => None,
                };
                if let Some(why) = refused {
                    warnings.push(format!(
                        "{}: provider `{}` was skipped: `api_key_env = \"{var}\"`: {why}",
                        entry.origin.file.display(),
                        entry.name
                    ));
                    continue;
                }
                owners.entry(var).or_insert((&entry.name, &entry.base_url));
            }
            let provider = Provider {
                name: entry.name.clone(),
                base_url: entry.base_url.clone(),
                key_var: entry.api_key_env.clone(),
                models: entry.models.clone(),
            };
            match list.iter_mut().find(|p| p.name == provider.name) {
                Some(earlier) => *earlier = provider,
                None => list.push(provider),
            }
        }
        (Self::new(list), warnings)
    }

    /// The configured provider called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<Provider>> {
        self.configured.iter().find(|p| p.name == name)
    }

    /// The configured providers.
    pub fn configured(&self) -> &[Arc<Provider>] {
        &self.configured
    }

    /// Every provider's name, DeepSeek first.
    pub fn names(&self) -> Vec<String> {
        std::iter::once(DEEPSEEK.to_string())
            .chain(self.configured.iter().map(|p| p.name.clone()))
            .collect()
    }

    /// The preset `--provider` and `--model` choose: a provider alone means its first listed
    /// model (DeepSeek's flash preset); a model alone is read as `/model` reads it.
    pub fn choose(&self, provider: Option<&str>, model: Option<&str>) -> Result<Preset, LlmError> {
        let provider = provider.map(str::trim).filter(|p| !p.is_empty());
        let model = model.map(str::trim).filter(|m| !m.is_empty());
        let Some(name) = provider else {
            return model.map_or(Ok(Preset::Flash), |m| self.resolve(m));
        };
        if name.eq_ignore_ascii_case(DEEPSEEK) {
            return match model {
                None => Ok(Preset::Flash),
                // `nosuch/m` is refused as `/model` refuses it; `deepseek/…` is DeepSeek's.
                Some(m) => self.resolve(m).map(|preset| {
                    if preset.is_deepseek() {
                        preset
                    } else {
                        Preset::from_name(m)
                    }
                }),
            };
        }
        let Some(found) = self.get(name) else {
            return Err(LlmError::UnknownProvider {
                name: name.to_string(),
                known: self.names().join(", "),
            });
        };
        let model = match model {
            Some(m) => m.strip_prefix(&format!("{name}/")).unwrap_or(m).to_string(),
            None => match found.models.first() {
                Some(first) => first.name.clone(),
                None => {
                    return Err(LlmError::Setup {
                        message: format!(
                            "provider `{name}` lists no models: name one with --model"
                        ),
                        source: None,
                    });
                }
            },
        };
        Ok(Preset::Provided(ProviderModel {
            provider: found.clone(),
            model: found.model(&model),
        }))
    }

    /// What `/model TEXT` means: `NAME/MODEL` with a configured provider's name is that
    /// provider's model, `deepseek/MODEL` and a name without `/` are DeepSeek's. A `NAME/`
    /// that names no configured provider (a typo, or a provider of a folder not trusted) is an
    /// error: it never becomes a DeepSeek model sent with DeepSeek's key.
    pub fn resolve(&self, text: &str) -> Result<Preset, LlmError> {
        let text = text.trim();
        let Some((name, model)) = text.split_once('/') else {
            return Ok(Preset::from_name(text));
        };
        if let Some(found) = self.get(name) {
            if model.trim().is_empty() {
                return self.choose(Some(name), None);
            }
            return Ok(Preset::Provided(ProviderModel {
                provider: found.clone(),
                model: found.model(model.trim()),
            }));
        }
        if name.eq_ignore_ascii_case(DEEPSEEK) && !model.trim().is_empty() {
            return Ok(Preset::from_name(model.trim()));
        }
        Err(LlmError::UnknownProvider {
            name: name.to_string(),
            known: self.names().join(", "),
        })
    }

    /// The configured providers' listed models as the pickers offer them (`provider/model`),
    /// each with a few words on it.
    pub fn listed(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for provider in &self.configured {
            for model in &provider.models {
                let tools = match model.tool_protocol {
                    super::ToolProtocol::Native => "native tools",
                    super::ToolProtocol::Text => "tools as text tags",
                };
                out.push((
                    format!("{}/{}", provider.name, model.name),
                    format!("{} · {tools}", provider.name),
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
