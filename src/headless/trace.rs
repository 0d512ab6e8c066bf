//! The human step trace: `[Step N Thought]`, `[Step N Action]`, ... on stderr, and in text mode
//! the answer on stdout.
//!
//! Everything that came from outside (the model, tools, the server) is cleaned of escape
//! sequences and control characters before it reaches a terminal (see [`crate::terminal_text`]):
//! stderr always, stdout when it is a terminal. A piped or redirected answer stays byte-exact.

use std::io::{IsTerminal, Write};

use crate::agent::AgentEvent;
use crate::events::PlanEvent;
use crate::terminal_text::{TerminalCleaner, clean};

/// How the answer is written to stdout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AnswerOutput {
    /// Cleaned of escape sequences and control characters (stdout is a terminal).
    #[default]
    Clean,
    /// Byte for byte as the model sent it (stdout is a pipe or a file).
    Exact,
}

impl AnswerOutput {
    /// `Clean` when stdout is a terminal, else `Exact`.
    pub fn for_stdout() -> Self {
        if std::io::stdout().is_terminal() {
            Self::Clean
        } else {
            Self::Exact
        }
    }
}

/// Prints agent events as a step trace, buffering each step's text until it is known to be the
/// answer (no tool calls followed) or a thought (tool calls followed).
#[derive(Default)]
pub struct TracePrinter {
    step: usize,
    /// The step of the sub-agent working for the current call.
    nested_step: usize,
    text: String,
    in_reasoning: bool,
    /// The reasoning streams in deltas: a sequence may be split across two of them.
    reasoning: TerminalCleaner,
    answer_output: AnswerOutput,
    /// The items of the plan being carried out (`--plan`).
    plan_items: Vec<String>,
}

impl TracePrinter {
    /// A printer writing the answer as `answer_output` says (the trace is always cleaned).
    pub fn new(answer_output: AnswerOutput) -> Self {
        Self {
            answer_output,
            ..Self::default()
        }
    }

    /// Writes what `event` adds to the trace (`err`) or the answer (`out`).
    pub fn print(
        &mut self,
        event: &AgentEvent,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        self.print_nested(event, 0, out, err)
    }

    fn print_nested(
        &mut self,
        event: &AgentEvent,
        depth: usize,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let pad = "    ".repeat(depth);
        let step = if depth == 0 {
            self.step
        } else {
            self.nested_step
        };
        match event {
            AgentEvent::StepStarted { step, .. } if depth > 0 => self.nested_step = *step,
            AgentEvent::StepStarted { step, .. } if depth == 0 => {
                self.step = *step;
                self.text.clear();
                self.in_reasoning = false;
                self.reasoning.reset();
            }
            AgentEvent::ReasoningDelta(t) if depth == 0 => {
                if !self.in_reasoning {
                    write!(err, "[Step {} Reasoning] ", self.step)?;
                    self.in_reasoning = true;
                }
                write!(err, "{}", self.reasoning.push(t))?;
            }
            AgentEvent::ContentDelta(t) if depth == 0 => {
                self.end_reasoning(err)?;
                self.text.push_str(t);
            }
            AgentEvent::ToolCallStarted {
                name, arguments, ..
            } => {
                if depth == 0 {
                    self.end_reasoning(err)?;
                    let thought = clean(&self.text);
                    if !thought.trim().is_empty() {
                        writeln!(err, "[Step {} Thought] {}", self.step, thought.trim())?;
                    }
                    self.text.clear();
                }
                let (name, arguments) = (clean(name), clean(arguments));
                writeln!(err, "{pad}[Step {step} Action] {name}({arguments})")?;
            }
            AgentEvent::ToolFinished { result, .. } => {
                let result = clean(&result.to_string());
                writeln!(err, "{pad}[Step {step} Observation] {result}")?;
            }
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => writeln!(
                err,
                "{pad}[retry] {}; retrying in {:.1}s ({attempt}/{max_attempts})",
                clean(reason),
                delay.as_secs_f32()
            )?,
            AgentEvent::Nested { event, .. } => self.print_nested(event, depth + 1, out, err)?,
            AgentEvent::Error { message } => {
                self.end_reasoning(err)?;
                writeln!(err, "{pad}[error] {}", clean(message))?;
            }
            AgentEvent::Notice(text) => writeln!(err, "[notice] {}", clean(text))?,
            AgentEvent::Plan(plan) if depth == 0 => {
                self.end_reasoning(err)?;
                self.plan(plan, err)?;
            }
            AgentEvent::FilesAttached(mentions) => {
                writeln!(err, "[attached] @{}", clean(&mentions.join(" @")))?
            }
            AgentEvent::TurnFinished { .. } if depth == 0 => {
                self.end_reasoning(err)?;
                // The answer is what the last step said (its text was not a thought).
                let answer = std::mem::take(&mut self.text);
                if !answer.is_empty() {
                    match self.answer_output {
                        AnswerOutput::Clean => writeln!(out, "{}", clean(&answer))?,
                        AnswerOutput::Exact => writeln!(out, "{answer}")?,
                    }
                }
                out.flush()?;
            }
            _ => {}
        }
        err.flush()
    }

