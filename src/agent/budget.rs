//! One budget of model requests per turn, shared by the main loop and every sub-agent it starts
//! (however deeply nested), so a model cannot multiply its requests by delegating.
//!
//! The rule: a turn of `max_steps` steps may make at most `max_steps × REQUESTS_PER_STEP` model
//! requests in all. The main loop's own `max_steps` requests are reserved, so sub-agents share
//! the rest and can never keep the main loop from reaching its step limit (and answering).

use std::sync::{Arc, Mutex, PoisonError};

/// Model requests per step of `--max-steps`: the step's own request and three for sub-agents.
pub const REQUESTS_PER_STEP: usize = 4;

/// Why a sub-agent may not make another model request.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the turn's budget of {limit} model requests ({REQUESTS_PER_STEP} per step of --max-steps, sub-agents included) is used up"
)]
pub struct BudgetExhausted {
    /// The turn's whole budget.
    pub limit: usize,
}

#[derive(Debug, Default)]
struct Counts {
    /// Requests made so far, by anyone.
    used: usize,
    /// Requests kept for the main loop's remaining steps.
    reserved: usize,
}

/// The request budget of one turn; clones share it.
#[derive(Clone, Debug)]
pub struct RequestBudget {
    limit: usize,
    counts: Arc<Mutex<Counts>>,
}

impl RequestBudget {
    /// The budget of a turn of `max_steps` steps, with those steps reserved for the main loop.
    pub fn for_turn(max_steps: usize) -> Self {
        let max_steps = max_steps.max(1);
        Self {
            limit: max_steps.saturating_mul(REQUESTS_PER_STEP),
            counts: Arc::new(Mutex::new(Counts {
                used: 0,
                reserved: max_steps,
            })),
        }
    }

    /// Takes one request for a step of the main loop, from its reservation.
    pub fn take_reserved(&self) -> Result<(), BudgetExhausted> {
        let mut c = self.lock();
        if c.reserved > 0 {
            c.reserved -= 1;
            c.used += 1;
            return Ok(());
        }
        drop(c);
        self.take()
    }

    /// Takes one request for a sub-agent; never one the main loop has reserved.
    pub fn take(&self) -> Result<(), BudgetExhausted> {
        let mut c = self.lock();
        if c.used + c.reserved >= self.limit {
            return Err(BudgetExhausted { limit: self.limit });
        }
        c.used += 1;
        Ok(())
    }

    /// Whether a sub-agent's request would be refused now.
    pub fn is_exhausted(&self) -> bool {
        let c = self.lock();
        c.used + c.reserved >= self.limit
    }

    /// Requests made so far.
    pub fn used(&self) -> usize {
        self.lock().used
    }

    /// The whole budget of the turn.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The counts; a panic elsewhere while holding the lock leaves them valid, so it is ignored.
    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sub_agents_share_what_the_main_loop_has_not_reserved() {
        let b = RequestBudget::for_turn(2);
        assert_eq!(b.limit(), 2 * REQUESTS_PER_STEP);
        let shared = b.clone();
        assert!(b.take_reserved().is_ok());
        let mut sub = 0;
        while shared.take().is_ok() {
            sub += 1;
        }
        assert_eq!(
            sub,
            2 * REQUESTS_PER_STEP - 2,
            "all but the main loop's steps"
        );
        assert!(b.is_exhausted());
        assert_eq!(
            shared.take(),
            Err(BudgetExhausted {
                limit: 2 * REQUESTS_PER_STEP
            })
        );
        assert!(
            b.take_reserved().is_ok(),
            "the main loop's last step is kept"
        );
        assert!(b.take_reserved().is_err());
        assert_eq!(b.used(), b.limit());
    }

    #[test]
    fn the_refusal_says_what_ran_out() {
        let text = BudgetExhausted { limit: 8 }.to_string();
        assert!(text.contains("8 model requests") && text.contains("--max-steps"));
    }
}
