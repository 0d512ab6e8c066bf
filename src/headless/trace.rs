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
use crate::transcript::{Change, Transcript};

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

/// Prints agent events as a step trace, reading the transcript for what they made: a step's
/// text is printed once it is known to be a thought (`[Step N Thought]`, on stderr) or the answer
/// (on stdout, when the turn ends).
#[derive(Default)]
pub struct TracePrinter {
    in_reasoning: bool,
    /// The request waits in the server's queue (said once, not at every keep-alive).
    queued: bool,
    /// The reasoning streams in deltas: a sequence may be split across two of them.
    reasoning: TerminalCleaner,
    answer_output: AnswerOutput,
}

impl TracePrinter {
    /// A printer writing the answer as `answer_output` says (the trace is always cleaned).
    pub fn new(answer_output: AnswerOutput) -> Self {
        Self {
            answer_output,
            ..Self::default()
        }
    }

    /// Writes what `event`, which made `change` to `transcript`, adds to the trace (`err`) or
    /// the answer (`out`).
    pub fn print(
        &mut self,
        (event, change, transcript): (&AgentEvent, &Change, &Transcript),
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let step = transcript.steps.last().map_or(0, |s| s.number);
        match (event, change) {
            (AgentEvent::StepStarted { .. }, _) => {
                self.in_reasoning = false;
                self.reasoning.reset();
            }
            (AgentEvent::ReasoningDelta(t), _) => {
                if !self.in_reasoning {
                    write!(err, "[Step {step} Reasoning] ")?;
                    self.in_reasoning = true;
                }
                write!(err, "{}", self.reasoning.push(t))?;
            }
            (_, Change::StepEnded(_)) => {
                self.end_reasoning(err)?;
                if let Some(thought) = transcript.steps.last().and_then(|s| s.thought()) {
                    writeln!(err, "[Step {step} Thought] {}", clean(thought).trim())?;
                }
            }
            (AgentEvent::ContentDelta(_), _) => self.end_reasoning(err)?,
            (AgentEvent::Nested { parent_id, event }, _) => {
                let sub = transcript
                    .find_call(parent_id)
                    .and_then(|(s, c)| transcript.steps[s].calls[c].sub.as_deref());
                let number = sub.and_then(|a| a.steps.last()).map_or(0, |s| s.number);
                call_line(event, number, "    ", err)?;
            }
            (AgentEvent::TurnFinished { .. }, Change::TurnEnded) => {
                self.end_reasoning(err)?;
                let last = transcript.turns.len().saturating_sub(1);
                if let Some(cost) = transcript.turns.get(last).and_then(|t| t.cost.described()) {
                    writeln!(err, "[cost] {cost} this turn")?;
                }
                if let Some(answer) = transcript.answer(last) {
                    match self.answer_output {
                        AnswerOutput::Clean => writeln!(out, "{}", clean(answer))?,
                        AnswerOutput::Exact => writeln!(out, "{answer}")?,
                    }
                }
                out.flush()?;
            }
            (AgentEvent::Error { .. } | AgentEvent::Plan(_), _) => {
                self.end_reasoning(err)?;
                self.around(event, transcript, err)?;
            }
            (AgentEvent::ToolCallStarted { .. }, _) => {
                self.end_reasoning(err)?;
                call_line(event, step, "", err)?;
            }
            _ => {
                call_line(event, step, "", err)?;
                self.around(event, transcript, err)?;
            }
        }
        err.flush()
    }

