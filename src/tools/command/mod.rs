//! `run_command`: a shell command line (builds, tests, scripts) run by `sh -c` in the jail
//! (`crate::jail`), its output streamed live; the observation holds the exit status, the
//! first and last parts of stdout and stderr, and the time it took. A command may run in the
//! background as a job (`jobs`: `command_output`, `stop_command`). The agent snapshots the
//! workspace around each call (`Tool::changes_workspace`), so `/undo` puts back what it changed.
//! Registered only where the jail can be built.

mod changes;
pub mod exposure;
mod jobs;
pub mod manifest;
mod plan;
pub mod settings;
pub mod survey;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::jail::{Jail, JailStatus, SETUP_FAILED_PREFIX, SETUP_FAILED_STATUS};
use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args};
use crate::tools::process::{self, Limits, ProcessOutput, Stopped};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use crate::tools::support::blocking;
pub use jobs::{JobInfo, JobState, Jobs};
use manifest::Manifest;
pub use settings::CommandSettings;

/// The tool's name (the approval gate's rules know it by the same constant).
pub const NAME: &str = crate::command_rules::RUN_COMMAND;

/// `run_command` and its job tools, sharing the session's jail and jobs.
#[derive(Clone, Debug)]
pub struct CommandTools {
    inner: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    settings: CommandSettings,
    jail: Jail,
    jobs: Jobs,
    /// The workspace's files after the last command: their hashes are reused by the next one
    /// where nothing moved (taken out while a command runs).
    last: Mutex<Option<Manifest>>,
}

impl CommandTools {
    /// The tools for `jail`, once [`Jail::check`] said it can be built here.
    pub fn new(settings: CommandSettings, jail: Jail) -> Self {
        let jobs = Jobs::new(settings.max_jobs);
        Self {
            inner: Arc::new(Shared {
                settings,
                jail,
                jobs,
                last: Mutex::new(None),
            }),
        }
    }

    /// The session's background jobs (for `/jobs`).
    pub fn jobs(&self) -> &Jobs {
        &self.inner.jobs
    }

    /// Adds `run_command`, `command_output` and `stop_command`.
    pub fn register(&self, registry: &mut ToolRegistry) {
        registry.register(RunCommand(self.clone()));
        registry.register(jobs::CommandOutput(self.inner.jobs.clone()));
        registry.register(jobs::StopCommand(self.inner.jobs.clone()));
    }
}

/// Builds the session's jail and checks it can run a command; the tools when it can, or the
/// reason it cannot (for `/status` and the start notice).
pub async fn prepare(
    settings: CommandSettings,
    supervisor: std::path::PathBuf,
) -> Result<CommandTools, String> {
    if !cfg!(target_os = "linux") {
        return Err("run_command needs Linux (its jail is built from Linux namespaces, Landlock and seccomp)".into());
    }
    let jail = Jail::new(supervisor).map_err(|e| e.to_string())?;
    match jail.check().await {
        JailStatus::Ready => Ok(CommandTools::new(settings, jail)),
        JailStatus::Unavailable(why) => Err(why),
    }
}

const DESCRIPTION: &str = "Run a shell command line in the workspace (sh -c: pipes, && and \
redirections work), to build, test, run scripts, use git read-only. It runs in a jail: it reads \
the workspace, system folders and common toolchains; it writes only inside the workspace (never \
.git, .env*, AGENTS.md, .mcp.json, miniclaw.toml, tools_plugins/, .agents/, .claude/) and $TMPDIR; no network \
unless you set `network` (the person is then asked every time). The result has the exit code, \
stdout and stderr (long output keeps its first and last parts) and how long it took; the files \
it changed are listed and can be undone. Default timeout 120 s. For servers and watchers set \
`background`: it returns a job id after a few seconds; read its output with command_output and \
end it with stop_command.";

/// The arguments of `run_command`.
#[derive(Deserialize, JsonSchema)]
struct CommandArgs {
    /// The shell command line, e.g. "cargo test 2>&1 | tail -n 30".
    command: String,
    /// A folder relative to the workspace to run in (default: the workspace).
    working_dir: Option<String>,
    /// Seconds before the command is stopped (default 120; there is a maximum).
    timeout_sec: Option<u64>,
    /// Run as a background job (servers, watchers): returns a job id if still running after a
    /// few seconds.
    background: Option<bool>,
    /// The command needs the internet (a package install): the person is asked every time.
    network: Option<bool>,
}

