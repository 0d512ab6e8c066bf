//! Why `run_shell_command` refused a request: the shell layer's one error type. Its text follows
//! `refused: ` in the observation, so each message says which rule the request broke.

use super::flags::{ALLOWED_COMMANDS, MAX_THREADS};
use crate::tools::error::ToolError;

/// A request that broke a rule of the shell policy.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// The workspace cannot be resolved to a real folder.
    #[error("the workspace is unusable: {0}")]
    WorkspaceUnusable(#[source] std::io::Error),
    /// A character a shell would interpret.
    #[error(
        "{what} contains shell syntax ({name}); commands run without a shell and such characters \
         are refused"
    )]
    ShellSyntax {
        /// Which part of the request (the command, an argument, working_dir).
        what: String,
        /// The character, named.
        name: &'static str,
    },
    /// A program outside the allowed list.
    #[error("`{0}` is not an allowed command; only {list} may run", list = ALLOWED_COMMANDS.join(", "))]
    NotAllowed(String),
    /// `working_dir` is not a folder.
    #[error("working_dir `{0}` is not a folder")]
    NotAFolder(String),
    /// A flag refused for a specific reason.
    #[error("flag `{flag}` of `{command}` is refused: {why}")]
    ForbiddenFlag {
        /// The command.
        command: String,
        /// The flag as written (`-L`, `--follow`).
        flag: String,
        /// Why it is refused.
        why: &'static str,
    },
    /// A flag not in the command's table.
    #[error("flag `{flag}` is not allowed for `{command}`; allowed: {allowed}")]
    UnknownFlag {
        /// The command.
        command: String,
        /// The flag as written.
        flag: String,
        /// Every allowed spelling.
        allowed: String,
    },
    /// `--flag=value` for a flag without a value.
    #[error("flag `{flag}` of `{command}` takes no value")]
    TakesNoValue {
        /// The command.
        command: String,
        /// The flag as written.
        flag: String,
    },
    /// A flag that needs a value got none.
    #[error("flag `{flag}` of `{command}` needs a value")]
    NeedsValue {
        /// The command.
        command: String,
        /// The flag as written.
        flag: String,
    },
    /// `-f=VALUE`: the programs would take `VALUE` while a check would see `=VALUE`.
    #[error("write `-{flag} VALUE` or `-{flag}VALUE`, not `-{flag}={value}`")]
    GluedEquals {
        /// The short flag.
        flag: char,
        /// What followed the `=`.
        value: String,
    },
    /// A numeric flag got something else.
    #[error("flag `{flag}` of `{command}` needs a whole number, not `{value}`")]
    NeedsNumber {
        /// The command.
        command: String,
        /// The flag as written.
        flag: String,
        /// The value given.
        value: String,
    },
    /// `rg -j` asked for more threads than allowed.
    #[error("`{0}` takes at most {MAX_THREADS} threads")]
    TooManyThreads(String),
    /// Positionals for a command that takes none.
    #[error("`{0}` takes no arguments")]
    TakesNoArguments(String),
    /// rg without a pattern.
    #[error("rg needs a pattern (the first argument that is not a flag)")]
    NeedsPattern,
    /// An empty path argument.
    #[error("an empty path is not allowed")]
    EmptyPath,
    /// An absolute path.
    #[error("absolute path `{0}` is refused; use a path relative to the workspace")]
    AbsolutePath(String),
    /// A path in the home folder.
    #[error("path `{0}` is refused: `~` (the home folder) is outside the workspace")]
    HomePath(String),
    /// A path with a `..` component.
    #[error("path `{0}` is refused: `..` is not allowed")]
    ParentPath(String),
    /// A symbolic link to nothing.
    #[error("path `{0}` is refused: it is a broken symbolic link")]
    BrokenLink(String),
    /// A path whose real location is outside the workspace.
    #[error(
        "path `{0}` is refused: its real location is outside the workspace (a symbolic link \
         leads out)"
    )]
    LeadsOut(String),
    /// A path naming, or leading to, a file kept from the tools (`hidden`).
    #[error("path `{path}` is refused: {rule}")]
    Hidden {
        /// The path as given.
        path: String,
        /// The rule, from `Hidden::rule`.
        rule: &'static str,
    },
    /// A file with other hard links, which may be outside.
    #[error(
        "path `{0}` is refused: the file has other hard links, so it may be a file outside the \
         workspace"
    )]
    HardLinked(String),
}

impl From<Refusal> for ToolError {
    fn from(refusal: Refusal) -> Self {
        ToolError::failed(format!("refused: {refusal}"))
    }
}
