//! Why an MCP server could not start or a call to it failed: the MCP layer's error type.

use crate::tools::error::ToolError;

/// Why a server is not running, or why one of its calls failed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// The program is not on the search path (or not executable where named).
    #[error(
        "the program `{program}` was not found{where_}; install it or give its full path in `command`"
    )]
    ProgramMissing {
        /// The program as configured.
        program: String,
        /// Where it was looked for (` on PATH` or ` at /x/y`).
        where_: String,
    },
    /// The process could not be started.
    #[error("could not start `{program}`: {source}")]
    Spawn {
        /// The program.
        program: String,
        /// The system's words.
        source: std::io::Error,
    },
    /// The bearer token variable named in the entry is not set.
    #[error("the variable `{0}` named by `bearer_token_env_var` is not set")]
    TokenMissing(String),
    /// A header name or value the HTTP client cannot send.
    #[error("the header `{0}` is not a valid HTTP header")]
    BadHeader(String),
    /// The HTTP client could not be built.
    #[error("could not set up HTTP: {0}")]
    Http(#[from] reqwest::Error),
    /// `initialize` (or the first tool list) did not finish in time.
    #[error("no answer within {secs} s (startup_timeout_sec){stderr}")]
    StartTimeout {
        /// The timeout in seconds.
        secs: f64,
        /// ` — its stderr ended with: …`, or empty.
        stderr: String,
    },
    /// The handshake failed.
    #[error("the MCP handshake failed: {message}{stderr}")]
    Handshake {
        /// rmcp's words.
        message: String,
        /// ` — its stderr ended with: …`, or empty.
        stderr: String,
    },
    /// The tool list could not be read.
    #[error("could not list its tools: {0}")]
    ListTools(String),
    /// The server's process ended or its connection closed.
    #[error("the server stopped ({how}){stderr}")]
    Stopped {
        /// `exit code 1`, `killed by signal 9`, `connection closed`.
        how: String,
        /// ` — its stderr ended with: …`, or empty.
        stderr: String,
    },
    /// A call went to a server that is not running.
    #[error(
        "the MCP server `{server}` is not running ({state}); /mcp restart {server} starts it again"
    )]
    NotRunning {
        /// The server.
        server: String,
        /// Its state and last error.
        state: String,
    },
    /// The server answered the call with a protocol error.
    #[error("the MCP server `{server}` refused the call: {message}")]
    Refused {
        /// The server.
        server: String,
        /// Its words.
        message: String,
    },
    /// The tool reported an error (`isError`): its own words.
    #[error("{0}")]
    ToolFailed(String),
}

impl From<McpError> for ToolError {
    fn from(e: McpError) -> Self {
        match e {
            McpError::ToolFailed(message) => ToolError::Failed(message),
            other => ToolError::failed(other.to_string()),
        }
    }
}

/// ` — its stderr ended with: …` for a non-empty tail, else nothing.
pub(super) fn stderr_note(tail: &str) -> String {
    let tail = tail.trim();
    if tail.is_empty() {
        String::new()
    } else {
        format!(" — its stderr ended with: {tail}")
    }
}
