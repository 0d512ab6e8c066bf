//! Headless mode: one turn of the same agent without the screen. The step trace and reasoning go
//! to stderr; the final answer alone goes to stdout.

use std::io::Write;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentEvent, EventSink, TurnOutcome};

/// Prints agent events as a step trace, buffering each step's text until it is known to be the
/// answer (no tool calls followed) or a thought (tool calls followed).
#[derive(Default)]
pub struct TracePrinter {
    step: usize,
    /// The step of the sub-agent working for the current call.
    nested_step: usize,
    text: String,
    in_reasoning: bool,
}

impl TracePrinter {
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
            }
            AgentEvent::ReasoningDelta(t) if depth == 0 => {
                if !self.in_reasoning {
                    write!(err, "[Step {} Reasoning] ", self.step)?;
                    self.in_reasoning = true;
                }
                write!(err, "{t}")?;
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
                    if !self.text.trim().is_empty() {
                        writeln!(err, "[Step {} Thought] {}", self.step, self.text.trim())?;
                        self.text.clear();
                    }
                }
                writeln!(err, "{pad}[Step {step} Action] {name}({arguments})")?;
            }
            AgentEvent::ToolFinished { result, .. } => {
                writeln!(err, "{pad}[Step {step} Observation] {result}")?;
            }
            AgentEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
            } => writeln!(
                err,
                "{pad}[retry] {reason}; retrying in {:.1}s ({attempt}/{max_attempts})",
                delay.as_secs_f32()
            )?,
            AgentEvent::Nested { event, .. } => self.print_nested(event, depth + 1, out, err)?,
            AgentEvent::Error { message } => {
                self.end_reasoning(err)?;
                writeln!(err, "{pad}[error] {message}")?;
            }
            AgentEvent::Notice(text) => writeln!(err, "[notice] {text}")?,
            AgentEvent::TurnFinished { answer, .. } if depth == 0 => {
                self.end_reasoning(err)?;
                if !answer.is_empty() {
                    writeln!(out, "{answer}")?;
                }
                out.flush()?;
            }
            _ => {}
        }
        err.flush()
    }

    fn end_reasoning(&mut self, err: &mut dyn Write) -> std::io::Result<()> {
        if self.in_reasoning {
            writeln!(err)?;
            self.in_reasoning = false;
        }
        Ok(())
    }
}

/// Runs one turn and prints it; Ctrl+C interrupts the turn. Returns how it ended.
pub async fn run(mut agent: Agent, prompt: &str) -> TurnOutcome {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let printer = tokio::spawn(async move {
        let mut p = TracePrinter::default();
        while let Some(event) = rx.recv().await {
            let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
            let _ = p.print(&event, &mut out, &mut err);
        }
    });
    let interrupt = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let outcome = agent.run_turn(prompt, &EventSink::new(tx), &cancel).await;
    drop(agent);
    ctrl_c.abort();
    let _ = printer.await;
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;
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
                duration: Duration::from_millis(3),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta("Done.".into()),
            AgentEvent::TurnFinished {
                answer: "Done.".into(),
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
                duration: Duration::ZERO,
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
}