    /// `[plan] …` and `[plan item N/M] …` lines.
    fn plan(&mut self, event: &PlanEvent, err: &mut dyn Write) -> std::io::Result<()> {
        let total = self.plan_items.len();
        match event {
            PlanEvent::Planning { task, model } => {
                writeln!(
                    err,
                    "[plan] planning with {}: {}",
                    clean(model),
                    clean(task)
                )?;
            }
            PlanEvent::Proposed { items, .. } => {
                for (i, item) in items.iter().enumerate() {
                    writeln!(err, "[plan] {}. {}", i + 1, clean(item))?;
                }
            }
            PlanEvent::Executing { items, model } => {
                self.plan_items = items.clone();
                let n = items.len();
                writeln!(err, "[plan] carrying out {n} items with {}", clean(model))?;
            }
            PlanEvent::ItemStarted { index } => {
                let item = self.plan_items.get(*index).map_or("", String::as_str);
                writeln!(err, "[plan item {}/{total}] {}", index + 1, clean(item))?;
            }
            PlanEvent::ItemFinished {
                index,
                state,
                reason,
            } => {
                let why = reason.as_deref().map(clean).unwrap_or_default();
                let n = index + 1;
                writeln!(err, "[plan item {n}/{total} {}] {why}", state.name())?;
            }
            PlanEvent::Finished(summary) => match &summary.stopped {
                None => writeln!(err, "[plan] done: {}/{} items", summary.done, summary.total)?,
                Some((index, state, reason)) => {
                    let why = reason.as_deref().map(clean).unwrap_or_default();
                    let (n, total, state) = (index + 1, summary.total, state.name());
                    writeln!(err, "[plan] stopped at item {n}/{total} ({state}) {why}")?;
                }
            },
        }
        Ok(())
    }

