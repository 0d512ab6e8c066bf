//! A step (one model call) and its tool calls, and a sub-agent's steps under the call that
//! started it.

use std::time::Duration;

use serde_json::Value;

use crate::events::{AgentEvent, CallOutcome, StepEnd};

/// One model call: its reasoning, its text, and the calls it made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Step {
    /// The turn it belongs to (index into the transcript's turns).
    pub turn: usize,
    /// Its 1-based number in the turn.
    pub number: usize,
    /// The turn's step limit.
    pub max: usize,
    /// The model's reasoning.
    pub reasoning: String,
    /// The model's text: a thought when calls followed, else the answer.
    pub text: String,
    /// What the text turned out to be (`None` while it streams, or when the step was cut
    /// short by an interrupt or an error).
    pub end: Option<StepEnd>,
    /// The calls it made, in order.
    pub calls: Vec<Call>,
}

impl Step {
    /// Step `number` of turn `turn`, just begun.
    pub fn new(turn: usize, number: usize, max: usize) -> Self {
        Self {
            turn,
            number,
            max,
            ..Self::default()
        }
    }

    /// The step's text when it is a thought (tools were called after it).
    pub fn thought(&self) -> Option<&str> {
        (self.end == Some(StepEnd::Thought) && !self.text.trim().is_empty())
            .then_some(self.text.as_str())
    }
}

/// One tool call.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Call {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The JSON arguments as the model wrote them.
    pub arguments: String,
    /// What it printed while it ran.
    pub output: String,
    /// How it ended (`None` while it runs, or when the turn stopped under it).
    pub finished: Option<Finished>,
    /// The sub-agent it started, if it delegated.
    pub sub: Option<Box<SubAgent>>,
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// The observation the model read.
    pub result: Value,
    /// How it ended.
    pub outcome: CallOutcome,
    /// Whether a person said yes to it first.
    pub approved: bool,
    /// How long it ran (a call told again from a saved session has no timing).
    pub duration: Option<Duration>,
}

impl Call {
    /// A call that just began.
    pub fn new(id: &str, name: &str, arguments: &str) -> Self {
        Self {
            id: id.to_string(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            ..Self::default()
        }
    }

    /// How it ended, once it did.
    pub fn outcome(&self) -> Option<&CallOutcome> {
        self.finished.as_ref().map(|f| &f.outcome)
    }

    /// Whether it ended without success.
    pub fn failed(&self) -> bool {
        self.outcome().is_some_and(|o| !o.is_ok())
    }

    /// How long it ran, when it ended and was timed.
    pub fn duration(&self) -> Option<Duration> {
        self.finished.as_ref().and_then(|f| f.duration)
    }
}

/// What a sub-agent did for the call that started it, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubAgent {
    /// Its steps (numbered from 1 by itself).
    pub steps: Vec<Step>,
    /// Its errors, each with how many of its steps had begun when it came.
    pub errors: Vec<(usize, String)>,
    /// Whether its turn ended.
    pub ended: bool,
}

impl SubAgent {
    /// Adds what a sub-agent's `event` tells; whether it changed anything.
    pub fn apply(&mut self, event: &AgentEvent) -> bool {
        let step = self.steps.last_mut();
        match (event, step) {
            (AgentEvent::StepStarted { step, max }, _) => {
                self.steps.push(Step::new(0, *step, *max));
            }
            (AgentEvent::ReasoningDelta(text), Some(s)) => s.reasoning.push_str(text),
            (AgentEvent::ContentDelta(text), Some(s)) => s.text.push_str(text),
            (AgentEvent::StepFinished(end), Some(s)) => s.end = Some(*end),
            (
                AgentEvent::ToolCallStarted {
                    id,
                    name,
                    arguments,
                },
                Some(s),
            ) => s.calls.push(Call::new(id, name, arguments)),
            (
                AgentEvent::ToolFinished {
                    id,
                    result,
                    outcome,
                    approved,
                    duration,
                    ..
                },
                _,
            ) => {
                let Some(call) = self
                    .steps
                    .iter_mut()
                    .rev()
                    .flat_map(|s| s.calls.iter_mut().rev())
                    .find(|c| c.id == *id)
                else {
                    return false;
                };
                call.finished = Some(Finished {
                    result: result.clone(),
                    outcome: outcome.clone(),
                    approved: *approved,
                    duration: *duration,
                });
            }
            (AgentEvent::Error { message }, _) => {
                self.errors.push((self.steps.len(), message.clone()));
            }
            (AgentEvent::TurnFinished { .. }, _) => self.ended = true,
            _ => return false,
        }
        true
    }

    /// What it answered, once its turn ended.
    pub fn answer(&self) -> Option<&str> {
        if !self.ended {
            return None;
        }
        answer_of(&self.steps)
    }
}

/// The answer of a turn of these steps: the last step's text unless it was a thought.
pub(super) fn answer_of(steps: &[Step]) -> Option<&str> {
    steps
        .last()
        .filter(|s| s.end != Some(StepEnd::Thought) && !s.text.is_empty())
        .map(|s| s.text.as_str())
}
