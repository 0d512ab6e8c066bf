//! `/plan TASK`: a planner turn with the read-only tools writes a numbered plan; an executor
//! then carries it out item by item, one turn each, and stops at the first item that fails.
//!
//! Both run on the agent's own session, so the history keeps them (each prompt marked with
//! [`PlanMark`]) and a reopened session tells them again ([`replay`]). Item states are not
//! stored apart: they follow from each item's turn as saved, by the same rule live and replayed
//! ([`item_result`]).

pub mod mark;
mod parse;
mod prompts;
pub mod replay;
mod run;

pub use mark::PlanMark;
pub use parse::{FAILED_MARKER, failure_reason, format_items, parse_items};
pub use prompts::{PLANNER_ADDITION, item_prompt};
pub use run::PlanPresets;

use crate::events::{ItemState, TurnOutcome};

/// How an item's turn ended, as the plan sees it: its state and, when it failed, why.
pub fn item_result(outcome: &TurnOutcome, answer: &str) -> (ItemState, Option<String>) {
    match outcome {
        TurnOutcome::Answered => match failure_reason(answer) {
            Some(reason) => (ItemState::Failed, Some(reason)),
            None => (ItemState::Done, None),
        },
        TurnOutcome::StepLimit => (
            ItemState::Failed,
            Some("it used every step of its turn without finishing".into()),
        ),
        TurnOutcome::Failed(_) => (
            ItemState::Failed,
            Some("its turn failed (the error is shown above)".into()),
        ),
        TurnOutcome::Interrupted => (ItemState::Interrupted, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_item_is_done_only_when_its_turn_answered_without_the_marker() {
        assert_eq!(
            item_result(&TurnOutcome::Answered, "Wrote it."),
            (ItemState::Done, None)
        );
        let (state, reason) = item_result(&TurnOutcome::Answered, "No.\nITEM FAILED: gone");
        assert_eq!(
            (state, reason.as_deref()),
            (ItemState::Failed, Some("gone"))
        );
        assert_eq!(
            item_result(&TurnOutcome::StepLimit, "").0,
            ItemState::Failed
        );
        assert_eq!(
            item_result(&TurnOutcome::Failed(crate::events::FailCause::Network), "").0,
            ItemState::Failed
        );
        assert_eq!(
            item_result(&TurnOutcome::Interrupted, "ITEM FAILED: x"),
            (ItemState::Interrupted, None)
        );
    }
}
