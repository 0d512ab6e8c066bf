//! A plugin tool: its command started with the call's arguments as JSON on stdin, its stdout
//! read as the result.

use std::path::PathBuf;

use serde_json::{Map, Value};
use tokio::process::Command;

use super::error::PluginError;
use crate::llm::ToolSchema;
use crate::tools::process::{self, Limits};
use crate::tools::registry::{Tool, ToolContext, ToolFuture, ToolSource};

/// A tool declared by a plugin file.
#[derive(Clone, Debug)]
pub struct PluginTool {
    /// Name, description and the declared parameters (data, not a struct).
    pub(super) schema: ToolSchema,
    /// The argument vector, paths resolved against the plugin's folder.
    pub(super) command: Vec<String>,
    /// The plugin file that declared it.
    pub(super) file: PathBuf,
    /// The plugin file's folder: the command's current folder (never the workspace, which the
    /// model can write, so nothing it wrote is found as a module or a relative program).
    pub(super) folder: PathBuf,
    /// Timeout and output cap of a call.
    pub(super) limits: Limits,
}

impl PluginTool {
    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.schema.name
    }

    /// The command line, after path resolution.
    pub fn command(&self) -> &[String] {
        &self.command
    }
}

impl Tool for PluginTool {
    fn schema(&self) -> ToolSchema {
        self.schema.clone()
    }

    fn read_only(&self) -> bool {
        // Unknown effects: plugins run one at a time.
        false
    }

    fn source(&self) -> ToolSource {
        ToolSource::Plugin(self.file.display().to_string())
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move { Ok(self.run(args, ctx).await?) })
    }
}

impl PluginTool {
    /// Starts the plugin's command with `args` as JSON on stdin and reads its answer.
    async fn run(
        &self,
        args: Map<String, Value>,
        ctx: &ToolContext,
    ) -> Result<Map<String, Value>, PluginError> {
        let name = &self.schema.name;
        let root = ctx.sandbox.root();
        let path = process::safe_path(root);
        // `build` refuses an empty command, so there is always a program.
        let Some((program_name, program_args)) = self.command.split_first() else {
            return Err(PluginError::EmptyCommand(name.clone()));
        };
        let program = if program_name.contains('/') {
            PathBuf::from(program_name)
        } else {
            process::find_program(program_name, &path).ok_or_else(|| {
                PluginError::ProgramMissing {
                    name: name.clone(),
                    program: program_name.clone(),
                }
            })?
        };
        let mut cmd = Command::new(program);
        cmd.args(program_args)
            .current_dir(&self.folder)
            .env_clear()
            .env("PATH", &path)
            .env("LANG", "C.UTF-8")
            .env("MINICLAW_WORKSPACE", root);
        let input = Value::Object(args).to_string().into_bytes();
        let on_line = |line: String| ctx.output(line);
        let out = process::run_bounded(
            cmd,
            program_name,
            Some(input),
            self.limits,
            &ctx.cancel,
            &on_line,
        )
        .await
        .map_err(|source| PluginError::Process {
            name: name.clone(),
            source,
        })?;
        interpret(name, out)
    }
}

/// Turns a plugin's output into result fields or an error.
fn interpret(name: &str, out: process::ProcessOutput) -> Result<Map<String, Value>, PluginError> {
    if out.exit_code != Some(0) {
        let code = out
            .exit_code
            .map_or("a signal".to_string(), |c| format!("code {c}"));
        return Err(PluginError::Exited {
            name: name.to_string(),
            code,
            stderr: out.stderr.trim().chars().take(500).collect(),
        });
    }
    if out.truncated {
        return Err(PluginError::OutputCap(name.to_string()));
    }
    let value: Value =
        serde_json::from_str(out.stdout.trim()).map_err(|_| PluginError::NotJson {
            name: name.to_string(),
            shown: out.stdout.trim().chars().take(200).collect(),
        })?;
    match value {
        Value::Object(fields) => {
            if fields.get("ok") == Some(&Value::Bool(false)) {
                let error = fields
                    .get("error")
                    .map(|e| e.as_str().map_or(e.to_string(), str::to_string))
                    .unwrap_or_else(|| "the plugin reported a failure".into());
                return Err(PluginError::Reported(error));
            }
            Ok(fields)
        }
        other => {
            let mut fields = Map::new();
            fields.insert("result".into(), other);
            Ok(fields)
        }
    }
}
