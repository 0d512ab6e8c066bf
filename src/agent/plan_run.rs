//! The two halves of a `/plan` run on the agent: the planner turn, then the executor's turns,
//! one per item, stopping at the first item that is not done.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::plan::{PLANNER_ADDITION, PlanMark, PlanPresets, item_prompt, item_result, parse_items};
use crate::agent::session::new_id;
use crate::agent::turn::Agent;
use crate::agent::turn_input::TurnInput;
use crate::events::{AgentEvent, EventSink, ItemState, PlanEvent, PlanSummary, TurnOutcome};
use crate::llm::Role;
use crate::tools::ToolRegistry;

impl Agent {
    /// Uses `presets` for the planner and the executor of `/plan` runs.
    pub fn with_plan_presets(mut self, presets: PlanPresets) -> Self {
        self.plan_presets = presets;
        self
    }

    /// The presets of `/plan` runs.
    pub fn plan_presets(&self) -> &PlanPresets {
        &self.plan_presets
    }

    /// The planner turn for `task`: only the read-only tools, the planner's preset, and a
    /// system addition asking for a numbered plan. Returns how the turn ended and the plan's
    /// items (none when it wrote no plan; an error event then says so).
    pub async fn plan(
        &mut self,
        task: &str,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> (TurnOutcome, Vec<String>) {
        let preset = self.plan_presets.planner.clone();
        events.send(AgentEvent::Plan(PlanEvent::Planning {
            task: task.to_string(),
            model: preset.model().to_string(),
        }));
        let input = TurnInput {
            prompt: task.to_string(),
            plan: Some(PlanMark::Request {
                model: preset.model().to_string(),
            }),
            tools: Some(Arc::new(self.read_only_tools())),
            preset: Some(preset),
            system_addition: Some(PLANNER_ADDITION.to_string()),
            content: None,
        };
        let outcome = self.run_turn_with(input, events, cancel).await;
        let items = match outcome {
            TurnOutcome::Answered => parse_items(self.turn_answer()),
            _ => Vec::new(),
        };
        match (&outcome, items.is_empty()) {
            (TurnOutcome::Answered, false) => events.send(AgentEvent::Plan(PlanEvent::Proposed {
                items: items.clone(),
                replayed: false,
            })),
            (TurnOutcome::Answered | TurnOutcome::StepLimit, true) => {
                events.send(AgentEvent::Error {
                    message: "The planner wrote no numbered plan: /plan again, with the task \
                              said differently (or more steps: /steps N)."
                        .into(),
                })
            }
            _ => {}
        }
        (outcome, items)
    }

    /// Carries out `items` one turn each with the executor's preset and every tool, stopping
    /// at the first item that is not done (failed, or interrupted through `cancel`).
    pub async fn execute_plan(
        &mut self,
        items: Vec<String>,
        events: &EventSink,
        cancel: &CancellationToken,
    ) -> PlanSummary {
        let preset = self.plan_presets.executor.clone();
        let total = items.len();
        if items.is_empty() {
            events.send(AgentEvent::Error {
                message: "The plan has no numbered item (`1. …` lines): nothing was run.".into(),
            });
            return finished(events, PlanSummary::default());
        }
        events.send(AgentEvent::Plan(PlanEvent::Executing {
            items: items.clone(),
            model: preset.model().to_string(),
        }));
        let (run, task) = (new_id(), self.planned_task());
        for index in 0..total {
            if cancel.is_cancelled() {
                let stopped = Some((index, ItemState::Interrupted, None));
                events.send(AgentEvent::Plan(PlanEvent::ItemFinished {
                    index,
                    state: ItemState::Interrupted,
                    reason: None,
                }));
                let summary = PlanSummary {
                    done: index,
                    total,
                    stopped,
                };
                return finished(events, summary);
            }
            events.send(AgentEvent::Plan(PlanEvent::ItemStarted { index }));
            let input = TurnInput {
                prompt: items[index].clone(),
                content: Some(item_prompt(task.as_deref(), &items, index)),
                plan: Some(PlanMark::Item {
                    model: preset.model().to_string(),
                    run: run.clone(),
                    index,
                    items: items.clone(),
                }),
                preset: Some(preset.clone()),
                ..TurnInput::default()
            };
            let outcome = self.run_turn_with(input, events, cancel).await;
            let (state, reason) = item_result(&outcome, self.turn_answer());
            events.send(AgentEvent::Plan(PlanEvent::ItemFinished {
                index,
                state,
                reason: reason.clone(),
            }));
            if state != ItemState::Done {
                let summary = PlanSummary {
                    done: index,
                    total,
                    stopped: Some((index, state, reason)),
                };
                return finished(events, summary);
            }
        }
        let summary = PlanSummary {
            done: total,
            total,
            stopped: None,
        };
        finished(events, summary)
    }

    /// The tools the planner may use: the read-only ones (no provider's: an MCP server's
    /// hint is its own word).
    fn read_only_tools(&self) -> ToolRegistry {
        let names: Vec<String> = self
            .registry
            .iter()
            .filter(|t| t.read_only())
            .map(|t| t.schema().name)
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        self.registry.subset(&names)
    }

    /// What the turn just run answered: its last message when that is a whole answer.
    fn turn_answer(&self) -> &str {
        self.session
            .messages
            .last()
            .filter(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
            .filter(|m| m.incomplete.is_none())
            .map_or("", |m| m.content.as_str())
    }

    /// The task of the last planner prompt, which the plan being run was written for.
    fn planned_task(&self) -> Option<String> {
        self.session
            .messages
            .iter()
            .rev()
            .find(|m| matches!(m.plan, Some(PlanMark::Request { .. })))
            .map(|m| m.shown().to_string())
    }
}

/// Reports the end of the run and returns its summary.
fn finished(events: &EventSink, summary: PlanSummary) -> PlanSummary {
    events.send(AgentEvent::Plan(PlanEvent::Finished(summary.clone())));
    summary
}
