//! Background jobs: a command started with `background` keeps running in the jail after its
//! call returns (a dev server, a watcher). The model reads what it wrote since last time with
//! `command_output` and ends it with `stop_command`; `/jobs` lists them for the person. A job
//! ends when it is stopped, with the session, or when MiniClaw exits (its supervisor dies with
//! MiniClaw, and the job's whole PID namespace with it). At most a few run at once.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::process::Command;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::settings::BACKGROUND_AFTER;
pub use crate::events::{JobInfo, JobState};
use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args};
use crate::tools::process::{self, Limits, Stopped};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture};

/// How long a job may run at most.
const JOB_LIFETIME: Duration = Duration::from_secs(8 * 3600);
/// The most of a job's output kept for reading (the oldest is dropped first).
const KEPT_OUTPUT: usize = 256 * 1024;
/// The longest `command_output` waits for new output.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// A job's output: the last [`KEPT_OUTPUT`] bytes, and how much the model has read.
#[derive(Debug, Default)]
struct Output {
    text: String,
    /// Bytes dropped from the front so far.
    dropped: usize,
    /// The absolute offset the model has read to.
    read_to: usize,
}

impl Output {
    fn push(&mut self, line: &str) {
        self.text.push_str(line);
        if self.text.len() > KEPT_OUTPUT {
            let mut cut = self.text.len() - KEPT_OUTPUT;
            while !self.text.is_char_boundary(cut) {
                cut += 1;
            }
            self.text.drain(..cut);
            self.dropped += cut;
        }
    }

    /// What was written since the last read (and how many bytes of it were lost), marking it
    /// read.
    fn take_new(&mut self) -> (String, usize) {
        let lost = self.dropped.saturating_sub(self.read_to);
        let mut from = self
            .read_to
            .saturating_sub(self.dropped)
            .min(self.text.len());
        while !self.text.is_char_boundary(from) {
            from += 1;
        }
        self.read_to = self.dropped + self.text.len();
        (self.text.get(from..).unwrap_or_default().to_string(), lost)
    }
}

#[derive(Debug)]
struct Job {
    id: u32,
    command: String,
    dir: String,
    started: Instant,
    output: Arc<Mutex<Output>>,
    state: watch::Receiver<JobState>,
    stop: CancellationToken,
}

#[derive(Debug, Default)]
struct Table {
    next: u32,
    jobs: Vec<Job>,
}

/// The session's jobs (shared by the tools and `/jobs`).
#[derive(Clone, Debug)]
pub struct Jobs {
    table: Arc<Mutex<Table>>,
    max: usize,
    /// Ends every job when the last handle goes.
    _ender: Arc<Ender>,
}

/// Ends the jobs' commands when dropped.
#[derive(Debug)]
struct Ender(CancellationToken);

impl Drop for Ender {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

impl Jobs {
    /// No jobs yet; at most `max` may run at once.
    pub fn new(max: usize) -> Self {
        Self {
            table: Arc::default(),
            max: max.max(1),
            _ender: Arc::new(Ender(CancellationToken::new())),
        }
    }

    /// Every job, oldest first.
    pub fn list(&self) -> Vec<JobInfo> {
        let Ok(table) = self.table.lock() else {
            return Vec::new();
        };
        table
            .jobs
            .iter()
            .map(|job| JobInfo {
                id: job.id,
                command: job.command.clone(),
                dir: job.dir.clone(),
                state: job.state.borrow().clone(),
                age: job.started.elapsed(),
            })
            .collect()
    }

    /// Ends job `id` (the person's `/jobs`, or `stop_command`); whether it was running.
    pub fn stop(&self, id: u32) -> bool {
        let Ok(table) = self.table.lock() else {
            return false;
        };
        match table.jobs.iter().find(|j| j.id == id) {
            Some(job) if *job.state.borrow() == JobState::Running => {
                job.stop.cancel();
                true
            }
            _ => false,
        }
    }

