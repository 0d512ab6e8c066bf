//! A step (one model call) and its tool calls, and a sub-agent's steps under the call that
//! started it.

use std::time::Duration;

use super::Change;
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
    /// What it changed in files, one diff per file (told live; a call told again from a
    /// saved session has none).
    pub diffs: Vec<crate::diff::FileDiff>,
    /// The subfolders' `AGENTS.md` whose instructions joined its observation, with their
    /// sizes (told live).
    pub instructions: Vec<(String, u64)>,
    /// How it ended (`None` while it runs, or when the turn stopped under it).
    pub finished: Option<Finished>,
    /// The sub-agent it started, if it delegated.
    pub sub: Option<Box<SubAgent>>,
}

/// How a call ended.
#[derive(Clone, Debug, PartialEq)]
pub struct Finished {
    /// The observation the model read.
    pub result: crate::events::Observation,
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

    /// How a command it ran exited, when it did not exit 0 (the call itself succeeded).
    pub fn exit_failure(&self) -> Option<crate::events::CommandExit> {
        let finished = self.finished.as_ref()?;
        crate::events::CommandExit::failed(&self.name, &finished.result)
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
        match event {
            AgentEvent::Error { message } => {
                self.errors.push((self.steps.len(), message.clone()));
            }
            AgentEvent::TurnFinished { .. } => self.ended = true,
            other => return fold(&mut self.steps, 0, other) != Change::None,
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

/// Adds what a step's or a call's `event` tells to `steps` (those of turn `turn`), and says what
/// changed: the one fold of steps, for a turn's and for a sub-agent's alike.
pub(super) fn fold(steps: &mut Vec<Step>, turn: usize, event: &AgentEvent) -> Change {
    let last = steps.len().wrapping_sub(1);
    let with_last =
        |steps: &mut Vec<Step>, change: Change, f: &dyn Fn(&mut Step)| match steps.last_mut() {
            Some(step) => {
                f(step);
                change
            }
            None => Change::None,
        };
    match event {
        AgentEvent::StepStarted { step, max } => {
            steps.push(Step::new(turn, *step, *max));
            Change::StepStarted
        }
        AgentEvent::ReasoningDelta(text) => {
            with_last(steps, Change::Reasoning, &|s| s.reasoning.push_str(text))
        }
        AgentEvent::ContentDelta(text) => {
            with_last(steps, Change::Text, &|s| s.text.push_str(text))
        }
        // The request starts again: what the step had shown is dropped (it is never saved).
        AgentEvent::Retrying { restarts: true, .. } => with_last(steps, Change::Text, &|s| {
            s.text.clear();
            s.reasoning.clear();
        }),
        AgentEvent::StepFinished(end) => {
            with_last(steps, Change::StepEnded(*end), &|s| s.end = Some(*end))
        }
        AgentEvent::ToolCallStarted {
            id,
            name,
            arguments,
        } => match steps.last_mut() {
            Some(step) => {
                step.calls.push(Call::new(id, name, arguments));
                Change::CallStarted {
                    step: last,
                    call: step.calls.len() - 1,
                }
            }
            None => Change::None,
        },
        AgentEvent::ToolOutputDelta { id, text } => match find_call(steps, id) {
            Some((step, call)) => {
                steps[step].calls[call].output.push_str(text);
                Change::CallOutput { step, call }
            }
            None => Change::None,
        },
        AgentEvent::InstructionsRead {
            id, file, bytes, ..
        } => match find_call(steps, id) {
            Some((step, call)) => {
                steps[step].calls[call]
                    .instructions
                    .push((file.clone(), *bytes));
                Change::CallOutput { step, call }
            }
            None => Change::None,
        },
        AgentEvent::FileEdited { id, diff } => match find_call(steps, id) {
            Some((step, call)) => {
                steps[step].calls[call].diffs.push(diff.clone());
                Change::CallOutput { step, call }
            }
            None => Change::None,
        },
        AgentEvent::ToolFinished {
            id,
            result,
            outcome,
            approved,
            duration,
            ..
        } => match find_call(steps, id) {
            Some((step, call)) => {
                steps[step].calls[call].finished = Some(Finished {
                    result: result.clone(),
                    outcome: outcome.clone(),
                    approved: *approved,
                    duration: *duration,
                });
                Change::CallFinished { step, call }
            }
            None => Change::None,
        },
        _ => Change::None,
    }
}

/// The step and call index of call `id` in `steps`, the latest first (ids are unique within a
/// turn).
pub(super) fn find_call(steps: &[Step], id: &str) -> Option<(usize, usize)> {
    steps.iter().enumerate().rev().find_map(|(i, s)| {
        s.calls
            .iter()
            .rposition(|c| c.id == id)
            .map(|call| (i, call))
    })
}
