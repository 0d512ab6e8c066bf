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

mod error;
mod tool;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::llm::ToolSchema;
use crate::tools::process::Limits;
pub use error::PluginError;
pub use tool::PluginTool;

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

/// The folders searched for plugin files: `./tools_plugins` (the project's, only when
/// `project_trusted`) and `<config dir>/miniclaw/tools_plugins` (the user's own).
pub fn default_dirs(project_trusted: bool) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if project_trusted {
        dirs.push(PathBuf::from("tools_plugins"));
    }
    // The config folder as fixed at start: a project's `.env` cannot move it.
    if let Some(config) = crate::paths::config_dir() {
        dirs.push(config.join("tools_plugins"));
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
                        let name = tool.name().to_string();
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

/// The most of a plugin file read: real ones are a few KB.
pub const MAX_PLUGIN_FILE_BYTES: u64 = 256 * 1024;

/// Reads one plugin file (never blocking on a special file, at most
/// [`MAX_PLUGIN_FILE_BYTES`]); any error skips the whole file.
pub fn load_file(path: &Path) -> Result<Vec<PluginTool>, PluginError> {
    use crate::capped_read::{Links, read_capped_string};
    let text = read_capped_string(path, MAX_PLUGIN_FILE_BYTES, Links::Follow)
        .map_err(|e| PluginError::Read(std::io::Error::other(e.to_string())))?;
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
pub(crate) fn isolate_interpreter(mut command: Vec<String>) -> Vec<String> {
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
