//! Why a plugin file was skipped or a plugin call failed: the plugin layer's error type.

use crate::tools::error::ToolError;
use crate::tools::process::ProcessError;

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
