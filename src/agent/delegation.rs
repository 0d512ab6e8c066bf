//! The agent layer's side of delegation: a sub-agent is a new [`Agent`] on the same model and
//! preset, whose every model request is drawn from the budget of the turn that delegated.

use std::sync::Arc;

use futures::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::budget::{BudgetExhausted, RequestBudget};
use super::session::Session;
use super::turn::{Agent, AgentSettings};
use crate::events::{EventSink, TurnOutcome};
use crate::llm::{LlmClient, Preset};
use crate::tools::{Delegator, SubOutcome, SubTask};

/// Starts sub-agents for the tool calls of one turn.
#[derive(Clone, Debug)]
pub struct TurnDelegator {
    /// The client the main agent uses.
    pub client: LlmClient,
    /// The preset of the turn.
    pub preset: Preset,
    /// The turn's model requests.
    pub budget: RequestBudget,
    /// The context budget of the agent delegating (a sub-agent's requests fit the same).
    pub context: super::context::ContextBudget,
    /// What responses cost, as the main agent prices them.
    pub prices: Arc<crate::llm::prices::Prices>,
    /// The person's hooks: a sub-agent's tool calls pass them like the main agent's.
    pub hooks: Option<Arc<crate::hooks::Hooks>>,
}

impl Agent {
    /// The delegator the tool calls of a turn drawing on `budget` get (defined here, not in the
    /// loop, so the loop needs no import of this file: sub-agents are agents).
    pub(super) fn delegator(&self, budget: &RequestBudget) -> Arc<dyn Delegator> {
        Arc::new(TurnDelegator {
            client: self.client.clone(),
            preset: self.current_preset(),
            budget: budget.clone(),
            context: self.budget.clone(),
            prices: self.prices.clone(),
            hooks: self.hooks.clone(),
        })
    }
}

impl TurnDelegator {
    fn out_of_budget(&self) -> String {
        BudgetExhausted {
            limit: self.budget.limit(),
        }
        .to_string()
    }
}

impl Delegator for TurnDelegator {
    fn refusal(&self) -> Option<String> {
        self.budget.is_exhausted().then(|| self.out_of_budget())
    }

    fn run<'a>(
        &'a self,
        task: SubTask,
        events: EventSink,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, SubOutcome> {
        Box::pin(async move {
            let mut agent = Agent::new(
                self.client.clone(),
                task.tools,
                task.sandbox,
                Session::with_system(task.system_prompt),
                AgentSettings {
                    preset: self.preset.clone(),
                    max_steps: task.max_steps,
                    history_path: None,
                },
            )
            .with_request_budget(self.budget.clone());
            // A sub-agent's task is short: its older steps are trimmed, never summarized.
            agent.budget = self.context.clone();
            agent.compact_at = 0;
            agent.prices = self.prices.clone();
            // Only its tool calls: its prompt and its end are the delegating call's.
            agent.hooks = self.hooks.clone();
            let outcome = agent.run_turn(&task.prompt, &events, cancel).await;
            let answer = agent
                .session()
                .last_answer()
                .unwrap_or("")
                .trim()
                .to_string();
            match outcome {
                TurnOutcome::Interrupted => SubOutcome::Interrupted,
                TurnOutcome::Answered if !answer.is_empty() => SubOutcome::Answered(answer),
                // A step limit with the budget gone is the budget's doing (or both at once).
                TurnOutcome::StepLimit if self.budget.is_exhausted() => SubOutcome::OutOfRequests {
                    answer,
                    reason: self.out_of_budget(),
                },
                TurnOutcome::StepLimit => SubOutcome::OutOfSteps(answer),
                _ => SubOutcome::Failed,
            }
        })
    }
}
