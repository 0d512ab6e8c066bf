//! Small screens and polish: the side panes fold away below a height as they do by width, and
//! what else a 60×20 or 80×24 terminal showed wrong.

use std::time::Instant;

use super::common::*;

/// A state after one turn with a tool step, so the timeline has something to show.
fn after_a_step() -> crate::tui::state::State {
    let t0 = Instant::now();
    let mut s = state();
    send(&mut s, t0, "write");
    feed(&mut s, t0, whole_turn("Written."));
    s
}

#[test]
fn below_a_height_the_side_panes_fold_away_and_the_conversation_has_the_rows() {
    let mut s = after_a_step();
    let short = render(&mut s, 60, 20, Instant::now());
    assert!(s.areas.timeline.is_none(), "{short}");
    assert!(!short.contains("Timeline"), "{short}");
    // The panes' area is the conversation's: 20 rows less the input and the status line.
    assert_eq!(s.areas.conversation.height, 16, "{short}");
    // A 24-row terminal still stacks them, a wide one puts them beside.
    let taller = render(&mut s, 60, 24, Instant::now());
    assert!(s.areas.timeline.is_some(), "{taller}");
    let wide = render(&mut s, 120, 20, Instant::now());
    assert!(s.areas.timeline.is_some(), "{wide}");
}
