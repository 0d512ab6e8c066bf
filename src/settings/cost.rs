//! `[cost]` of the person's `config.toml`: the currency costs are shown in, and prices per model
//! that replace or add to the built-in table (`[cost.models."NAME"]`).
//! Only the person's own file counts: a project's `miniclaw.toml` could make a model look cheap
//! (or free) to whoever runs MiniClaw in the cloned repository, so there the table is ignored
//! with a warning.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::mcp::{Origin, Scope};

/// The most a price per million tokens may be: far above any real one, and small enough that
/// the fixed-point amounts of `llm::prices` never overflow in a session.
pub const MAX_PRICE_PER_MILLION: f64 = 1_000_000.0;

/// A currency DeepSeek bills in (kept in saved sessions by its code).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize,
)]
pub enum Currency {
    /// US dollars (the default).
    #[default]
    #[serde(rename = "USD")]
    Usd,
    /// Chinese yuan (元).
    #[serde(rename = "CNY")]
    Cny,
}

impl Currency {
    /// The code written in settings and the JSON formats: `USD`, `CNY`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Usd => "USD",
            Self::Cny => "CNY",
        }
    }

    /// The sign put before an amount: `$`, `¥`.
    pub fn sign(self) -> &'static str {
        match self {
            Self::Usd => "$",
            Self::Cny => "¥",
        }
    }

    /// The currency of a code, in any letter case (`RMB` is the yuan too).
    pub fn from_code(code: &str) -> Option<Self> {
        match code.trim().to_ascii_uppercase().as_str() {
            "USD" => Some(Self::Usd),
            "CNY" | "RMB" => Some(Self::Cny),
            _ => None,
        }
    }
}

/// One model's prices, per million tokens in the `[cost]` currency, the same at all hours.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelPrices {
    /// Prompt tokens served from the provider's cache.
    pub cache_hit: f64,
    /// Prompt tokens not in the cache.
    pub cache_miss: f64,
    /// Generated tokens (reasoning included).
    pub output: f64,
}

/// The `[cost]` settings.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostSettings {
    /// The currency costs are shown in (`USD` when not set).
    pub currency: Currency,
    /// Prices by the model's name as MiniClaw shows it (a DeepSeek preset's model name,
    /// `provider/model` for a provider's model), lower-cased.
    pub models: BTreeMap<String, ModelPrices>,
}

/// Parses the table from the file of `origin`; `None` (with the warning) for a project's file
/// or a table that is not one. A broken entry is skipped with a warning, the rest counts.
pub fn parse(value: &toml::Value, origin: &Origin) -> (Option<CostSettings>, Vec<String>) {
    let file = origin.file.display();
    if origin.scope == Scope::Project {
        return (
            None,
            vec![format!(
                "{file}: [cost] is ignored here: prices are set only in your own config.toml, \
                 never by a project"
            )],
        );
    }
    let Some(table) = value.as_table() else {
        return (
            None,
            vec![format!("{file}: [cost] must be a table; it was skipped")],
        );
    };
    let mut warnings = Vec::new();
    let mut settings = CostSettings::default();
    for (key, value) in table {
        match key.as_str() {
            "currency" => match value.as_str().and_then(Currency::from_code) {
                Some(currency) => settings.currency = currency,
                None => warnings.push(format!(
                    "{file}: [cost] currency must be \"USD\" or \"CNY\" (not {value}); USD is used"
                )),
            },
            "models" => match value.as_table() {
                Some(models) => {
                    for (name, entry) in models {
                        match model_prices(entry) {
                            Ok(prices) => {
                                settings.models.insert(name.trim().to_lowercase(), prices);
                            }
                            Err(what) => warnings.push(format!(
                                "{file}: [cost.models.\"{name}\"] was skipped: {what}"
                            )),
                        }
                    }
                }
                None => warnings.push(format!(
                    "{file}: [cost] models must be a table of [cost.models.\"NAME\"] tables; it \
                     was skipped"
                )),
            },
            other => warnings.push(format!("{file}: [cost]: unknown key `{other}` ignored")),
        }
    }
    (Some(settings), warnings)
}

/// One `[cost.models."NAME"]` entry: all three prices, each a number from 0 up to
/// [`MAX_PRICE_PER_MILLION`]; anything else is what is wrong with it.
fn model_prices(entry: &toml::Value) -> Result<ModelPrices, String> {
    let table = entry
        .as_table()
        .ok_or("it must be a table (cache_hit = …, cache_miss = …, output = …)")?;
    const FIELDS: [&str; 3] = ["cache_hit", "cache_miss", "output"];
    if let Some(unknown) = table.keys().find(|k| !FIELDS.contains(&k.as_str())) {
        return Err(format!(
            "unknown key `{unknown}` (it takes cache_hit, cache_miss and output)"
        ));
    }
    let price = |field: &str| -> Result<f64, String> {
        let value = table.get(field).ok_or_else(|| {
            format!("`{field}` is missing (each model needs cache_hit, cache_miss and output)")
        })?;
        let number = match value {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            other => return Err(format!("`{field}` must be a number, not {other}")),
        };
        if !number.is_finite() || !(0.0..=MAX_PRICE_PER_MILLION).contains(&number) {
            return Err(format!(
                "`{field}` must be from 0 to {MAX_PRICE_PER_MILLION} per million tokens, not \
                 {number}"
            ));
        }
        Ok(number)
    };
    Ok(ModelPrices {
        cache_hit: price("cache_hit")?,
        cache_miss: price("cache_miss")?,
        output: price("output")?,
    })
}
