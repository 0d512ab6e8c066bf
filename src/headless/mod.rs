//! Headless mode: one turn of the same agent without the screen, for scripts.
//!
//! What goes where, by `--output-format`:
//! - `text`: the answer alone on stdout, the step trace on stderr (both cleaned of escape
//!   sequences when they reach a terminal; see [`trace`]).
//! - `json`: one object on stdout when the turn is over ([`report::Report`]).
//! - `stream-json`: one object per line on stdout for every event as it happens
//!   ([`wire::WireEvent`]), each line flushed, then `{"type":"result", ...}` with the report.
//!
//! In the JSON formats nothing else is written to stdout, and the human trace still goes to
//! stderr: a script reads stdout, a person watching the run (or a log) sees the steps. Text
//! inside JSON is not cleaned: JSON escapes control characters itself, and the exact text is
//! what a script wants.

pub(crate) mod input;
pub(crate) mod plan_report;
pub(crate) mod report;
pub mod slash;
pub(crate) mod steps;
pub(crate) mod trace;
pub(crate) mod wire;

use std::io::Write;

use serde::Serialize;
use tokio::signal::unix::SignalKind;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentEvent, EventSink, TurnOutcome};
use crate::config::OutputFormat;
use crate::events::{FailCause, ItemState};
use crate::terminal_text::clean;
use crate::transcript::{Change, Transcript};

pub use input::{HeadlessError, MAX_STDIN_PROMPT_BYTES, PromptSource, prompt_source, read_prompt};
pub use report::{DENIED_EXIT_CODE, Report, ReportBuilder, RunStart, SessionStart};
pub use trace::{AnswerOutput, TracePrinter};

/// What a headless run says when a turn reaches its step limit: the way on in flags.
pub fn step_limit_said(max: usize) -> String {
    crate::agent::advice::step_limit_notice(
        max,
        "Raise the limit with --max-steps N, or go on from here with --continue -p continue.",
    )
}

/// The exit status for how a turn ended: 0 answered, 1 failed, 3 step limit, 130 interrupted
/// (the shell's number for Ctrl+C). 2 is for a run that could not start.
pub fn exit_code(outcome: &TurnOutcome) -> u8 {
    match outcome {
        TurnOutcome::Answered => 0,
        TurnOutcome::Failed(_) => 1,
        TurnOutcome::StepLimit => 3,
        TurnOutcome::Interrupted => 130,
    }
}

/// The last line of `stream-json`: the report tagged as the result.
#[derive(Serialize)]
struct ResultLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(flatten)]
    report: &'a Report,
}

/// `value` as one line of JSON with no control character in it, so it is safe on a terminal
/// too. JSON escapes C0 controls itself but leaves DEL and the C1 controls (U+0080..U+009F, among
/// them a one-character CSI) raw; they can only stand inside strings, where `\u` escapes mean
/// the same text. `None` if it cannot be encoded (a map with non-string keys: never here).
pub fn json_line(value: &impl Serialize) -> Option<String> {
    let line = serde_json::to_string(value).ok()?;
    if !line.chars().any(char::is_control) {
        return Some(line);
    }
    let mut safe = String::with_capacity(line.len() + 16);
    for c in line.chars() {
        if c.is_control() {
            safe.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            safe.push(c);
        }
    }
    Some(safe)
}

