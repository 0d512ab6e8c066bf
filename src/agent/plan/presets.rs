//! The models of `/plan` runs: the planner's and the executor's.

use crate::llm::Preset;

/// The presets of `/plan` runs: the planner thinks hard, the executor works fast.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlanPresets {
    /// The planner's (default `deepseek-v4-pro`).
    pub planner: Preset,
    /// The executor's (default `deepseek-flash`).
    pub executor: Preset,
}

impl Default for PlanPresets {
    fn default() -> Self {
        Self {
            planner: Preset::Pro,
            executor: Preset::Flash,
        }
    }
}
