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

pub mod input;
pub mod report;
pub mod trace;
pub mod wire;

use std::io::Write;

use serde::Serialize;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, AgentEvent, EventSink, TurnOutcome};
use crate::config::OutputFormat;
use crate::terminal_text::clean;

pub use input::{HeadlessError, MAX_STDIN_PROMPT_BYTES, PromptSource, prompt_source, read_prompt};
pub use report::{Report, ReportBuilder};
pub use trace::{AnswerOutput, TracePrinter};

/// The exit status for how a turn ended: 0 answered, 1 failed, 3 step limit, 130 interrupted
/// (the shell's number for Ctrl+C). 2 is for a run that could not start.
pub fn exit_code(outcome: &TurnOutcome) -> u8 {
    match outcome {
        TurnOutcome::Answered => 0,
        TurnOutcome::Failed => 1,
        TurnOutcome::StepLimit => 3,
        TurnOutcome::Interrupted => 130,
    }
}

/// How a turn ended, as the JSON formats name it.
pub fn outcome_name(outcome: &TurnOutcome) -> &'static str {
    match outcome {
        TurnOutcome::Answered => "answered",
        TurnOutcome::StepLimit => "step_limit",
        TurnOutcome::Interrupted => "interrupted",
        TurnOutcome::Failed => "failed",
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

/// Writes `report` on stdout as `format` wants it at the end of a run (nothing for `text`).
pub fn write_report(format: OutputFormat, report: &Report) {
    let line = match format {
        OutputFormat::Text => return,
        OutputFormat::Json => serde_json::to_string(report),
        OutputFormat::StreamJson => serde_json::to_string(&ResultLine {
            kind: "result",
            report,
        }),
    };
    let mut out = std::io::stdout().lock();
    // A reader that went away (a closed pipe) is no reason to fail the run: the exit status
    // still says how it ended.
    if let Ok(line) = line {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// Writes one run's events as `format` says, collecting the report on the way.
struct Output {
    format: OutputFormat,
    trace: TracePrinter,
    report: ReportBuilder,
}

impl Output {
    /// Also writes the `notices` from start on the trace, as the turn's own are written.
    fn new(format: OutputFormat, notices: Vec<String>) -> Self {
        let mut err = std::io::stderr().lock();
        for notice in &notices {
            let _ = writeln!(err, "[notice] {}", clean(notice));
        }
        Self {
            format,
            trace: TracePrinter::new(AnswerOutput::for_stdout()),
            report: ReportBuilder::new(notices),
        }
    }

    fn event(&mut self, event: &AgentEvent) {
        let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
        if self.format == OutputFormat::Text {
            let _ = self.trace.print(event, &mut out, &mut err);
            return;
        }
        // The trace still goes to stderr; its copy of the answer goes nowhere.
        let _ = self.trace.print(event, &mut std::io::sink(), &mut err);
        self.report.apply(event);
        if self.format == OutputFormat::StreamJson
            && let Ok(line) = serde_json::to_string(&wire::line(event))
        {
            // Flushed per line: a script reading the stream sees each event as it happens.
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    }
}

/// Runs one turn for `prompt` and writes it as `format` says, after the `notices` from start;
/// Ctrl+C interrupts the turn. Returns how the turn ended.
pub async fn run(
    mut agent: Agent,
    prompt: &str,
    format: OutputFormat,
    notices: Vec<String>,
) -> TurnOutcome {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let cancel = CancellationToken::new();
    let session_id = agent.session().id.clone();
    let mut output = Output::new(format, notices);
    let printer = tokio::spawn(async move {
        while let Some(event) = rx.recv().await {
            output.event(&event);
        }
        output
    });
    let interrupt = cancel.clone();
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            interrupt.cancel();
        }
    });
    let outcome = agent.run_turn(prompt, &EventSink::new(tx), &cancel).await;
    // The last senders go with the agent, which ends the printer's loop.
    drop(agent);
    ctrl_c.abort();
    let report = match printer.await {
        Ok(output) => output.report.finish(&outcome, session_id),
        // The printer panicked (a bug): the outcome still stands, without the steps.
        Err(_) => ReportBuilder::default().finish(&outcome, session_id),
    };
    write_report(format, &report);
    outcome
}