    /// The lines of what happens around the steps: retries, errors, notices, attachments and
    /// plans.
    fn around(
        &mut self,
        event: &AgentEvent,
        transcript: &Transcript,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        match event {
            AgentEvent::Retrying { .. } => {
                self.queued = false;
                writeln!(err, "{}", retry_line(event))
            }
            AgentEvent::Error { message } => writeln!(err, "[error] {}", clean(message)),
            AgentEvent::Notice(text) => writeln!(err, "[notice] {}", clean(text)),
            AgentEvent::StepLimitReached { max } => {
                writeln!(err, "[notice] {}", super::step_limit_said(*max))
            }
            AgentEvent::FilesAttached(mentions) => {
                writeln!(err, "[attached] @{}", clean(&mentions.join(" @")))
            }
            AgentEvent::Queued { started: false, .. } if !self.queued => {
                self.queued = true;
                writeln!(
                    err,
                    "[queued] the model server holds the request in its queue (up to 10 min)…"
                )
            }
            AgentEvent::Queued {
                started: true,
                waited,
            } => {
                self.queued = false;
                writeln!(err, "[queued] started after {} s", waited.as_secs())
            }
            AgentEvent::Compacting { turns, .. } => {
                writeln!(err, "[compacting] summarizing {turns} earlier turn(s)")
            }
            AgentEvent::Compacted(c) => writeln!(
                err,
                "[compacted] {}",
                crate::agent::advice::compacted_line(c)
            ),
            AgentEvent::CompactionFailed { reason, automatic } => writeln!(
                err,
                "[error] {}",
                clean(&crate::agent::advice::compaction_failed_notice(
                    reason, *automatic
                ))
            ),
            AgentEvent::ContextTrimmed {
                dropped_turns,
                shortened,
            } => writeln!(
                err,
                "[notice] {}",
                crate::agent::advice::trimmed_notice(*dropped_turns, *shortened)
            ),
            AgentEvent::InstructionsRead { file, bytes, .. } => writeln!(
                err,
                "[instructions] {} ({}) joins this turn",
                clean(file),
                crate::agent::instructions::human_size(*bytes)
            ),
            AgentEvent::Plan(plan) => self.plan(plan, transcript, err),
            _ => Ok(()),
        }
    }

    /// `[plan] …` and `[plan item N/M] …` lines.
    fn plan(
        &mut self,
        event: &PlanEvent,
        transcript: &Transcript,
        err: &mut dyn Write,
    ) -> std::io::Result<()> {
        let items = transcript.plans.last().map_or(&[][..], |p| &p.items[..]);
        let total = items.len();
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
                let n = items.len();
                writeln!(err, "[plan] carrying out {n} items with {}", clean(model))?;
            }
            PlanEvent::ItemStarted { index } => {
                let item = items.get(*index).map_or("", |i| i.text.as_str());
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
        // (`[Step N Reasoning]` is left open while the reasoning streams.)
        if self.in_reasoning {
            writeln!(err)?;
            self.in_reasoning = false;
            // A sequence left open at the end of the reasoning must not swallow the next line.
            self.reasoning.reset();
        }
        Ok(())
    }
}

/// `[Step N Action] …` and `[Step N Observation] …`, indented by `pad` (a sub-agent's).
fn call_line(
    event: &AgentEvent,
    step: usize,
    pad: &str,
    err: &mut dyn Write,
) -> std::io::Result<()> {
    match event {
        AgentEvent::ToolCallStarted {
            name, arguments, ..
        } => {
            let (name, arguments) = (clean(name), clean(arguments));
            writeln!(err, "{pad}[Step {step} Action] {name}({arguments})")
        }
        AgentEvent::ToolFinished { result, .. } => {
            let result = clean(&result.to_string());
            writeln!(err, "{pad}[Step {step} Observation] {result}")
        }
        AgentEvent::Retrying { .. } if !pad.is_empty() => {
            writeln!(err, "{pad}{}", retry_line(event))
        }
        AgentEvent::Error { message } if !pad.is_empty() => {
            writeln!(err, "{pad}[error] {}", clean(message))
        }
        AgentEvent::Notice(text) if !pad.is_empty() => {
            writeln!(err, "{pad}[notice] {}", clean(text))
        }
        // A sub-agent's limit: its call's result says so to the model.
        AgentEvent::StepLimitReached { max } if !pad.is_empty() => writeln!(
            err,
            "{pad}[notice] {}",
            crate::agent::advice::step_limit_notice(*max, "")
        ),
        _ => Ok(()),
    }
}

