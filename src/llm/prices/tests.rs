use std::sync::Arc;

use chrono::TimeZone;

use super::*;
use crate::llm::{Provider, ProviderModel};
use crate::settings::ModelPrices;

/// A moment given in Beijing time.
fn beijing(d: u32, h: u32) -> DateTime<Utc> {
    chrono_tz::Asia::Shanghai
        .with_ymd_and_hms(2026, 12, d, h, 30, 0)
        .single()
        .unwrap()
        .with_timezone(&Utc)
}

/// Wednesday 10:30 and 20:30.
fn peak() -> DateTime<Utc> {
    beijing(2, 10)
}
fn off_peak() -> DateTime<Utc> {
    beijing(2, 20)
}

/// 1,000 prompt tokens (800 from the cache) and 500 generated.
fn usage() -> Usage {
    Usage {
        prompt_tokens: 1_000,
        completion_tokens: 500,
        total_tokens: 1_500,
        prompt_cache_hit_tokens: 800,
        prompt_cache_miss_tokens: 200,
        reasoning_tokens: 100,
    }
}

/// The cost in units, computed from the prices per million tokens as published.
fn expected((hit, miss, output): (f64, f64, f64)) -> f64 {
    (800.0 * hit + 200.0 * miss + 500.0 * output) / 1e6
}

fn units(prices: &Prices, preset: &Preset, at: DateTime<Utc>) -> Option<(Currency, f64)> {
    prices
        .cost(preset, &usage(), at)
        .map(|c| (c.currency, c.amount.units()))
}

fn close(got: Option<(Currency, f64)>, currency: Currency, want: f64) {
    let (c, amount) = got.expect("a price");
    assert_eq!(c, currency);
    assert!((amount - want).abs() < 1e-15, "{amount} != {want}");
}

fn settings(currency: Currency, models: &[(&str, ModelPrices)]) -> CostSettings {
    CostSettings {
        currency,
        models: models.iter().map(|(n, p)| (n.to_string(), *p)).collect(),
    }
}

#[test]
fn deepseeks_presets_cost_the_table_price_of_the_hour_in_dollars() {
    let prices = Prices::default();
    let usd = Currency::Usd;
    close(
        units(&prices, &Preset::Flash, off_peak()),
        usd,
        expected((0.003, 0.15, 0.60)),
    );
    close(
        units(&prices, &Preset::Flash, peak()),
        usd,
        expected((0.006, 0.30, 1.20)),
    );
    close(
        units(&prices, &Preset::Pro, off_peak()),
        usd,
        expected((0.022, 0.66, 1.98)),
    );
    close(
        units(&prices, &Preset::Pro, peak()),
        usd,
        expected((0.044, 1.32, 3.96)),
    );
    // Exactly: 800 × 22,000 + 200 × 660,000 + 500 × 1,980,000 picos.
    let cost = prices.cost(&Preset::Pro, &usage(), off_peak()).unwrap();
    assert_eq!(cost.amount.picos(), 17_600_000 + 132_000_000 + 990_000_000);
    assert_eq!(cost.to_string(), "$0.00114");
    // A Saturday morning is off-peak.
    assert_eq!(
        prices.cost(&Preset::Pro, &usage(), beijing(5, 10)),
        Some(cost)
    );
}

#[test]
fn in_yuan_the_yuan_table_counts() {
    let prices = Prices::new(&settings(Currency::Cny, &[]));
    let cny = Currency::Cny;
    close(
        units(&prices, &Preset::Flash, off_peak()),
        cny,
        expected((0.02, 1.0, 4.0)),
    );
    close(
        units(&prices, &Preset::Flash, peak()),
        cny,
        expected((0.04, 2.0, 8.0)),
    );
    close(
        units(&prices, &Preset::Pro, off_peak()),
        cny,
        expected((0.15, 4.5, 13.5)),
    );
    close(
        units(&prices, &Preset::Pro, peak()),
        cny,
        expected((0.30, 9.0, 27.0)),
    );
    let cost = prices.cost(&Preset::Flash, &usage(), peak()).unwrap();
    // 800 × 0.04 + 200 × 2 + 500 × 8 = 4,432 yuan per million responses like it.
    assert_eq!(cost.to_string(), "¥0.00443");
}

#[test]
fn the_cache_split_decides_the_prompts_price() {
    let prices = Prices::default();
    let all_hits = Usage {
        prompt_cache_hit_tokens: 1_000,
        prompt_cache_miss_tokens: 0,
        ..usage()
    };
    let all_misses = Usage {
        prompt_cache_hit_tokens: 0,
        prompt_cache_miss_tokens: 1_000,
        ..usage()
    };
    let cost = |u: &Usage| {
        prices
            .cost(&Preset::Flash, u, off_peak())
            .unwrap()
            .amount
            .picos()
    };
    assert_eq!(cost(&all_hits), 1_000 * 3_000 + 500 * 600_000);
    assert_eq!(cost(&all_misses), 1_000 * 150_000 + 500 * 600_000);
}

#[test]
fn custom_names_deepseek_bills_price_like_the_presets_and_unknown_models_have_none() {
    let prices = Prices::default();
    for name in ["deepseek-flash", "deepseek-v4-flash"] {
        assert_eq!(
            prices.rates(&Preset::Custom(name.into()), peak()),
            prices.rates(&Preset::Flash, peak())
        );
    }
    assert_eq!(
        prices.rates(&Preset::Custom("deepseek-v4-pro".into()), peak()),
        prices.rates(&Preset::Pro, peak())
    );
    assert_eq!(
        prices.cost(&Preset::Custom("my-model".into()), &usage(), peak()),
        None
    );
    assert_eq!(
        prices.cost(&provided("ollama", "qwen"), &usage(), peak()),
        None
    );
    let billed = prices.bill(&provided("ollama", "qwen"), &usage(), peak());
    assert_eq!((billed.usage, billed.cost), (usage(), None));
}

#[test]
fn the_persons_prices_win_at_all_hours_and_price_a_providers_model() {
    let own = ModelPrices {
        cache_hit: 0.1,
        cache_miss: 1.0,
        output: 2.0,
    };
    let prices = Prices::new(&settings(
        Currency::Usd,
        &[("deepseek-v4-pro", own), ("ollama/qwen", own)],
    ));
    let want = expected((0.1, 1.0, 2.0));
    for at in [peak(), off_peak()] {
        close(units(&prices, &Preset::Pro, at), Currency::Usd, want);
        close(
            units(&prices, &provided("ollama", "qwen"), at),
            Currency::Usd,
            want,
        );
    }
    // Another provider's model of the same name has no price; the flash preset keeps the table's.
    assert_eq!(units(&prices, &provided("vllm", "qwen"), peak()), None);
    close(
        units(&prices, &Preset::Flash, peak()),
        Currency::Usd,
        expected((0.006, 0.30, 1.20)),
    );
    // The flash preset's older name reaches it too, whichever name it is sent by.
    let flash = Prices::new(&settings(Currency::Usd, &[("deepseek-v4-flash", own)]));
    close(units(&flash, &Preset::Flash, peak()), Currency::Usd, want);
}

fn provided(provider: &str, model: &str) -> Preset {
    let p = Arc::new(Provider {
        name: provider.into(),
        base_url: "http://127.0.0.1:1".into(),
        key_var: None,
        models: Vec::new(),
    });
    Preset::Provided(ProviderModel {
        model: p.model(model),
        provider: p,
    })
}
