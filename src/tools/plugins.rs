//! Plugin tools: `tools_plugins/*.toml` files declaring commands that read their arguments as JSON
//! on stdin and print a JSON result on stdout. A broken file is reported and skipped. A call ends
//! everything its command started (the process group) when it returns, times out or is
//! interrupted.
//!
//! ```toml
//! [[tool]]
//! name = "echo_text"                      # letters, digits, `_` and `-`
//! description = "Returns the text it was given."
//! command = ["python3", "echo_text.py"]   # an argument vector, no shell
//! timeout_secs = 10                       # optional (default 10, at most 120)
//! # `parameters` is a JSON Schema: a TOML table (below) or a string holding JSON.
//! [tool.parameters]
//! type = "object"
//! required = ["text"]
//! properties.text = { type = "string", description = "The text." }
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio::process::Command;

use super::process::{self, Limits, ProcessError};
use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolSource};
use crate::llm::ToolSchema;

/// The longest timeout a plugin may ask for.
const MAX_TIMEOUT_SECS: u64 = 120;

/// Why a plugin file was skipped, or why a plugin call failed: the plugin layer's error type.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The file could not be read.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// The file is not valid TOML or does not fit the format.
    #[error("{}", .0.to_string().trim())]
    Toml(#[source] toml::de::Error),
    /// The file declares no tool.
    #[error("it declares no [[tool]]")]
    NoTools,
    /// The file's folder cannot be resolved.
    #[error("{0}")]
    Folder(#[source] std::io::Error),
    /// A tool name with characters other than letters, digits, `_` and `-`, or too long.
    #[error("tool name `{0}` must be 1-64 letters, digits, `_` or `-`")]
    BadName(String),
    /// A tool without a program.
    #[error("tool `{0}` has an empty command")]
    EmptyCommand(String),
    /// `parameters` given as a string that is not JSON.
    #[error("tool `{name}`: parameters is not valid JSON ({source})")]
    ParametersNotJson {
        /// The tool.
        name: String,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// `parameters` given as a TOML table that has no JSON form.
    #[error("tool `{name}`: parameters: {source}")]
    ParametersUnconvertible {
        /// The tool.
        name: String,
        /// The conversion error.
        source: serde_json::Error,
    },
    /// `parameters` is not an object schema.
    #[error("tool `{0}`: parameters must be a JSON Schema with \"type\": \"object\"")]
    NotObjectSchema(String),
    /// The plugin's program is not on the search path.
    #[error("plugin `{name}`: program `{program}` was not found on this machine")]
    ProgramMissing {
        /// The tool.
        name: String,
        /// The program as declared.
        program: String,
    },
    /// The plugin's process could not run to its end.
    #[error("plugin `{name}`: {source}")]
    Process {
        /// The tool.
        name: String,
        /// What happened to the process.
        source: ProcessError,
    },
    /// The plugin exited with an error (`code` is e.g. "code 3" or "a signal").
    #[error("plugin `{name}` exited with {code}: {stderr}")]
    Exited {
        /// The tool.
        name: String,
        /// How it exited.
        code: String,
        /// The start of its standard error.
        stderr: String,
    },
    /// The plugin printed more than the output cap.
    #[error("plugin `{0}` printed more than the output cap")]
    OutputCap(String),
    /// The plugin printed something that is not JSON.
    #[error("plugin `{name}` printed something that is not JSON: {shown}")]
    NotJson {
        /// The tool.
        name: String,
        /// The start of what it printed.
        shown: String,
    },
    /// The plugin answered `{"ok": false, "error": ...}`: its own words.
    #[error("{0}")]
    Reported(String),
}

impl From<PluginError> for ToolError {
    fn from(e: PluginError) -> Self {
        match e {
            // A timeout or an interrupt reads the same as for any other tool.
            PluginError::Process { source, .. }
                if matches!(source, ProcessError::Timeout(_) | ProcessError::Cancelled) =>
            {
                source.into()
            }
            PluginError::Reported(message) => ToolError::Failed(message),
            other => ToolError::failed(other.to_string()),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PluginFile {
    #[serde(default)]
    tool: Vec<Declaration>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Declaration {
    name: String,
    description: String,
    #[serde(default)]
    parameters: Option<toml::Value>,
    command: Vec<String>,
    #[serde(default)]
    timeout_secs: Option<u64>,
}

/// A tool declared by a plugin file.
#[derive(Clone, Debug)]
pub struct PluginTool {
    schema: ToolSchema,
    command: Vec<String>,
    file: PathBuf,
    /// The plugin file's folder: the command's current folder (never the workspace, which the
    /// model can write, so nothing it wrote is found as a module or a relative program).
    folder: PathBuf,
    limits: Limits,
}

/// The folders searched for plugin files: `./tools_plugins` (the project's, only when
/// `project_trusted`) and `<config dir>/miniclaw/tools_plugins` (the user's own).
pub fn default_dirs(project_trusted: bool) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if project_trusted {
        dirs.push(PathBuf::from("tools_plugins"));
    }
    if let Some(p) = directories::ProjectDirs::from("", "", "miniclaw") {
        dirs.push(p.config_dir().join("tools_plugins"));
    }
    dirs
}

/// Loads every `*.toml` of `dirs` (missing folders are fine); `taken` names may not be reused.
/// Returns the tools and a warning for each file or tool that was skipped.
pub fn load_dirs(dirs: &[PathBuf], taken: &BTreeSet<String>) -> (Vec<PluginTool>, Vec<String>) {
    let mut tools: Vec<PluginTool> = Vec::new();
    let mut warnings = Vec::new();
    let mut names = taken.clone();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                warnings.push(format!("plugin folder {} skipped: {e}", dir.display()));
                continue;
            }
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "toml"))
            .collect();
        files.sort();
        for file in files {
            match load_file(&file) {
                Ok(found) => {
                    for tool in found {
                        let name = tool.schema.name.clone();
                        if names.contains(&name) {
                            warnings.push(format!(
                                "plugin tool `{name}` in {} skipped: the name is already taken",
                                file.display()
                            ));
                        } else {
                            names.insert(name);
                            tools.push(tool);
                        }
                    }
                }
                Err(e) => warnings.push(format!("plugin file {} skipped: {e}", file.display())),
            }
        }
    }
    (tools, warnings)
}

/// Reads one plugin file; any error skips the whole file.
pub fn load_file(path: &Path) -> Result<Vec<PluginTool>, PluginError> {
    let text = std::fs::read_to_string(path).map_err(PluginError::Read)?;
    let parsed: PluginFile = toml::from_str(&text).map_err(PluginError::Toml)?;
    if parsed.tool.is_empty() {
        return Err(PluginError::NoTools);
    }
    let folder = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .canonicalize()
        .map_err(PluginError::Folder)?;
    parsed
        .tool
        .into_iter()
        .map(|d| build(d, &folder, path))
        .collect()
}

fn build(d: Declaration, folder: &Path, file: &Path) -> Result<PluginTool, PluginError> {
    let valid_name = !d.name.is_empty()
        && d.name.len() <= 64
        && d.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(PluginError::BadName(d.name));
    }
    if d.command
        .first()
        .is_none_or(|program| program.trim().is_empty())
    {
        return Err(PluginError::EmptyCommand(d.name));
    }
    let parameters = match d.parameters {
        None => json!({"type": "object", "properties": {}}),
        Some(toml::Value::String(s)) => {
            serde_json::from_str(&s).map_err(|source| PluginError::ParametersNotJson {
                name: d.name.clone(),
                source,
            })?
        }
        Some(other) => {
            serde_json::to_value(&other).map_err(|source| PluginError::ParametersUnconvertible {
                name: d.name.clone(),
                source,
            })?
        }
    };
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(PluginError::NotObjectSchema(d.name));
    }
    let secs = d.timeout_secs.unwrap_or(10).clamp(1, MAX_TIMEOUT_SECS);
    Ok(PluginTool {
        schema: ToolSchema {
            name: d.name,
            description: d.description,
            parameters,
        },
        command: isolate_interpreter(resolve_command(&d.command, folder)),
        file: file.to_path_buf(),
        folder: folder.to_path_buf(),
        limits: Limits {
            timeout: Duration::from_secs(secs),
            ..Limits::default()
        },
    })
}

/// Relative paths of the command resolve against the plugin's folder: the program when it has a
/// `/`, and an argument when a file of that name sits next to the plugin file.
fn resolve_command(command: &[String], folder: &Path) -> Vec<String> {
    command
        .iter()
        .enumerate()
        .map(|(i, part)| {
            let p = Path::new(part);
            let local = folder.join(p);
            let resolve = p.is_relative()
                && !part.starts_with('-')
                && if i == 0 {
                    part.contains('/')
                } else {
                    local.is_file()
                };
            if resolve {
                local.to_string_lossy().into_owned()
            } else {
                part.clone()
            }
        })
        .collect()
}

/// Starts Python in isolated mode (`-I`: no current folder or script folder on the import path,
/// no `PYTHON*` variables, no user site-packages), whatever the plugin file says.
fn isolate_interpreter(mut command: Vec<String>) -> Vec<String> {
    let program = command
        .first()
        .and_then(|p| Path::new(p).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_python = program
        .strip_prefix("python")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if is_python && !command.iter().skip(1).any(|a| a == "-I") {
        // `is_python` means there is a program, so index 1 is in bounds.
        command.insert(1, "-I".to_string());
    }
    command
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

    /// The same tool with another timeout (tests).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.limits.timeout = timeout;
        self
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