/// The `run_command` tool.
struct RunCommand(CommandTools);

impl Tool for RunCommand {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: NAME.into(),
            description: DESCRIPTION.into(),
            parameters: parameters_of::<CommandArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn call_timeout(&self) -> Option<Duration> {
        // The command's own timeout ends it first; this only bounds the jail's setup on top.
        Some(self.0.inner.settings.max_timeout + Duration::from_secs(30))
    }

    fn changes_workspace(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let args: CommandArgs = parse_args(args)?;
            let shared = &self.0.inner;
            let timeout = args
                .timeout_sec
                .map_or(shared.settings.timeout, Duration::from_secs)
                .min(shared.settings.max_timeout)
                .max(Duration::from_secs(1));
            let network = args.network.unwrap_or(false);
            let mut prepared = plan::prepare(
                &shared.jail,
                &shared.settings,
                ctx,
                &args.command,
                args.working_dir.as_deref(),
                network,
            )
            .await?;
            let cmd = shared
                .jail
                .command(&prepared.plan)
                .map_err(|e| ToolError::failed(e.to_string()))?;
            // Whatever happens to this call from here (an interrupt drops it), what the command
            // made under shielded names is moved aside.
            let mut guard =
                QuarantineOnDrop::new(ctx, &prepared.before, shared.settings.max_entries);
            let before = shared
                .manifest_before(ctx, std::mem::take(&mut prepared.found))
                .await?;
            let limits = Limits {
                timeout,
                output_cap: settings::OUTPUT_CAP,
                keep_tail: true,
                flood: Some(settings::FLOOD_BYTES),
            };
            if args.background.unwrap_or(false) {
                // What a job makes under a shielded name while it runs is moved aside when it
                // ends, as for a command in the foreground.
                let (sandbox, shields) = (ctx.sandbox.clone(), prepared.before.clone());
                let max_entries = shared.settings.max_entries;
                let at_end = move || drop(plan::quarantine(&sandbox, &shields, max_entries));
                let started = shared
                    .jobs
                    .start(&args.command, cmd, limits, ctx, prepared.shown_dir, at_end)
                    .await;
                let done = shared.finish(ctx, before, prepared.before, started).await;
                guard.disarm();
                return done;
            }
            let started = Instant::now();
            let on_line = |line: String| ctx.output(line);
            let ran = process::run_to_limit(cmd, "sh", None, limits, &ctx.cancel, &on_line)
                .await
                .map_err(ToolError::from)
                .and_then(|out| {
                    result(
                        &args.command,
                        &prepared.shown_dir,
                        out,
                        started.elapsed(),
                        timeout,
                    )
                });
            let done = shared.finish(ctx, before, prepared.before, ran).await;
            guard.disarm();
            done
        })
    }
}

/// Moves aside what a command made under shielded names when its call is dropped unfinished
/// (an interrupt, a timeout of the call): the walk runs on a blocking thread of its own. A call
/// that finishes has done it already; doing it again finds nothing new.
struct QuarantineOnDrop {
    armed: bool,
    sandbox: Arc<crate::tools::Sandbox>,
    shields: plan::Shields,
    max_entries: usize,
}

impl QuarantineOnDrop {
    fn new(ctx: &ToolContext, shields: &plan::Shields, max_entries: usize) -> Self {
        Self {
            armed: true,
            sandbox: ctx.sandbox.clone(),
            shields: shields.clone(),
            max_entries,
        }
    }

    /// The call finished and did it itself.
    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Drop for QuarantineOnDrop {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let (sandbox, shields) = (self.sandbox.clone(), self.shields.clone());
        let max_entries = self.max_entries;
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || drop(plan::quarantine(&sandbox, &shields, max_entries)));
        }
    }
}

impl Shared {
    /// Ends a call however the command went: what it changed is recorded and what it made
    /// under shielded names moved aside even when it was interrupted or its call failed (it
    /// may have run part way), then its result (or error) is given back.
    async fn finish(
        &self,
        ctx: &ToolContext,
        before: Manifest,
        shields: plan::Shields,
        ran: Result<Map<String, Value>, ToolError>,
    ) -> Result<Map<String, Value>, ToolError> {
        match ran {
            Ok(mut fields) => {
                self.after(ctx, before, shields, &mut fields).await;
                Ok(fields)
            }
            Err(e) => {
                self.after(ctx, before, shields, &mut Map::new()).await;
                Err(e)
            }
        }
    }

