//! `run_shell_command`: a few read-only commands, started without a shell, checked by
//! [`policy`] against the flag tables of [`flags`], bounded in time and output, streamed line by
//! line. A refusal is a [`Refusal`].

pub(crate) mod flags;
pub(crate) mod listing;
pub(crate) mod paths;
pub(crate) mod policy;
pub(crate) mod refusal;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::process::Command;

use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args};
use crate::tools::confine::Confinement;
use crate::tools::process::{self, Limits};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use crate::tools::support::blocking;
use flags::ALLOWED_COMMANDS;
use listing::{ListingFilter, filter_lines, names_hidden};
pub use refusal::Refusal;

/// How the shell tool runs commands.
#[derive(Clone, Debug, Default)]
pub struct ShellSettings {
    /// Timeout and output cap.
    pub limits: Limits,
    /// Where programs are looked up (`None`: the parent's PATH, minus workspace folders).
    pub search_path: Option<String>,
}

/// The `run_shell_command` tool.
#[derive(Clone, Debug, Default)]
pub struct ShellTool {
    settings: ShellSettings,
}

impl ShellTool {
    /// A shell tool with these settings.
    pub fn new(settings: ShellSettings) -> Self {
        Self { settings }
    }
}

/// Adds `run_shell_command`.
pub fn register(registry: &mut ToolRegistry, settings: ShellSettings) {
    registry.register(ShellTool::new(settings));
}

const DESCRIPTION: &str = "Run one read-only command in the workspace: pwd, ls, cat, head, tail, wc \
or rg (ripgrep). It is started directly, never through a shell: give the program in `command` and \
every argument as its own item of `args` (e.g. command \"rg\", args [\"-n\", \"TODO\", \"src\"]). \
Paths must be relative and stay inside the workspace (no absolute paths, no `..`). Shell syntax \
(| ; & > < ` $ newlines) is refused in every argument, rg patterns included: for alternatives \
use several `-e PATTERN` flags. Only common reading flags are allowed (e.g. ls -la, head -n 20, \
tail -n 20, wc -l, rg -n -i -w -F -g GLOB -t TYPE -C 2); following files (tail -f), rg --pre, \
-z and --follow are refused. Files named .env* and MiniClaw's own files are kept out of reach. \
Times out after 10 s; output is capped at 64 KB per stream.";

/// The arguments of `run_shell_command`.
#[derive(Deserialize, JsonSchema)]
struct ShellArgs {
    /// The program: pwd, ls, cat, head, tail, wc or rg.
    // Listed for the model; any other name is refused by the policy with its reason.
    #[schemars(extend("enum" = ALLOWED_COMMANDS))]
    command: String,
    /// The arguments, one item each (flags, pattern, relative paths).
    args: Option<Vec<String>>,
    /// A folder relative to the workspace to run in (default: the workspace).
    working_dir: Option<String>,
}

impl Tool for ShellTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "run_shell_command".into(),
            description: DESCRIPTION.into(),
            parameters: parameters_of::<ShellArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    // Read-only, but it runs a program: the `ask` mode asks first.
    fn needs_approval(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let ShellArgs {
                command,
                args: argv,
                working_dir,
            } = parse_args(args)?;
            let argv = argv.unwrap_or_default();
            let working_dir = working_dir.as_deref().unwrap_or(".");
            let root = ctx.sandbox.root();
            let checked = policy::check(root, command.trim(), &argv, working_dir)?;
            let path = self
                .settings
                .search_path
                .clone()
                .unwrap_or_else(|| process::safe_path(root));
            let cmd = prepare(&checked, &path, root.to_path_buf()).await?;
            // `ls` prints names only: its lines naming hidden entries never show, live either.
            let live = std::sync::Mutex::new(ListingFilter::default());
            let on_line = |line: String| {
                let keep = checked.program != "ls"
                    || live
                        .lock()
                        .is_ok_and(|mut f| f.keep(line.trim_end_matches(['\n', '\r'])));
                if keep {
                    ctx.output(line);
                }
            };
            let out = process::run_bounded(
                cmd,
                &checked.program,
                None,
                self.settings.limits,
                &ctx.cancel,
                &on_line,
            )
            .await?;
            Ok(self.result(ctx, &checked, out))
        })
    }
}

/// The command ready to start: found on `path`, confined, in a minimal environment.
async fn prepare(
    checked: &policy::CheckedCommand,
    path: &str,
    root: std::path::PathBuf,
) -> Result<Command, ToolError> {
    let Some(program) = process::find_program(&checked.program, path) else {
        return Err(ToolError::failed(missing_program(&checked.program)));
    };
    // Finding the workspace's hidden files walks it: off the async runtime.
    let for_rules = program.clone();
    let confinement = blocking(move || Ok(Confinement::read_only(&root, &for_rules))).await?;
    let mut cmd = Command::new(program);
    if let Some(confinement) = &confinement {
        confinement
            .apply(&mut cmd)
            .map_err(|e| ToolError::failed(format!("cannot confine the command: {e}")))?;
    }
    cmd.args(&checked.run_args)
        .current_dir(&checked.working_dir)
        .env_clear()
        .env("PATH", path)
        .env("LANG", "C.UTF-8");
    Ok(cmd)
}

impl ShellTool {
    /// The observation: the command as the model gave it, and its output with hidden names
    /// left out of listings and error messages.
    fn result(
        &self,
        ctx: &ToolContext,
        checked: &policy::CheckedCommand,
        out: process::ProcessOutput,
    ) -> Map<String, Value> {
        let mut shown = vec![checked.program.clone()];
        shown.extend(checked.args.iter().cloned());
        let stdout = if checked.program == "ls" {
            let mut filter = ListingFilter::default();
            filter_lines(&out.stdout, |l| filter.keep(l))
        } else {
            out.stdout
        };
        let stderr = filter_lines(&out.stderr, |l| !names_hidden(l));
        let mut fields = Map::new();
        fields.insert("command".into(), json!(shown.join(" ")));
        fields.insert(
            "working_dir".into(),
            json!(display_dir(ctx, &checked.working_dir)),
        );
        fields.insert("exit_code".into(), json!(out.exit_code));
        fields.insert("stdout".into(), json!(stdout));
        fields.insert("stderr".into(), json!(stderr));
        fields.insert("truncated".into(), json!(out.truncated));
        if out.truncated {
            fields.insert(
                "note".into(),
                json!(format!(
                    "output was cut at {} KB per stream; narrow the command (head, rg -m, a path)",
                    self.settings.limits.output_cap / 1024
                )),
            );
        }
        fields
    }
}

fn display_dir(ctx: &ToolContext, dir: &std::path::Path) -> String {
    let shown = ctx.sandbox.display_relative(dir);
    if shown.is_empty() { ".".into() } else { shown }
}

fn missing_program(program: &str) -> String {
    if program == "rg" {
        "`rg` (ripgrep) is not installed on this machine; install the `ripgrep` package \
         (e.g. `apt-get install ripgrep`, `brew install ripgrep`) or use search_files instead"
            .into()
    } else {
        format!("`{program}` was not found on this machine; install the `coreutils` package")
    }
}
