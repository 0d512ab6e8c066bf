//! A request DeepSeek holds in its queue: the status line says so with its own clock, and says
//! nothing of it once the answer starts.

use std::time::{Duration, Instant};

use super::common::*;
use crate::agent::AgentEvent;
use crate::tui::panes::status;

#[test]
fn a_queued_request_shows_its_wait_then_the_turn_goes_on_as_usual() {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "hi");
    let at = |secs| t0 + Duration::from_secs(secs);
    feed(
        &mut s,
        at(5),
        vec![AgentEvent::Queued {
            waited: Duration::from_secs(5),
            started: false,
        }],
    );
    // The seconds move with the frames, counted from when the wait began.
    let line = status::line(&s, at(45), 160).to_string();
    assert!(line.contains("queued at DeepSeek 45 s"), "{line}");
    assert!(!line.contains("thinking"), "{line}");
    feed(
        &mut s,
        at(50),
        vec![AgentEvent::Queued {
            waited: Duration::from_secs(50),
            started: true,
        }],
    );
    let line = status::line(&s, at(51), 160).to_string();
    assert!(!line.contains("queued"), "{line}");
    assert!(line.contains("thinking 51s"), "{line}");
}

#[test]
fn another_providers_queue_is_named_by_the_provider() {
    let t0 = Instant::now();
    let mut s = super::providers::with_local();
    let fx = send(&mut s, t0, "/model local/llama");
    assert!(!fx.is_empty());
    send(&mut s, t0, "hi");
    feed(
        &mut s,
        t0,
        vec![AgentEvent::Queued {
            waited: Duration::ZERO,
            started: false,
        }],
    );
    let line = status::line(&s, t0 + Duration::from_secs(3), 160).to_string();
    assert!(line.contains("queued at local 3 s"), "{line}");
    // The turn ends (an error, an interrupt): the wait is not shown any more.
    feed(&mut s, t0, vec![turn_over()]);
    assert!(!status::line(&s, t0, 160).to_string().contains("queued"));
}