    /// The manifest of the files `found` before a command, reusing the last command's hashes
    /// (off the runtime).
    async fn manifest_before(
        &self,
        ctx: &ToolContext,
        found: Vec<survey::Found>,
    ) -> Result<Manifest, ToolError> {
        let previous = self.last.lock().ok().and_then(|mut last| last.take());
        let (sandbox, keeper) = (ctx.sandbox.clone(), ctx.keeper.clone());
        blocking(move || {
            Ok(Manifest::take(
                found,
                previous.as_ref(),
                &sandbox,
                keeper.as_deref(),
            ))
        })
        .await
    }

    /// After a command: what it made under shielded names moved aside, what it changed
    /// recorded and shown (`files_changed` in `fields`, a diff per file), the new manifest kept
    /// for the next command.
    async fn after(
        &self,
        ctx: &ToolContext,
        before: Manifest,
        shields: plan::Shields,
        fields: &mut Map<String, Value>,
    ) {
        let (sandbox, keeper) = (ctx.sandbox.clone(), ctx.keeper.clone());
        let max_entries = self.settings.max_entries;
        let work = move || {
            let plan::Quarantined {
                moved,
                found,
                warning,
            } = plan::quarantine(&sandbox, &shields, max_entries);
            let after = Manifest::take(found, Some(&before), &sandbox, keeper.as_deref());
            let changes = before.changes_to(&after);
            let diffs = changes::record(&changes, &sandbox, keeper.as_deref());
            let observed = changes::observed(&changes, keeper.is_some());
            Ok((moved, after, diffs, observed, warning))
        };
        let (moved, after, diffs, observed, warning) = match blocking(work).await {
            Ok(done) => done,
            Err(e) => {
                tracing::warn!(error = %e, "what a command changed could not be found");
                return;
            }
        };
        if let Ok(mut last) = self.last.lock() {
            *last = Some(after);
        }
        changes::tell(diffs, ctx);
        if let Some(observed) = observed {
            fields.insert("files_changed".into(), observed);
        }
        if !moved.is_empty() {
            fields.insert(
                "moved_aside".into(),
                json!(format!(
                    "commands may not create these, so MiniClaw moved them into {} (out of every tool's reach): {}",
                    ".miniclaw/quarantine",
                    moved.join(", ")
                )),
            );
        }
        if let Some(warning) = warning {
            fields.insert("warning".into(), json!(warning));
        }
    }
}

/// The observation of a finished (or stopped) command.
fn result(
    command: &str,
    shown_dir: &str,
    out: ProcessOutput,
    elapsed: Duration,
    timeout: Duration,
) -> Result<Map<String, Value>, ToolError> {
    if out.exit_code == Some(i32::from(SETUP_FAILED_STATUS))
        && let Some(reason) = out
            .stderr
            .lines()
            .find_map(|l| l.strip_prefix(SETUP_FAILED_PREFIX))
    {
        return Err(ToolError::failed(format!(
            "the jail could not be built, so the command did not run: {reason}"
        )));
    }
    let mut fields = Map::new();
    fields.insert("command".into(), json!(command));
    fields.insert("working_dir".into(), json!(shown_dir));
    fields.insert("exit_code".into(), json!(out.exit_code));
    fields.insert("stdout".into(), json!(out.stdout));
    fields.insert("stderr".into(), json!(out.stderr));
    fields.insert(
        "duration_sec".into(),
        json!((elapsed.as_secs_f64() * 10.0).round() / 10.0),
    );
    if out.truncated {
        fields.insert(
            "note".into(),
            json!("long output: its first and last parts are kept, the cut is marked"),
        );
    }
    match out.stopped {
        Some(Stopped::TimedOut) => {
            fields.insert(
                "stopped".into(),
                json!(format!(
                    "timed out after {} s: the command and everything it started were ended",
                    timeout.as_secs()
                )),
            );
        }
        Some(Stopped::Flooded) => {
            fields.insert(
                "stopped".into(),
                json!(format!(
                    "it wrote over {} MB of output and was ended; narrow it (| tail, | head, a filter)",
                    settings::FLOOD_BYTES >> 20
                )),
            );
        }
        None => {}
    }
    Ok(fields)
}