    fn end_reasoning(&mut self, err: &mut dyn Write) -> std::io::Result<()> {
        if self.in_reasoning {
            writeln!(err)?;
            self.in_reasoning = false;
            // A sequence left open at the end of the reasoning must not swallow the next line.
            self.reasoning.reset();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnOutcome;
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn the_answer_goes_to_stdout_and_the_trace_to_stderr() {
        let events = vec![
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ReasoningDelta("think".into()),
            AgentEvent::ContentDelta("Let me look.".into()),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "list_files".into(),
                arguments: r#"{"relative_dir":"."}"#.into(),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "list_files".into(),
                result: json!({"ok": true}),
                duration: Some(Duration::from_millis(3)),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta("Done.".into()),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut p = TracePrinter::default();
        for e in &events {
            p.print(e, &mut out, &mut err).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "Done.\n");
        let err = String::from_utf8(err).unwrap();
        assert!(err.contains("[Step 1 Reasoning] think\n"));
        assert!(err.contains("[Step 1 Thought] Let me look.\n"));
        assert!(err.contains("[Step 1 Action] list_files({\"relative_dir\":\".\"})\n"));
        assert!(err.contains("[Step 1 Observation] {\"ok\":true}\n"));
        assert!(!err.contains("Done."));
    }

    #[test]
    fn a_sub_agents_steps_are_indented_with_their_own_numbers() {
        let nested = |e: AgentEvent| AgentEvent::Nested {
            parent_id: "c1".into(),
            event: Box::new(e),
        };
        let events = vec![
            AgentEvent::StepStarted { step: 2, max: 6 },
            nested(AgentEvent::StepStarted { step: 1, max: 4 }),
            nested(AgentEvent::ToolCallStarted {
                id: "s1".into(),
                name: "read_text_file".into(),
                arguments: "{}".into(),
            }),
            nested(AgentEvent::ToolFinished {
                id: "s1".into(),
                name: "read_text_file".into(),
                result: json!({"ok": true}),
                duration: Some(Duration::ZERO),
            }),
        ];
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut p = TracePrinter::default();
        for e in &events {
            p.print(e, &mut out, &mut err).unwrap();
        }
        let err = String::from_utf8(err).unwrap();
        assert!(
            err.contains("    [Step 1 Action] read_text_file({})\n"),
            "{err}"
        );
        assert!(
            err.contains("    [Step 1 Observation] {\"ok\":true}\n"),
            "{err}"
        );
        assert!(out.is_empty());
    }

    const NASTY: &str = "A\x1b]52;c;aGk=\x07B\x1b]0;title\x1b\\C\x1b[2JD\u{9b}31mE\rF\x08G";

    fn hostile_turn() -> Vec<AgentEvent> {
        let nested = |e: AgentEvent| AgentEvent::Nested {
            parent_id: "c1".into(),
            event: Box::new(e),
        };
        vec![
            AgentEvent::Notice(format!("notice {NASTY}")),
            AgentEvent::StepStarted { step: 1, max: 6 },
            // An OSC 52 cut across two reasoning deltas.
            AgentEvent::ReasoningDelta("think \x1b]5".into()),
            AgentEvent::ReasoningDelta("2;c;aGk=\x07 on".into()),
            AgentEvent::ContentDelta(format!("thought {NASTY}")),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: format!("tool{NASTY}"),
                arguments: format!("{{\"x\":\"{NASTY}\"}}"),
            },
            nested(AgentEvent::StepStarted { step: 1, max: 4 }),
            nested(AgentEvent::ToolCallStarted {
                id: "s1".into(),
                name: "read_text_file".into(),
                arguments: NASTY.into(),
            }),
            nested(AgentEvent::ToolFinished {
                id: "s1".into(),
                name: "read_text_file".into(),
                result: json!({"content": NASTY}),
                duration: Some(Duration::ZERO),
            }),
            AgentEvent::Retrying {
                attempt: 1,
                max_attempts: 2,
                delay: Duration::ZERO,
                reason: format!("server {NASTY}"),
            },
            AgentEvent::Error {
                message: format!("error {NASTY}"),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta(format!("answer {NASTY}")),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ]
    }

    fn print_all(p: &mut TracePrinter, events: &[AgentEvent]) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        for e in events {
            p.print(e, &mut out, &mut err).unwrap();
        }
        (
            String::from_utf8(out).unwrap(),
            String::from_utf8(err).unwrap(),
        )
    }

    fn assert_clean(text: &str) {
        assert!(
            text.chars().all(crate::terminal_text::is_safe),
            "a control character got through: {text:?}"
        );
    }

    #[test]
    fn the_trace_is_always_cleaned_and_so_is_an_answer_for_a_terminal() {
        let (out, err) = print_all(&mut TracePrinter::new(AnswerOutput::Clean), &hostile_turn());
        assert_clean(&out);
        assert_clean(&err);
        assert_eq!(out, "answer ABCDEFG\n");
        for line in [
            "[notice] notice ABCDEFG\n",
            "[Step 1 Reasoning] think  on\n",
            "[Step 1 Thought] thought ABCDEFG\n",
            "[Step 1 Action] toolABCDEFG({\"x\":\"ABCDEFG\"})\n",
            "    [Step 1 Action] read_text_file(ABCDEFG)\n",
            "[error] error ABCDEFG\n",
        ] {
            assert!(err.contains(line), "{line:?} in\n{err}");
        }
        assert!(err.contains("[retry] server ABCDEFG; retrying"), "{err}");
        // JSON escapes C0 controls itself; the raw C1 CSI (U+009B) and its parameters go.
        assert!(
            err.contains("    [Step 1 Observation] {\"content\":\"A\\u001b]52;c;aGk=\\u0007B"),
            "{err}"
        );
        assert!(err.contains("[2JDE\\rF\\bG\"}\n"), "{err}");
    }

    #[test]
    fn a_piped_answer_stays_byte_exact_while_the_trace_is_cleaned() {
        let (out, err) = print_all(&mut TracePrinter::new(AnswerOutput::Exact), &hostile_turn());
        assert_eq!(out, format!("answer {NASTY}\n"));
        assert_clean(&err);
    }

    #[test]
    fn a_sequence_left_open_in_the_reasoning_does_not_swallow_the_trace() {
        let events = vec![
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ReasoningDelta("think \x1b]0;never ended".into()),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "list_files".into(),
                arguments: "{}".into(),
            },
        ];
        let (_, err) = print_all(&mut TracePrinter::default(), &events);
        assert_eq!(
            err,
            "[Step 1 Reasoning] think \n[Step 1 Action] list_files({})\n"
        );
    }
}
