//! The Thought / Action / Observation steps as data, and the side panes' cached lines.

use std::time::Duration;

use ratatui::text::Line;
use serde_json::Value;

/// One tool call of a step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CallView {
    /// The call id.
    pub id: String,
    /// The tool.
    pub name: String,
    /// The raw JSON arguments.
    pub arguments: String,
    /// Live output so far.
    pub output: String,
    /// The observation, once finished.
    pub result: Option<Value>,
    /// How long it ran.
    pub duration: Option<Duration>,
    /// One line per sub-agent event worth showing.
    pub nested: Vec<String>,
    /// What the sub-agent has said in its current step (its answer, when the turn ends).
    pub nested_text: String,
}

impl CallView {
    /// Whether the call finished with `"ok": false`.
    pub fn failed(&self) -> bool {
        self.result
            .as_ref()
            .is_some_and(|r| r.get("ok").and_then(Value::as_bool) == Some(false))
    }
}

/// How a step's turn ended when it did not end with an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepStop {
    /// The person interrupted it.
    Interrupted,
    /// An error ended it.
    Failed,
}

/// One Thought / Action / Observation step.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepView {
    /// The turn it belongs to (0-based).
    pub turn: usize,
    /// Its 1-based number in the turn.
    pub number: usize,
    /// Streamed reasoning.
    pub reasoning: String,
    /// Streamed content (the thought when tools were called, else the answer).
    pub content: String,
    /// The calls it made.
    pub calls: Vec<CallView>,
    /// Whether it is shown expanded.
    pub expanded: bool,
    /// How its turn ended when it did not end with an answer.
    pub stopped: Option<StepStop>,
    /// What its turn belongs to (a `/plan` planner, or an item of a plan).
    pub group: super::plan::StepGroup,
}

/// One step's timeline lines and what they were drawn from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StepLines {
    /// Width, selected, running, what its group lines show (0: none) and a fingerprint of the
    /// step's content.
    pub key: (usize, bool, bool, u64, [usize; 8]),
    /// The lines: the group lines before the step (a turn's label, a plan item's header), the
    /// step's, and those after it (the plan items still to come).
    pub lines: Vec<Line<'static>>,
    /// How many of `lines` come before the step's own.
    pub head: usize,
}

/// Lines prepared for the side panes at the last layout.
#[derive(Clone, Debug, Default)]
pub struct SideLines {
    /// Timeline lines of each step (a turn separator first when a turn starts), cached.
    pub timeline: Vec<StepLines>,
    /// The first timeline line of each step; one more entry holds the total.
    pub step_starts: Vec<usize>,
    /// Reasoning lines of the detail step, extended in place while the reasoning grows.
    pub reasoning: crate::tui::panes::wrap_cache::GrowingWrap,
    /// Tool output lines of the detail step, cached per call.
    pub tool_output: crate::tui::panes::tool_output::ToolLines,
}
