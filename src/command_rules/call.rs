//! A `run_command` call as the gate reads it: its command line, folder, time limit and whether
//! it asks for the network, from the arguments the model wrote.

use serde_json::Value;

use crate::command_line::{self, SimpleCommand, Unreadable};

/// How long a command may run when the call does not say and no `[run_command]` setting
/// does (the tool's own default).
pub const DEFAULT_TIMEOUT_SEC: u64 = 120;

/// The longest a call may ask for when no `[run_command]` setting says (the tool's default).
pub const DEFAULT_MAX_TIMEOUT_SEC: u64 = 600;

/// The time limits `run_command` was configured with (its `[run_command]` settings), which the
/// dialog says a command ends after.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandTimeouts {
    /// Seconds a call that gives no timeout may run.
    pub default_sec: u64,
    /// The longest a call may ask for; a longer one is cut to this.
    pub max_sec: u64,
}

impl Default for CommandTimeouts {
    fn default() -> Self {
        Self {
            default_sec: DEFAULT_TIMEOUT_SEC,
            max_sec: DEFAULT_MAX_TIMEOUT_SEC,
        }
    }
}

impl CommandTimeouts {
    /// The limits from the tool's resolved durations.
    pub fn new(default: std::time::Duration, max: std::time::Duration) -> Self {
        Self {
            default_sec: default.as_secs(),
            max_sec: max.as_secs(),
        }
    }

    /// How long `call` may run, as the tool decides it: its own timeout or the default, never
    /// past the longest.
    pub fn for_call(&self, call: &CommandCall) -> u64 {
        call.timeout_sec
            .unwrap_or(self.default_sec)
            .min(self.max_sec)
    }
}

/// A `run_command` call's arguments, read for the gate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandCall {
    /// The command line (empty when the arguments hold none).
    pub line: String,
    /// The folder it runs in, relative to the workspace, as the model wrote it.
    pub working_dir: Option<String>,
    /// Its time limit in seconds, when the call gives one.
    pub timeout_sec: Option<u64>,
    /// Whether it asks for the internet. Anything but an absent, `null` or `false` value
    /// counts as yes: the tool may read `"true"` or `1` as yes, and then so must the gate.
    pub network: bool,
    /// Its simple commands, or why they cannot be read.
    pub parts: Result<Vec<SimpleCommand>, Unreadable>,
}

impl CommandCall {
    /// Reads `arguments` (the model's JSON). Arguments that are not an object with a string
    /// `command` give a call whose line cannot be read (it asks).
    pub fn from_arguments(arguments: &str) -> Self {
        let value: Value = serde_json::from_str(arguments).unwrap_or(Value::Null);
        let line = value.get("command").and_then(Value::as_str);
        let network = !matches!(
            value.get("network"),
            None | Some(Value::Null) | Some(Value::Bool(false))
        );
        Self {
            line: line.unwrap_or_default().to_string(),
            working_dir: value
                .get("working_dir")
                .and_then(Value::as_str)
                .map(str::to_string),
            timeout_sec: value.get("timeout_sec").and_then(Value::as_u64),
            network,
            parts: match line {
                Some(line) => command_line::split(line),
                None => Err(Unreadable::Empty),
            },
        }
    }
}

/// What the jail lets `call` do, in one line for the approval dialog, with the time limit
/// `timeouts` give it. A function of the call so the tool's side can make it more exact later
/// (its real limits, a background command).
pub fn jail_summary(call: &CommandCall, timeouts: &CommandTimeouts) -> String {
    let network = if call.network {
        "CAN REACH THE INTERNET"
    } else {
        "no network"
    };
    format!(
        "reads the workspace (not .env*), system folders and toolchains; writes only inside the \
         workspace (never .git, .env*, AGENTS.md, .mcp.json, miniclaw.toml, tools_plugins/, \
         .agents/); {network}; ends after {} s",
        timeouts.for_call(call)
    )
}
