//! The real binary prices what the local model server reports: the JSON report's cost is the
//! tokens of the usage blocks times DeepSeek's table (or the person's `[cost]` prices), the
//! stream-json lines carry each response's cost and the turn's, and the history keeps them.

use chrono::Utc;
use miniclaw::llm::Preset;
use miniclaw::llm::Usage;
use miniclaw::llm::prices::Prices;
use serde_json::{Value, json};

use crate::headless_bin::{headless, text};
use crate::support::{MockServer, Reply, SseBuilder};

/// The usage block `SseBuilder::finish` sends with every response.
fn sent_usage() -> Usage {
    Usage {
        prompt_tokens: 120,
        completion_tokens: 30,
        total_tokens: 150,
        prompt_cache_hit_tokens: 100,
        prompt_cache_miss_tokens: 20,
        reasoning_tokens: 5,
    }
}

/// A call of a tool, then the answer: two priced responses.
fn two_responses() -> Vec<Reply> {
    vec![
        SseBuilder::calls("c1", "list_files", json!({"relative_dir": "."})),
        SseBuilder::answer("Nothing here."),
    ]
}

#[test]
fn the_json_report_costs_the_usage_at_deepseeks_price_of_the_hour() {
    let (server, _rt) = MockServer::start_blocking(two_responses());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let price_now = || {
        Prices::default()
            .cost(&Preset::Pro, &sent_usage(), Utc::now())
            .unwrap()
            .amount
    };
    let before = price_now();
    let out = headless(&ws, &server.url())
        .args(["--model", "deepseek-v4-pro", "--output-format", "json"])
        .args(["--print", "What is here?"])
        .output()
        .unwrap();
    let after = price_now();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let usd = report["cost"]["usd"].as_f64().expect("a cost in dollars");
    // Each response is priced when it finishes; a run across the start or end of DeepSeek's
    // peak hours may have one of each.
    let candidates = [before.plus(before), before.plus(after), after.plus(after)];
    assert!(
        candidates.iter().any(|c| c.units() == usd),
        "{usd} is none of {candidates:?}"
    );
    assert_eq!(report["cost"]["cny"], Value::Null);
    assert_eq!(report["cost"]["unpriced_responses"], 0);
    // 100 hits, 20 misses and 30 generated tokens per response at $0.022 / $0.66 / $1.98 per
    // million off-peak, twice that at peak.
    let off_peak = 2.0 * (100.0 * 0.022 + 20.0 * 0.66 + 30.0 * 1.98) / 1e6;
    assert!(
        (usd - off_peak).abs() < 1e-12
            || (usd - 2.0 * off_peak).abs() < 1e-12
            || (usd - 1.5 * off_peak).abs() < 1e-12,
        "{usd} vs {off_peak} off-peak"
    );
    assert!(
        text(&out.stderr).contains(" this turn\n") && text(&out.stderr).contains("[cost] $"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn the_persons_prices_in_yuan_reach_the_stream_the_report_and_the_history() {
    let (server, _rt) = MockServer::start_blocking(two_responses());
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("miniclaw")).unwrap();
    std::fs::write(
        config.join("miniclaw").join("config.toml"),
        "[cost]\ncurrency = \"CNY\"\n\n[cost.models.\"deepseek-v4-pro\"]\ncache_hit = 0.5\ncache_miss = 2\noutput = 8\n",
    )
    .unwrap();
    let out = headless(&ws, &server.url())
        .env("XDG_CONFIG_HOME", &config)
        .args([
            "--model",
            "deepseek-v4-pro",
            "--output-format",
            "stream-json",
        ])
        .args(["--print", "What is here?"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // 100 × 0.5 + 20 × 2 + 30 × 8 = 330 yuan per million such responses, at any hour.
    let one = 330.0 / 1e6;
    let responses: Vec<&Value> = lines
        .iter()
        .filter(|l| l["type"] == "response_cost")
        .collect();
    assert_eq!(responses.len(), 2, "{lines:?}");
    for r in &responses {
        assert_eq!(r["cost"], json!({"currency": "CNY", "amount": one}));
    }
    let finished = lines.iter().find(|l| l["type"] == "turn_finished").unwrap();
    let both = 660.0 / 1e6;
    assert_eq!(
        finished["cost"],
        json!({"usd": null, "cny": both, "unpriced_responses": 0})
    );
    let result = lines.last().unwrap();
    assert_eq!(result["type"], "result");
    assert_eq!(result["cost"], finished["cost"]);

    // The history keeps each response's tokens and cost, exactly.
    let history: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("history.json")).unwrap()).unwrap();
    let billed: Vec<&Value> = history["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m.get("billed"))
        .collect();
    assert_eq!(billed.len(), 2, "{history}");
    for b in billed {
        assert_eq!(b["cost"], json!({"currency": "CNY", "amount": 330_000_000}));
        assert_eq!(b["usage"]["prompt_cache_hit_tokens"], 100);
    }
}

#[test]
fn a_model_without_a_price_reports_tokens_and_no_cost() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("Hi.")]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let out = headless(&ws, &server.url())
        .args(["--model", "some-other-model", "--output-format", "json"])
        .args(["--print", "Hello"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["usage"]["prompt_tokens"], 120);
    assert_eq!(
        report["cost"],
        json!({"usd": null, "cny": null, "unpriced_responses": 1})
    );
    assert!(
        !text(&out.stderr).contains("[cost]"),
        "{}",
        text(&out.stderr)
    );
}