/// Writes one line on stdout and flushes it: a script reading the stream sees it at once. A
/// reader that went away (a closed pipe) is no reason to fail the run: the exit status still
/// says how it ended.
fn write_line(out: &mut impl Write, value: &impl Serialize) {
    if let Some(line) = json_line(value) {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// Writes `report` on stdout as `format` wants it at the end of a run (nothing for `text`).
pub fn write_report(format: OutputFormat, report: &Report) {
    let mut out = std::io::stdout().lock();
    match format {
        OutputFormat::Text => {}
        OutputFormat::Json => write_line(&mut out, report),
        OutputFormat::StreamJson => write_line(
            &mut out,
            &ResultLine {
                kind: "result",
                report,
            },
        ),
    }
}

/// Writes one run's events as `format` says: each event folded once into the transcript, which
/// the trace and, at the end, the report read.
struct Output {
    format: OutputFormat,
    transcript: Transcript,
    trace: TracePrinter,
    report: ReportBuilder,
}

impl Output {
    /// Also writes the `notices` from start as the turn's own are written: on the trace, and
    /// in `stream-json` as `notice` lines before the turn's first.
    /// How the run started (`start`) comes first, on stderr only: the report carries it.
    fn new(format: OutputFormat, notices: Vec<String>, start: RunStart) -> Self {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        for line in start.lines() {
            let _ = writeln!(err, "{}", clean(&line));
        }
        for notice in &notices {
            let _ = writeln!(err, "[notice] {}", clean(notice));
            if format == OutputFormat::StreamJson {
                write_line(&mut out, &wire::line(&AgentEvent::Notice(notice.clone())));
            }
        }
        Self {
            format,
            transcript: Transcript::new(),
            trace: TracePrinter::new(AnswerOutput::for_stdout()),
            report: ReportBuilder::new(notices, Some(start)),
        }
    }

    fn event(&mut self, event: &AgentEvent) {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        let change = self.transcript.apply(event);
        self.report.apply(event);
        let seen = (event, &change, &self.transcript);
        if self.format == OutputFormat::Text {
            let _ = self.trace.print(seen, &mut out, &mut err);
            return;
        }
        // The trace still goes to stderr; its copy of the answer goes nowhere.
        let _ = self.trace.print(seen, &mut std::io::sink(), &mut err);
        if self.format == OutputFormat::StreamJson {
            // The turn's end carries its cost, which the transcript added up.
            let turn_cost = (change == Change::TurnEnded)
                .then(|| self.transcript.turns.last().map(|t| t.cost))
                .flatten();
            write_line(&mut out, &wire::line_with_turn_cost(event, turn_cost));
        }
    }

    /// The report of the run, which ended in `outcome`.
    fn finish(self, outcome: &TurnOutcome, session_id: String) -> Report {
        self.report.finish(&self.transcript, outcome, session_id)
    }
}

/// What a headless run does with its prompt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunKind {
    /// One turn.
    Turn,
    /// `--plan`: a planner turn writes a plan, the executor carries it out item by item.
    Plan,
}

/// Runs one turn for `prompt` (or, for [`RunKind::Plan`], plans it and carries the plan out)
/// and writes it as `format` says, after how it `start`ed and the `notices` from start; Ctrl+C
/// interrupts it. `expanded` is the turn a custom command or `/skill` made of the prompt
/// ([`slash::expand`]). Returns how it ended and the exit status it makes.
pub async fn run(
    mut agent: Agent,
    (prompt, kind, expanded): (&str, RunKind, Option<crate::agent::TurnInput>),
    format: OutputFormat,
    (start, notices): (RunStart, Vec<String>),
) -> (TurnOutcome, u8) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let session_id = agent.session().id.clone();
    // Writing to stdout and stderr blocks (a slow pipe, a paused terminal): on a thread of its
    // own, never on the runtime.
    let printer = tokio::task::spawn_blocking(move || {
        let mut output = Output::new(format, notices, start);
        while let Some(event) = rx.blocking_recv() {
            output.event(&event);
        }
        output
    });
    let ctrl_c = interrupt_on_signals(cancel.clone());
    let events = EventSink::new(tx);
    // Scripts get every tool: the MCP servers have started (each within its timeout) before
    // the first request, and their failures are in the trace.
    if let Some(hub) = agent.mcp().cloned() {
        hub.attach(events.clone());
        tokio::select! {
            _ = hub.wait_started() => {}
            _ = cancel.cancelled() => {}
        }
    }
    let source = if agent.session().has_prompts() {
        crate::agent::hook_points::SessionSource::Resume
    } else {
        crate::agent::hook_points::SessionSource::Startup
    };
    agent.start_session_hooks(source, &events, &cancel).await;
    let outcome = match kind {
        RunKind::Turn => match expanded {
            Some(input) => agent.run_turn_with(input, &events, &cancel).await,
            None => agent.run_turn(prompt, &events, &cancel).await,
        },
        RunKind::Plan => plan_and_execute(&mut agent, prompt, &events, &cancel).await,
    };
    drop(events);
    // The servers stop and let go of their sender; the last ones go with the agent, which ends
    // the printer's loop.
    if let Some(hub) = agent.mcp() {
        hub.shutdown();
    }
    drop(agent);
    ctrl_c.abort();
    let report = match printer.await {
        Ok(output) => output.finish(&outcome, session_id),
        // The printer panicked (a bug): the outcome still stands, without the steps.
        Err(_) => ReportBuilder::default().finish(&Transcript::new(), &outcome, session_id),
    };
    let code = report.exit_code;
    let _ = tokio::task::spawn_blocking(move || write_report(format, &report)).await;
    (outcome, code)
}