    /// Ends every job (the session ended).
    pub fn stop_all(&self) {
        if let Ok(table) = self.table.lock() {
            for job in &table.jobs {
                job.stop.cancel();
            }
        }
    }

    fn running(&self) -> usize {
        self.table.lock().map_or(0, |t| {
            t.jobs
                .iter()
                .filter(|j| *j.state.borrow() == JobState::Running)
                .count()
        })
    }

    /// Starts `cmd` as a job and waits a few seconds: its result when it ended by then, else
    /// its id and output so far.
    pub(super) async fn start(
        &self,
        command: &str,
        cmd: Command,
        limits: Limits,
        ctx: &ToolContext,
        dir: String,
        at_end: impl FnOnce() + Send + 'static,
    ) -> Result<Map<String, Value>, ToolError> {
        if self.running() >= self.max {
            return Err(ToolError::failed(format!(
                "{} background jobs are running already, the most at once: end one with \
                 stop_command first",
                self.max
            )));
        }
        let output = Arc::new(Mutex::new(Output::default()));
        let (state_tx, state) = watch::channel(JobState::Running);
        let stop = self._ender.0.child_token();
        let id = {
            let mut table = self
                .table
                .lock()
                .map_err(|_| ToolError::failed("the job table is unusable"))?;
            table.next += 1;
            let id = table.next;
            table.jobs.push(Job {
                id,
                command: command.to_string(),
                dir,
                started: Instant::now(),
                output: output.clone(),
                state: state.clone(),
                stop: stop.clone(),
            });
            id
        };
        let limits = Limits {
            timeout: JOB_LIFETIME,
            ..limits
        };
        let sink = output.clone();
        tokio::spawn(async move {
            let on_line = move |line: String| {
                if let Ok(mut out) = sink.lock() {
                    out.push(&line);
                }
            };
            let end = match process::run_to_limit(cmd, "sh", None, limits, &stop, &on_line).await {
                Ok(out) => match out.stopped {
                    Some(Stopped::TimedOut) => JobState::Ended(format!(
                        "it ran for {} hours, the most a job may",
                        JOB_LIFETIME.as_secs() / 3600
                    )),
                    Some(Stopped::Flooded) => JobState::Ended("it wrote too much output".into()),
                    None => JobState::Exited(out.exit_code),
                },
                Err(process::ProcessError::Cancelled) => JobState::Ended("stopped".into()),
                Err(e) => JobState::Ended(e.to_string()),
            };
            let _ = state_tx.send(end);
            let _ = tokio::task::spawn_blocking(at_end).await;
        });
        let mut waiting = state.clone();
        let ended = tokio::select! {
            r = tokio::time::timeout(BACKGROUND_AFTER, waiting.wait_for(|s| *s != JobState::Running)) => r.is_ok(),
            () = ctx.cancel.cancelled() => {
                self.stop(id);
                return Err(ToolError::Cancelled);
            }
        };
        let (mut fields, _) = report(id, &output, &state);
        if !ended {
            fields.insert(
                "note".into(),
                json!(format!(
                    "still running after {} s: read its output with command_output(job: {id}), \
                     end it with stop_command(job: {id})",
                    BACKGROUND_AFTER.as_secs()
                )),
            );
        }
        Ok(fields)
    }

    /// Waits up to `limit` for job `id` to end.
    async fn wait_end(&self, id: u32, limit: Duration) {
        let state = self
            .table
            .lock()
            .ok()
            .and_then(|t| t.jobs.iter().find(|j| j.id == id).map(|j| j.state.clone()));
        if let Some(mut state) = state {
            let _ = tokio::time::timeout(limit, state.wait_for(|s| *s != JobState::Running)).await;
        }
    }

