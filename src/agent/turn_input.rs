//! What one turn is asked, and what it changes for its own requests only: the `/plan` runs'
//! planner (read-only tools, its own preset, a system addition) and executor (its own preset,
//! an item's prompt shown as the item).

use std::sync::Arc;

use super::plan::PlanMark;
use crate::llm::{ChatMessage, Preset, Role};
use crate::tools::ToolRegistry;

/// A turn's prompt and the settings that hold for that turn alone.
#[derive(Clone, Default)]
pub struct TurnInput {
    /// The prompt as shown (`TurnStarted`); also what is sent unless `content` is given.
    pub prompt: String,
    /// What the model gets instead of `prompt` (an executor item with its plan).
    pub content: Option<String>,
    /// What the prompt is to a plan, saved with it.
    pub plan: Option<PlanMark>,
    /// The tools of this turn instead of the agent's (the planner's read-only ones).
    pub tools: Option<Arc<ToolRegistry>>,
    /// The preset of this turn's requests instead of the agent's.
    pub preset: Option<Preset>,
    /// Added to the system prompt of this turn's requests (not saved).
    pub system_addition: Option<String>,
}

impl TurnInput {
    /// A typed prompt, with nothing changed for its turn.
    pub fn prompt(prompt: &str) -> Self {
        Self {
            prompt: prompt.to_string(),
            ..Self::default()
        }
    }
}

/// What the running turn changes for its requests (none between turns).
#[derive(Clone, Debug, Default)]
pub struct TurnSpec {
    /// The preset instead of the agent's.
    pub preset: Option<Preset>,
    /// Added to the system prompt.
    pub system_addition: Option<String>,
}

impl TurnSpec {
    /// Adds the system addition, if any, to the system prompt opening `messages`.
    pub fn add_to(&self, messages: &mut [ChatMessage]) {
        let Some(addition) = &self.system_addition else {
            return;
        };
        if let Some(first) = messages.first_mut().filter(|m| m.role == Role::System) {
            let base = first.content.take().unwrap_or_default();
            first.content = Some(format!("{base}\n\n{addition}"));
        }
    }
}
