//! The error a tool call ends with; its text becomes the observation's `error`.

use super::sandbox::SandboxError;

/// Why a tool call failed; the text becomes the observation's `error`.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The arguments do not fit the schema.
    #[error("invalid arguments: {0}")]
    InvalidArguments(String),
    /// A path broke a sandbox rule.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
    /// The tool ran and failed.
    #[error("{0}")]
    Failed(String),
    /// The tool ran out of time.
    #[error("timed out after {0} s")]
    Timeout(u64),
    /// The turn was interrupted.
    #[error("interrupted")]
    Cancelled,
    /// The tool panicked (a bug in MiniClaw or a plugin host); the session goes on.
    #[error("the tool failed unexpectedly (a bug): {0}")]
    Panicked(String),
}

impl ToolError {
    /// A failure with a message.
    pub fn failed(msg: impl Into<String>) -> Self {
        Self::Failed(msg.into())
    }
}

/// An I/O error as a tool failure that names the path.
pub(crate) fn io_failed(action: &str, shown: &str, e: &std::io::Error) -> ToolError {
    match e.kind() {
        std::io::ErrorKind::NotFound => ToolError::failed(format!("`{shown}` does not exist")),
        std::io::ErrorKind::PermissionDenied => {
            ToolError::failed(format!("cannot {action} `{shown}`: permission denied"))
        }
        _ => ToolError::failed(format!("cannot {action} `{shown}`: {e}")),
    }
}
