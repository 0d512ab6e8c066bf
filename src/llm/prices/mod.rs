//! What model responses cost: DeepSeek's dated price table for its presets, the person's own
//! prices from `[cost]` in `config.toml`, and exact fixed-point amounts.
//!
//! A response is priced when it finishes, by the preset of its request and the time then
//! (DeepSeek's peak hours cost twice the off-peak price). A price set in the settings wins over
//! the table and holds at all hours; a model with neither has no price, and views show its
//! tokens only, never a made-up cost.

mod money;
mod table;

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

pub use money::{Billed, Cost, Money, Rate, Rates, Spend};
pub use table::{Hours, PRICES_DATE, TableModel};

use crate::llm::{Preset, Usage};
use crate::settings::{CostSettings, Currency};

/// The prices MiniClaw bills by: the table in the chosen currency, and the person's own.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Prices {
    currency: Currency,
    /// By the model's shown name, lower-cased.
    own: BTreeMap<String, Rates>,
}

impl Prices {
    /// The prices `settings` (the person's `[cost]`) ask for.
    pub fn new(settings: &CostSettings) -> Self {
        let own = settings
            .models
            .iter()
            .map(|(name, p)| {
                let rates = Rates {
                    cache_hit: Rate::per_million(p.cache_hit),
                    cache_miss: Rate::per_million(p.cache_miss),
                    output: Rate::per_million(p.output),
                };
                (name.to_lowercase(), rates)
            })
            .collect();
        Self {
            currency: settings.currency,
            own,
        }
    }

    /// The currency costs are given in.
    pub fn currency(&self) -> Currency {
        self.currency
    }

    /// `preset`'s prices at `at`: the person's for its shown name (`provider/model` for a
    /// provider's model; for DeepSeek's models any name DeepSeek bills them by), else the
    /// table's; `None` for a model with neither.
    pub fn rates(&self, preset: &Preset, at: DateTime<Utc>) -> Option<Rates> {
        let model = TableModel::of(preset);
        let shown = preset.to_string().trim().to_lowercase();
        let aliases = model.map_or(&[][..], TableModel::names);
        let own = std::iter::once(shown.as_str())
            .chain(aliases.iter().copied())
            .find_map(|name| self.own.get(name));
        match (own, model) {
            (Some(rates), _) => Some(*rates),
            (None, Some(model)) => Some(model.rates(self.currency, Hours::at(at))),
            (None, None) => None,
        }
    }

    /// What a response of `preset` with `usage` that finished at `at` cost.
    pub fn cost(&self, preset: &Preset, usage: &Usage, at: DateTime<Utc>) -> Option<Cost> {
        self.rates(preset, at).map(|rates| Cost {
            currency: self.currency,
            amount: rates.of(usage),
        })
    }

    /// The response billed: its tokens and their cost.
    pub fn bill(&self, preset: &Preset, usage: &Usage, at: DateTime<Utc>) -> Billed {
        Billed {
            usage: *usage,
            cost: self.cost(preset, usage, at),
        }
    }
}

#[cfg(test)]
mod tests;
