//! `[providers.NAME]` tables: OpenAI-compatible servers besides the built-in DeepSeek, each with
//! its models.
//!
//! ```toml
//! [providers.local]
//! base_url = "http://localhost:11434/v1"   # requests go to {base_url}/chat/completions
//! api_key_env = "LOCAL_API_KEY"            # optional; the variable holding this provider's key
//!
//! [[providers.local.models]]
//! name = "qwen2.5-coder"
//! tool_protocol = "text"                   # "native" (default) or "text"
//! context_tokens = 32768                   # optional
//! extra = { temperature = 0.2 }            # optional; merged into the request body
//! ```

use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::SettingsError;
use super::mcp::{Origin, check_name, check_url};

/// The provider that is built in; a table of that name is refused.
pub const BUILT_IN_PROVIDER: &str = "deepseek";

/// Request fields MiniClaw sets itself: `extra` may not replace them.
pub const RESERVED_FIELDS: [&str; 6] = [
    "model",
    "messages",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
];

/// How a model is told about the tools and how it calls them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolProtocol {
    /// The API's function calling (`tools` in the request, `tool_calls` in the answer).
    #[default]
    Native,
    /// Tools described in the system prompt, called as `<tool_call>{...}</tool_call>` tags.
    Text,
}

/// One model of a provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelEntry {
    /// The name sent as `model`.
    pub name: String,
    /// How it calls tools.
    pub tool_protocol: ToolProtocol,
    /// Its context budget in prompt tokens, when given.
    pub context_tokens: Option<u32>,
    /// Fields merged into every request body for it.
    pub extra: Map<String, Value>,
}

impl ModelEntry {
    /// A model of this name with the defaults (native tools, no extra fields).
    pub fn named(name: &str) -> Self {
        Self {
            name: name.to_string(),
            tool_protocol: ToolProtocol::Native,
            context_tokens: None,
            extra: Map::new(),
        }
    }
}

/// One provider as configured.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProviderEntry {
    /// Its name (`--provider NAME`, `/model NAME/MODEL`).
    pub name: String,
    /// Requests go to `{base_url}/chat/completions`.
    pub base_url: String,
    /// The variable holding its key (none: requests carry no key).
    pub api_key_env: Option<String>,
    /// Its models, in file order (F2 cycles through them).
    pub models: Vec<ModelEntry>,
    /// Where it was declared.
    pub origin: Origin,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProvider {
    base_url: String,
    api_key_env: Option<String>,
    /// Read one by one: a broken model is skipped, not its provider.
    #[serde(default)]
    models: Vec<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawModel {
    name: String,
    #[serde(default)]
    tool_protocol: ToolProtocol,
    context_tokens: Option<u32>,
    #[serde(default)]
    extra: toml::Table,
}

/// The smallest context budget a model may be given (as `--context-tokens`).
const MIN_CONTEXT_TOKENS: u32 = 1_000;

/// Parses the `providers` table of a TOML file; broken entries are reported and skipped.
pub(super) fn parse_table(
    value: &toml::Value,
    origin: &Origin,
) -> (Vec<ProviderEntry>, Vec<String>) {
    let Some(table) = value.as_table() else {
        let e = SettingsError::Shape {
            file: origin.file.clone(),
            what: "`providers` must be a table of [providers.NAME] entries".into(),
        };
        return (Vec::new(), vec![e.to_string()]);
    };
    let mut providers = Vec::new();
    let mut warnings = Vec::new();
    for (name, entry) in table {
        match parse_entry(name, entry, origin, &mut warnings) {
            Ok(provider) => providers.push(provider),
            Err(what) => warnings.push(
                SettingsError::Provider {
                    file: origin.file.clone(),
                    name: name.clone(),
                    what,
                }
                .to_string(),
            ),
        }
    }
    (providers, warnings)
}

fn parse_entry(
    name: &str,
    entry: &toml::Value,
    origin: &Origin,
    warnings: &mut Vec<String>,
) -> Result<ProviderEntry, String> {
    check_name(name).map_err(|_| "a provider name must be 1-64 letters, digits, `_` or `-`")?;
    if name.eq_ignore_ascii_case(BUILT_IN_PROVIDER) {
        return Err(
            "`deepseek` is built in (DEEPSEEK_API_KEY, DEEPSEEK_BASE_URL); give this provider another name"
                .into(),
        );
    }
    let raw: RawProvider = entry
        .clone()
        .try_into()
        .map_err(|e: toml::de::Error| e.message().trim().to_string())?;
    check_url(raw.base_url.trim()).map_err(|e| e.replace("`url`", "`base_url`"))?;
    if let Some(var) = &raw.api_key_env {
        check_key_var(var)?;
    }
    let mut models = Vec::new();
    for model in raw.models {
        let what = |what: String| SettingsError::ProviderNote {
            file: origin.file.clone(),
            name: name.to_string(),
            what,
        };
        let model = model
            .try_into::<RawModel>()
            .map_err(|e| format!("a model was skipped: {}", e.message().trim()))
            .and_then(|m| model_entry(m, &mut |w| warnings.push(what(w).to_string())));
        match model {
            Ok(m) if models.iter().any(|o: &ModelEntry| o.name == m.name) => {
                warnings.push(
                    what(format!(
                        "model `{}` is listed twice; the first counts",
                        m.name
                    ))
                    .to_string(),
                );
            }
            Ok(m) => models.push(m),
            Err(problem) => warnings.push(what(problem).to_string()),
        }
    }
    Ok(ProviderEntry {
        name: name.to_string(),
        base_url: raw.base_url.trim().trim_end_matches('/').to_string(),
        api_key_env: raw.api_key_env,
        models,
        origin: origin.clone(),
    })
}

fn model_entry(raw: RawModel, warn: &mut dyn FnMut(String)) -> Result<ModelEntry, String> {
    let name = raw.name.trim().to_string();
    if name.is_empty() {
        return Err("a model without a `name` was skipped".into());
    }
    if let Some(tokens) = raw.context_tokens
        && tokens < MIN_CONTEXT_TOKENS
    {
        return Err(format!(
            "model `{name}` was skipped: `context_tokens` must be at least {MIN_CONTEXT_TOKENS} (it is {tokens})"
        ));
    }
    let mut extra = Map::new();
    for (key, value) in raw.extra {
        if RESERVED_FIELDS.contains(&key.as_str()) {
            warn(format!(
                "model `{name}`: `extra.{key}` is ignored (MiniClaw sets that field itself)"
            ));
            continue;
        }
        match serde_json::to_value(&value) {
            Ok(v) => {
                extra.insert(key, v);
            }
            Err(e) => warn(format!("model `{name}`: `extra.{key}` is ignored ({e})")),
        }
    }
    Ok(ModelEntry {
        name,
        tool_protocol: raw.tool_protocol,
        context_tokens: raw.context_tokens,
        extra,
    })
}

/// A key variable is an environment variable's name that says it holds a secret: MiniClaw takes
/// it out of its environment at start, so it must never be one that programs need (PATH, HOME).
fn check_key_var(var: &str) -> Result<(), String> {
    let is_name = !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !is_name {
        return Err(format!(
            "`api_key_env` must be a variable name, not `{var}`"
        ));
    }
    let upper = var.to_ascii_uppercase();
    if ["KEY", "TOKEN", "SECRET"].iter().any(|w| upper.contains(w)) {
        Ok(())
    } else {
        Err(format!(
            "`api_key_env` names `{var}`, which does not look like a key: the name must contain KEY, TOKEN or SECRET (MiniClaw takes that variable out of its environment)"
        ))
    }
}