/// Plans `task`, then carries the plan out without editing. Ends as `Answered` when every item
/// was done, `Interrupted` when interrupted, else `Failed` (no plan, or an item failed).
async fn plan_and_execute(
    agent: &mut Agent,
    task: &str,
    events: &EventSink,
    cancel: &CancellationToken,
) -> TurnOutcome {
    let (outcome, items) = agent.plan(task, events, cancel).await;
    match outcome {
        TurnOutcome::Answered if !items.is_empty() => {}
        TurnOutcome::Interrupted | TurnOutcome::Failed(_) => return outcome,
        _ => return TurnOutcome::Failed(FailCause::Plan),
    }
    let summary = agent.execute_plan(items, events, cancel).await;
    match summary.stopped {
        None => TurnOutcome::Answered,
        Some((_, ItemState::Interrupted, _)) => TurnOutcome::Interrupted,
        Some(_) => TurnOutcome::Failed(FailCause::Plan),
    }
}

/// Interrupts the turn on Ctrl+C, SIGTERM or SIGHUP, so it ends as an interrupted turn: the
/// history and the report kept, the MCP servers' process groups ended. Listening starts here,
/// before the turn (`ctrl_c()` would start at its task's first poll).
fn interrupt_on_signals(cancel: CancellationToken) -> tokio::task::JoinHandle<()> {
    let kinds = [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ];
    let mut signals: Vec<_> = kinds
        .into_iter()
        .filter_map(|k| tokio::signal::unix::signal(k).ok())
        .collect();
    tokio::spawn(async move {
        if signals.is_empty() {
            return;
        }
        let any = signals.iter_mut().map(|s| Box::pin(s.recv()));
        let _ = futures::future::select_all(any).await;
        cancel.cancel();
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn json_lines_carry_no_control_character_and_decode_to_the_same_text() {
        let text = "a\u{1b}[2Jb\u{9b}31mc\u{7f}d\u{9d}0;t\u{9c}\n";
        let line = json_line(&json!({"text": text})).unwrap();
        assert!(!line.chars().any(char::is_control), "{line:?}");
        assert!(line.contains("\\u009b"), "{line}");
        let back: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(back["text"], text);
    }

    #[test]
    fn outcomes_have_their_exit_codes() {
        for (outcome, name, code) in [
            (TurnOutcome::Answered, "answered", 0),
            (TurnOutcome::Failed(FailCause::Network), "failed", 1),
            (TurnOutcome::StepLimit, "step_limit", 3),
            (TurnOutcome::Interrupted, "interrupted", 130),
        ] {
            assert_eq!((outcome.name(), exit_code(&outcome)), (name, code));
        }
    }
}