/// `[retry] rate limited: …; retrying in 2.0s (2/5)`; a restart says what was shown is dropped.
fn retry_line(event: &AgentEvent) -> String {
    let AgentEvent::Retrying {
        attempt,
        max_attempts,
        delay,
        reason,
        cause,
        restarts,
    } = event
    else {
        return String::new();
    };
    let again = if *restarts {
        " (the answer so far is dropped and asked for again, once)"
    } else {
        ""
    };
    // The reason names its cause already (`rate limited (429)`, `network error: …`); the
    // cause's word is said only where it does not.
    let reason = clean(reason);
    let label = cause.label();
    let said = if reason
        .to_lowercase()
        .contains(label.split(' ').next().unwrap_or_default())
    {
        reason
    } else {
        format!("{label}: {reason}")
    };
    format!(
        "[retry] {said}; retrying in {:.1}s ({attempt}/{max_attempts}){again}",
        delay.as_secs_f32()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::TurnOutcome;
    use crate::events::{CallOutcome, StepEnd};
    use serde_json::json;
    use std::time::Duration;

    #[test]
    fn the_answer_goes_to_stdout_and_the_trace_to_stderr() {
        let events = vec![
            AgentEvent::TurnStarted { prompt: "p".into() },
            AgentEvent::StepStarted { step: 1, max: 6 },
            AgentEvent::ReasoningDelta("think".into()),
            AgentEvent::ContentDelta("Let me look.".into()),
            AgentEvent::StepFinished(StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "list_files".into(),
                arguments: r#"{"relative_dir":"."}"#.into(),
            },
            AgentEvent::ToolFinished {
                id: "c1".into(),
                name: "list_files".into(),
                result: json!({"ok": true}).into(),
                outcome: CallOutcome::Ok,
                approved: false,
                duration: Some(Duration::from_millis(3)),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta("Done.".into()),
            AgentEvent::StepFinished(StepEnd::Answer),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ];
        let (out, err) = print_all(&mut TracePrinter::default(), &events);
        assert_eq!(out, "Done.\n");
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
            AgentEvent::TurnStarted { prompt: "p".into() },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::StepFinished(StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: "c1".into(),
                name: "delegate_file_analysis".into(),
                arguments: "{}".into(),
            },
            nested(AgentEvent::StepStarted { step: 1, max: 4 }),
            nested(AgentEvent::ToolCallStarted {
                id: "s1".into(),
                name: "read_text_file".into(),
                arguments: "{}".into(),
            }),
            nested(AgentEvent::ToolFinished {
                id: "s1".into(),
                name: "read_text_file".into(),
                result: json!({"ok": true}).into(),
                outcome: CallOutcome::Ok,
                approved: false,
                duration: Some(Duration::ZERO),
            }),
        ];
        let (out, err) = print_all(&mut TracePrinter::default(), &events);
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
            AgentEvent::TurnStarted { prompt: "p".into() },
            AgentEvent::Notice(format!("notice {NASTY}")),
            AgentEvent::StepStarted { step: 1, max: 6 },
            // An OSC 52 cut across two reasoning deltas.
            AgentEvent::ReasoningDelta("think \x1b]5".into()),
            AgentEvent::ReasoningDelta("2;c;aGk=\x07 on".into()),
            AgentEvent::ContentDelta(format!("thought {NASTY}")),
            AgentEvent::StepFinished(StepEnd::Thought),
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
                result: json!({"content": NASTY}).into(),
                outcome: CallOutcome::Ok,
                approved: false,
                duration: Some(Duration::ZERO),
            }),
            AgentEvent::Retrying {
                attempt: 1,
                max_attempts: 2,
                delay: Duration::ZERO,
                reason: format!("server {NASTY}"),
                cause: crate::llm::RetryCause::ServerError(503),
                restarts: false,
            },
            AgentEvent::Error {
                message: format!("error {NASTY}"),
            },
            AgentEvent::StepStarted { step: 2, max: 6 },
            AgentEvent::ContentDelta(format!("answer {NASTY}")),
            AgentEvent::StepFinished(StepEnd::Answer),
            AgentEvent::TurnFinished {
                outcome: TurnOutcome::Answered,
                usage: None,
                last_usage: None,
            },
        ]
    }

    fn print_all(p: &mut TracePrinter, events: &[AgentEvent]) -> (String, String) {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let mut t = Transcript::new();
        for e in events {
            let change = t.apply(e);
            p.print((e, &change, &t), &mut out, &mut err).unwrap();
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
        assert!(err.contains("[retry] server ABCDEFG"), "{err}");
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