    /// New output of job `id` (waiting up to `wait` for some, or for its end).
    async fn read(
        &self,
        id: u32,
        wait: Duration,
        cancel: &CancellationToken,
    ) -> Result<Map<String, Value>, ToolError> {
        let (output, mut state) = {
            let table = self
                .table
                .lock()
                .map_err(|_| ToolError::failed("the job table is unusable"))?;
            let job = table
                .jobs
                .iter()
                .find(|j| j.id == id)
                .ok_or_else(|| ToolError::failed(no_such_job(id, &table)))?;
            (job.output.clone(), job.state.clone())
        };
        let has_new =
            |o: &Arc<Mutex<Output>>| o.lock().is_ok_and(|o| o.dropped + o.text.len() > o.read_to);
        let deadline = tokio::time::Instant::now() + wait.min(MAX_WAIT);
        while !has_new(&output) && *state.borrow() == JobState::Running {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => break,
                () = cancel.cancelled() => return Err(ToolError::Cancelled),
                // Output has no signal of its own: look again shortly, or on the job's end.
                _ = tokio::time::timeout(Duration::from_millis(200), state.changed()) => {}
            }
        }
        let (mut fields, lost) = report(id, &output, &state);
        if lost > 0 {
            fields.insert(
                "note".into(),
                json!(format!("{lost} bytes written since the last read were dropped (only the last {} KB are kept)", KEPT_OUTPUT / 1024)),
            );
        }
        Ok(fields)
    }
}

/// A job's id, state (and exit code) and the output written since the last read, marking it
/// read; with how many bytes of that were dropped.
fn report(
    id: u32,
    output: &Mutex<Output>,
    state: &watch::Receiver<JobState>,
) -> (Map<String, Value>, usize) {
    let (text, lost) = output.lock().map(|mut o| o.take_new()).unwrap_or_default();
    let current = state.borrow().clone();
    let mut fields = Map::new();
    fields.insert("job".into(), json!(id));
    fields.insert("state".into(), json!(current.describe()));
    if let JobState::Exited(code) = current {
        fields.insert("exit_code".into(), json!(code));
    }
    fields.insert("output".into(), json!(text));
    (fields, lost)
}

fn no_such_job(id: u32, table: &Table) -> String {
    let ids: Vec<String> = table.jobs.iter().map(|j| j.id.to_string()).collect();
    if ids.is_empty() {
        format!("there is no job {id}: no background job was started in this session")
    } else {
        format!("there is no job {id}; the jobs are {}", ids.join(", "))
    }
}

/// The arguments of `command_output`.
#[derive(Deserialize, JsonSchema)]
struct OutputArgs {
    /// The job id run_command returned.
    job: u32,
    /// Seconds to wait for new output when there is none yet (default 0, at most 30).
    wait_sec: Option<u64>,
}

/// The arguments of `stop_command`.
#[derive(Deserialize, JsonSchema)]
struct StopArgs {
    /// The job id run_command returned.
    job: u32,
}

/// `command_output`: what a background job wrote since the last read, and its state.
pub(super) struct CommandOutput(pub(super) Jobs);

impl Tool for CommandOutput {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "command_output".into(),
            description: "Read what a background job of run_command wrote since the last read, \
and whether it still runs. `wait_sec` waits for new output (at most 30 s)."
                .into(),
            parameters: parameters_of::<OutputArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: OutputArgs = parse_args(args)?;
            let wait = Duration::from_secs(args.wait_sec.unwrap_or(0));
            self.0.read(args.job, wait, &ctx.cancel).await
        })
    }
}

/// `stop_command`: ends a background job and everything it started.
pub(super) struct StopCommand(pub(super) Jobs);

impl Tool for StopCommand {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "stop_command".into(),
            description: "End a background job of run_command and every process it started; \
returns its last output."
                .into(),
            parameters: parameters_of::<StopArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    // Ending a job the model started itself changes nothing of the person's.
    fn needs_approval(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: StopArgs = parse_args(args)?;
            self.0.stop(args.job);
            self.0.wait_end(args.job, Duration::from_secs(5)).await;
            self.0.read(args.job, Duration::ZERO, &ctx.cancel).await
        })
    }
}
