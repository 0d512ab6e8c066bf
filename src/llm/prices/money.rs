//! Amounts of money in fixed point, so costs add up exactly and tests can say what they must be.
//!
//! A price is kept in millionths of a currency unit per million tokens, which is the same number
//! as trillionths ("picos") of a unit per token: the cost of `n` tokens is `n × rate` picos, with
//! no rounding at all. DeepSeek's prices have at most three decimals, so the table is exact; a
//! price from the settings is rounded once, to the nearest millionth per million tokens.
//! Sums saturate instead of overflowing (a `u64` of picos holds about 18 million units).

use serde::{Deserialize, Serialize};

use crate::llm::Usage;
use crate::settings::Currency;

/// Trillionths of a currency unit in one unit.
const PICOS_PER_UNIT: u64 = 1_000_000_000_000;

/// An amount in trillionths of a currency unit.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct Money(u64);

impl Money {
    /// `picos` trillionths of a unit.
    pub const fn from_picos(picos: u64) -> Self {
        Self(picos)
    }

    /// The amount in trillionths of a unit.
    pub const fn picos(self) -> u64 {
        self.0
    }

    /// The amount in units, as the JSON formats give it (the nearest `f64`).
    pub fn units(self) -> f64 {
        self.0 as f64 / PICOS_PER_UNIT as f64
    }

    /// The sum (saturating).
    pub fn plus(self, other: Money) -> Money {
        Money(self.0.saturating_add(other.0))
    }

    /// The amount in units with three significant digits below one unit (`0.0123`, `0.086`,
    /// `0.00000225`) and cents from one unit up (`1.50`, `12.34`): a turn often costs a
    /// fraction of a cent, which two decimals would show as nothing. Rounded half up; zero is
    /// `0`.
    pub fn text(self) -> String {
        let v = self.0;
        if v == 0 {
            return "0".into();
        }
        let digits = v.ilog10() + 1;
        let kept = if digits > 3 {
            round_to(v, 10u64.pow(digits - 3))
        } else {
            v
        };
        if kept < PICOS_PER_UNIT {
            let fraction = format!("{kept:012}");
            return format!("0.{}", fraction.trim_end_matches('0'));
        }
        let cents_at = PICOS_PER_UNIT / 100;
        let cents = round_to(v, cents_at) / cents_at;
        format!("{}.{:02}", cents / 100, cents % 100)
    }
}

/// `v` rounded half up to a multiple of `step`.
fn round_to(v: u64, step: u64) -> u64 {
    v.saturating_add(step / 2) / step * step
}

/// A price: millionths of a unit per million tokens (the same number: picos per token).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rate(u64);

impl Rate {
    /// `micros` millionths of a unit per million tokens.
    pub const fn micros_per_million(micros: u64) -> Self {
        Self(micros)
    }

    /// A price per million tokens written as a number (a setting), rounded to the nearest
    /// millionth; a negative or non-finite number is no price (`settings` refuses them first).
    pub fn per_million(units: f64) -> Self {
        let micros = (units * 1e6).round();
        if micros.is_finite() && micros >= 0.0 {
            // At most MAX_PRICE_PER_MILLION × 10^6 = 10^12: exact in an f64 and a u64.
            Self(micros as u64)
        } else {
            Self(0)
        }
    }

    /// What `tokens` tokens cost at this rate.
    pub fn of(self, tokens: u64) -> Money {
        Money(tokens.saturating_mul(self.0))
    }
}

/// One model's prices at one time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rates {
    /// Prompt tokens served from the cache.
    pub cache_hit: Rate,
    /// Prompt tokens not in the cache.
    pub cache_miss: Rate,
    /// Generated tokens (reasoning included).
    pub output: Rate,
}

impl Rates {
    /// What the tokens of one response cost. The cache misses are the prompt tokens the
    /// server did not call hits, when it reported fewer (a provider that reports no split has
    /// every prompt token priced as a miss): a cost is never under-estimated.
    pub fn of(&self, usage: &Usage) -> Money {
        let hits = usage.prompt_cache_hit_tokens;
        let misses = usage
            .prompt_cache_miss_tokens
            .max(usage.prompt_tokens.saturating_sub(hits));
        self.cache_hit
            .of(hits)
            .plus(self.cache_miss.of(misses))
            .plus(self.output.of(usage.completion_tokens))
    }
}

/// An amount in a currency.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cost {
    /// The currency.
    pub currency: Currency,
    /// The amount.
    pub amount: Money,
}

/// `$0.0123`, `¥0.086`.
impl std::fmt::Display for Cost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.currency.sign(), self.amount.text())
    }
}

/// What one model response was billed: its tokens and their cost (`None`: the model has no
/// price). Kept on the assistant message it produced, so a reopened session knows its cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Billed {
    /// The tokens the server reported.
    pub usage: Usage,
    /// What they cost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Cost>,
}

/// Costs added up (a turn's, a session's): an amount per currency it met, and how many
/// responses had no price. Normally one currency; a session reopened after `[cost] currency`
/// changed may hold both, which are never converted into each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Spend {
    usd: Option<Money>,
    cny: Option<Money>,
    unpriced: u32,
}

impl Spend {
    /// Adds one response's cost (`None`: a response of a model without a price).
    pub fn add(&mut self, cost: Option<&Cost>) {
        match cost {
            Some(cost) => {
                let slot = match cost.currency {
                    Currency::Usd => &mut self.usd,
                    Currency::Cny => &mut self.cny,
                };
                *slot = Some(slot.unwrap_or_default().plus(cost.amount));
            }
            None => self.unpriced = self.unpriced.saturating_add(1),
        }
    }

