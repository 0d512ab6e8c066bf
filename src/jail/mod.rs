//! The jail `run_command` runs commands in (Linux): a supervisor process (MiniClaw's own
//! binary, started again with a hidden argument) builds user, network, mount and PID
//! namespaces, covers what the command may not see or change, and starts the command with
//! resource limits, no capabilities, Landlock file rules and a seccomp filter. MiniClaw plans
//! each command (`plan`; what of the workspace is shielded is found by
//! `tools::command::exposure`) and starts the supervisor (`launch`); the kernel enforces
//! everything after that. A leaf: it knows nothing of the tools.
//!
//! Layout: `plan` (what a command may do, handed to the supervisor), `launch` (MiniClaw's side:
//! private folders, the session's network holder, the check that the jail can be built here),
//! and the supervisor's side: `supervisor`, `namespaces`, `mounts`, `file_rules`, `seccomp`.

mod error;
pub mod launch;
pub mod plan;

#[cfg(target_os = "linux")]
mod file_rules;
#[cfg(target_os = "linux")]
mod mounts;
#[cfg(target_os = "linux")]
mod namespaces;
#[cfg(target_os = "linux")]
mod seccomp;
#[cfg(target_os = "linux")]
mod supervisor;

use std::process::ExitCode;

pub use error::JailError;
pub use launch::{Jail, JailStatus};
pub use plan::{Network, Plan, Resources, Shielded};

/// The first argument that makes MiniClaw's binary a command's supervisor.
pub const SUPERVISOR_ARG: &str = "__miniclaw-jail";
/// The first argument that makes it the session's network holder.
pub const HOLDER_ARG: &str = "__miniclaw-jail-holder";
/// The supervisor's exit status when the jail could not be built (the reason on stderr after
/// [`SETUP_FAILED_PREFIX`]).
pub const SETUP_FAILED_STATUS: u8 = 125;
/// How the supervisor's reason for not building the jail starts.
pub const SETUP_FAILED_PREFIX: &str = "miniclaw jail: ";

/// When the binary was started as a supervisor or holder: does that and returns the exit
/// status. Called first thing in `main`, before any thread or file.
pub fn run_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    let first = args.next()?;
    match first.to_str()? {
        #[cfg(target_os = "linux")]
        SUPERVISOR_ARG => Some(supervisor::supervise(args.next())),
        #[cfg(target_os = "linux")]
        HOLDER_ARG => Some(supervisor::hold()),
        _ => None,
    }
}
