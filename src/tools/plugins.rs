//! Plugin tools: `tools_plugins/*.toml` files declaring commands that read their arguments as JSON
//! on stdin and print a JSON result on stdout. A broken file is reported and skipped.
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
pub fn load_file(path: &Path) -> Result<Vec<PluginTool>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let parsed: PluginFile = toml::from_str(&text).map_err(|e| e.to_string().trim().to_string())?;
    if parsed.tool.is_empty() {
        return Err("it declares no [[tool]]".into());
    }
    let folder = path
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
        .canonicalize()
        .map_err(|e| e.to_string())?;
    parsed
        .tool
        .into_iter()
        .map(|d| build(d, &folder, path))
        .collect()
}

fn build(d: Declaration, folder: &Path, file: &Path) -> Result<PluginTool, String> {
    let valid_name = !d.name.is_empty()
        && d.name.len() <= 64
        && d.name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(format!(
            "tool name `{}` must be 1-64 letters, digits, `_` or `-`",
            d.name
        ));
    }
    if d.command.is_empty() || d.command[0].trim().is_empty() {
        return Err(format!("tool `{}` has an empty command", d.name));
    }
    let parameters = match d.parameters {
        None => json!({"type": "object", "properties": {}}),
        Some(toml::Value::String(s)) => serde_json::from_str(&s)
            .map_err(|e| format!("tool `{}`: parameters is not valid JSON ({e})", d.name))?,
        Some(other) => serde_json::to_value(&other)
            .map_err(|e| format!("tool `{}`: parameters: {e}", d.name))?,
    };
    if parameters.get("type").and_then(Value::as_str) != Some("object") {
        return Err(format!(
            "tool `{}`: parameters must be a JSON Schema with \"type\": \"object\"",
            d.name
        ));
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
    let program = Path::new(&command[0])
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let is_python = program
        .strip_prefix("python")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if is_python && !command.iter().skip(1).any(|a| a == "-I") {
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
        Box::pin(async move {
            let name = &self.schema.name;
            let root = ctx.sandbox.root();
            let path = process::safe_path(root);
            let program_name = &self.command[0];
            let program = if program_name.contains('/') {
                PathBuf::from(program_name)
            } else {
                process::find_program(program_name, &path).ok_or_else(|| {
                    ToolError::failed(format!(
                        "plugin `{name}`: program `{program_name}` was not found on this machine"
                    ))
                })?
            };
            let mut cmd = Command::new(program);
            cmd.args(&self.command[1..])
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
            .map_err(|e| match e {
                ProcessError::Timeout(s) => ToolError::Timeout(s),
                ProcessError::Cancelled => ToolError::Cancelled,
                other => ToolError::failed(format!("plugin `{name}`: {other}")),
            })?;
            interpret(name, out)
        })
    }
}

/// Turns a plugin's output into result fields or an error.
fn interpret(name: &str, out: process::ProcessOutput) -> Result<Map<String, Value>, ToolError> {
    let stderr: String = out.stderr.trim().chars().take(500).collect();
    if out.exit_code != Some(0) {
        let code = out
            .exit_code
            .map_or("a signal".to_string(), |c| format!("code {c}"));
        return Err(ToolError::failed(format!(
            "plugin `{name}` exited with {code}: {stderr}"
        )));
    }
    if out.truncated {
        return Err(ToolError::failed(format!(
            "plugin `{name}` printed more than the output cap"
        )));
    }
    let value: Value = serde_json::from_str(out.stdout.trim()).map_err(|_| {
        let shown: String = out.stdout.trim().chars().take(200).collect();
        ToolError::failed(format!(
            "plugin `{name}` printed something that is not JSON: {shown}"
        ))
    })?;
    match value {
        Value::Object(fields) => {
            if fields.get("ok") == Some(&Value::Bool(false)) {
                let error = fields
                    .get("error")
                    .map(|e| e.as_str().map_or(e.to_string(), str::to_string))
                    .unwrap_or_else(|| "the plugin reported a failure".into());
                return Err(ToolError::failed(error));
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