    /// Adds another spend (a later turn's).
    pub fn merge(&mut self, other: &Spend) {
        for cost in other.amounts() {
            self.add(Some(&cost));
        }
        self.unpriced = self.unpriced.saturating_add(other.unpriced);
    }

    /// The amount in each currency met, dollars first.
    pub fn amounts(&self) -> impl Iterator<Item = Cost> {
        [(Currency::Usd, self.usd), (Currency::Cny, self.cny)]
            .into_iter()
            .filter_map(|(currency, amount)| amount.map(|amount| Cost { currency, amount }))
    }

    /// The amount in `currency`, when a response was priced in it.
    pub fn amount(&self, currency: Currency) -> Option<Money> {
        match currency {
            Currency::Usd => self.usd,
            Currency::Cny => self.cny,
        }
    }

    /// How many responses had no price (their tokens are not in any amount).
    pub fn unpriced(&self) -> u32 {
        self.unpriced
    }

    /// The amounts as shown (`$0.0123`, or `$0.01 + ¥0.086`); `None` when no response was
    /// priced (a view then shows tokens only).
    pub fn shown(&self) -> Option<String> {
        let amounts: Vec<String> = self.amounts().map(|c| c.to_string()).collect();
        (!amounts.is_empty()).then(|| amounts.join(" + "))
    }

    /// The amounts with how many responses they leave out (`$0.0123 (2 responses without a
    /// price not counted)`); `None` when no response was priced.
    pub fn described(&self) -> Option<String> {
        let shown = self.shown()?;
        Some(match self.unpriced {
            0 => shown,
            1 => format!("{shown} (1 response without a price not counted)"),
            n => format!("{shown} ({n} responses without a price not counted)"),
        })
    }

    /// Whether no response was billed at all (priced or not).
    pub fn is_empty(&self) -> bool {
        self.usd.is_none() && self.cny.is_none() && self.unpriced == 0
    }
}

/// The JSON formats' shape: `{"usd": 0.0123, "cny": null, "unpriced_responses": 0}`, an amount
/// in units (`null`: nothing priced in that currency).
impl Serialize for Spend {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Shape {
            usd: Option<f64>,
            cny: Option<f64>,
            unpriced_responses: u32,
        }
        Shape {
            usd: self.usd.map(Money::units),
            cny: self.cny.map(Money::units),
            unpriced_responses: self.unpriced,
        }
        .serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(picos: u64) -> String {
        Money::from_picos(picos).text()
    }

    #[test]
    fn amounts_show_three_significant_digits_below_a_unit_and_cents_above() {
        assert_eq!(text(0), "0");
        assert_eq!(text(12_300_000_000), "0.0123");
        assert_eq!(text(86_000_000_000), "0.086");
        assert_eq!(text(12_345_000_000), "0.0123");
        assert_eq!(text(12_350_000_000), "0.0124"); // half up
        assert_eq!(text(2_250_000), "0.00000225");
        assert_eq!(text(1), "0.000000000001");
        assert_eq!(text(999_000_000_000), "0.999");
        assert_eq!(text(999_600_000_000), "1.00");
        assert_eq!(text(1_500_000_000_000), "1.50");
        assert_eq!(text(12_345_000_000_000), "12.35");
        assert_eq!(text(u64::MAX), "18446744.07");
    }

    #[test]
    fn a_cost_is_the_tokens_times_the_rates_exactly() {
        let rates = Rates {
            cache_hit: Rate::micros_per_million(3_000),
            cache_miss: Rate::micros_per_million(150_000),
            output: Rate::micros_per_million(600_000),
        };
        let usage = Usage {
            prompt_tokens: 120,
            completion_tokens: 30,
            total_tokens: 150,
            prompt_cache_hit_tokens: 100,
            prompt_cache_miss_tokens: 20,
            reasoning_tokens: 5,
        };
        // 100 × 3000 + 20 × 150000 + 30 × 600000 picos.
        assert_eq!(rates.of(&usage).picos(), 300_000 + 3_000_000 + 18_000_000);
        // No split reported: every prompt token is a miss.
        let unsplit = Usage {
            prompt_cache_hit_tokens: 0,
            prompt_cache_miss_tokens: 0,
            ..usage
        };
        assert_eq!(rates.of(&unsplit).picos(), 120 * 150_000 + 18_000_000);
        assert_eq!(Rate::per_million(0.15), Rate::micros_per_million(150_000));
        assert_eq!(Rate::per_million(1e-7), Rate::micros_per_million(0));
    }

    #[test]
    fn spends_add_per_currency_and_count_the_unpriced() {
        let usd = Cost {
            currency: Currency::Usd,
            amount: Money::from_picos(12_300_000_000),
        };
        let cny = Cost {
            currency: Currency::Cny,
            amount: Money::from_picos(86_000_000_000),
        };
        let mut spend = Spend::default();
        assert_eq!(spend.shown(), None);
        spend.add(None);
        assert_eq!(spend.shown(), None);
        spend.add(Some(&usd));
        spend.add(Some(&usd));
        assert_eq!(spend.shown().as_deref(), Some("$0.0246"));
        let mut other = Spend::default();
        other.add(Some(&cny));
        spend.merge(&other);
        assert_eq!(spend.shown().as_deref(), Some("$0.0246 + ¥0.086"));
        assert_eq!(spend.unpriced(), 1);
        assert_eq!(
            spend.described().as_deref(),
            Some("$0.0246 + ¥0.086 (1 response without a price not counted)")
        );
        assert_eq!(
            serde_json::to_value(spend).unwrap(),
            serde_json::json!({"usd": 0.0246, "cny": 0.086, "unpriced_responses": 1})
        );
    }
}
