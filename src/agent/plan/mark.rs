//! What a saved message is to a `/plan` run. Kept with the message (an optional field older
//! histories simply lack), so a reopened session shows its plans and their progress.

use serde::{Deserialize, Serialize};

/// What a prompt is to a plan.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanMark {
    /// The planner's prompt: the task as the person typed it after `/plan`.
    Request {
        /// The planner's model.
        #[serde(default)]
        model: String,
    },
    /// The executor's prompt for item `index` (0-based) of `items`, the plan as it ran.
    Item {
        /// The executor's model.
        #[serde(default)]
        model: String,
        /// The executor run this item belongs to.
        run: String,
        /// Which item.
        index: usize,
        /// Every item of the plan, in order.
        items: Vec<String>,
    },
}

impl PlanMark {
    /// The text an executor prompt is shown as: its item (the content sent carries the plan).
    pub fn shown(&self) -> Option<&str> {
        match self {
            Self::Request { .. } => None,
            Self::Item { index, items, .. } => items.get(*index).map(String::as_str),
        }
    }
}
