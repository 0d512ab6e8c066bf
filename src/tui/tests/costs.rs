//! What model responses cost, as the screen shows it: the session's in the status line, each
//! turn's on its timeline label, both in `/status`; a model without a price shows tokens only.

use std::time::{Duration, Instant};

use chrono::TimeZone;

use super::common::*;
use crate::agent::AgentEvent;
use crate::llm::Preset;
use crate::llm::Usage;
use crate::llm::prices::{Cost, Prices};
use crate::tui::status_report;

/// What a pro response of `usage` cost off-peak (a Wednesday evening in Beijing), in dollars.
fn pro_cost(usage: &Usage) -> Option<Cost> {
    let evening = chrono_tz::Asia::Shanghai
        .with_ymd_and_hms(2026, 12, 2, 20, 0, 0)
        .single()
        .unwrap()
        .with_timezone(&chrono::Utc);
    Prices::default().cost(&Preset::Pro, usage, evening)
}

fn usage(prompt: u64, hits: u64, output: u64) -> Usage {
    Usage {
        prompt_tokens: prompt,
        completion_tokens: output,
        total_tokens: prompt + output,
        prompt_cache_hit_tokens: hits,
        prompt_cache_miss_tokens: prompt - hits,
        reasoning_tokens: 0,
    }
}

/// `whole_turn` with a priced response after each of its two steps.
fn priced_turn(answer: &str, costs: [Option<Cost>; 2]) -> Vec<AgentEvent> {
    let mut events = whole_turn(answer);
    let answer_step = events
        .iter()
        .position(|e| matches!(e, AgentEvent::StepStarted { step: 2, .. }))
        .unwrap();
    events.insert(answer_step + 2, AgentEvent::ResponseCost(costs[1]));
    events.insert(2, AgentEvent::ResponseCost(costs[0]));
    events
}

#[test]
fn the_status_line_and_the_timeline_show_what_was_spent() {
    let t0 = Instant::now();
    let mut s = state();
    s.preset = Preset::Pro;
    let first = pro_cost(&usage(1_000, 600, 50));
    let second = pro_cost(&usage(1_200, 1_000, 80));
    send(&mut s, t0, "Write hello.txt");
    feed(&mut s, t0, priced_turn("Done.", [first, second]));
    send(&mut s, t0, "Again");
    feed(&mut s, t0, priced_turn("Done again.", [first, None]));

    let screen = render(&mut s, 130, 24, t0 + Duration::from_secs(3));
    insta::assert_snapshot!(screen);
    // 600 × 0.022 + 400 × 0.66 + 50 × 1.98 = 376.2 millionths; 1000 × 0.022 + 200 × 0.66 + 80
    // × 1.98 = 312.4: the first turn is $0.0006886, the session one more first response.
    let turn = first.unwrap().amount.picos() + second.unwrap().amount.picos();
    assert_eq!(turn, 688_600_000);
    let session = turn + first.unwrap().amount.picos();
    assert_eq!(session, 1_064_800_000);
    assert!(screen.contains("spent $0.00106+"), "{screen}");
    assert!(screen.contains("── turn 1 · $0.000689 "), "{screen}");
    assert!(screen.contains("── turn 2 · $0.000376+ "), "{screen}");

    let status = status_report::report(&s);
    assert!(
        status.contains(
            "  Cost        $0.00106 (1 response without a price not counted) this session"
        ),
        "{status}"
    );
    assert!(
        status.contains("$0.000376 (1 response without a price not counted) the last turn"),
        "{status}"
    );
    assert!(status.contains("DeepSeek's of 2026-12-02"), "{status}");
}

#[test]
fn a_model_without_a_price_shows_tokens_only() {
    let t0 = Instant::now();
    let mut s = state();
    s.preset = Preset::Custom("my-model".into());
    send(&mut s, t0, "Write hello.txt");
    feed(&mut s, t0, priced_turn("Done.", [None, None]));
    let screen = render(&mut s, 130, 24, t0 + Duration::from_secs(3));
    assert!(screen.contains("tokens 1200 in / 80 out"), "{screen}");
    assert!(
        !screen.contains("spent") && !screen.contains('$'),
        "{screen}"
    );
    assert!(screen.contains("── turn 1 ──"), "{screen}");
    let status = status_report::report(&s);
    assert!(status.contains("  Cost        none known"), "{status}");
}
