//! The tools the model can call, each sandboxed to the workspace, and the registry that runs them.

pub(crate) mod args;
pub(crate) mod change;
pub mod command;
pub mod confine;
pub(crate) mod error;
pub mod file_edit;
pub mod files;
pub(crate) mod hidden;
pub mod kept_changes;
pub mod mcp;
pub(crate) mod observation;
pub mod panic_guard;
pub mod plugins;
pub mod process;
pub(crate) mod reach;
pub mod registry;
pub(crate) mod sandbox;
pub(crate) mod search;
pub mod shell;
pub mod shown;
pub mod skill;
pub(crate) mod snapshot;
pub mod subagent;
pub(crate) mod support;
pub(crate) mod time_calc;
pub mod toolbox;
pub mod web;
pub(crate) mod workspace_io;

pub use kept_changes::ChangeKeeper;
pub use registry::{
    Delegator, SubOutcome, SubTask, Tool, ToolContext, ToolError, ToolFuture, ToolProvider,
    ToolRegistry, ToolSource,
};
pub use sandbox::{ChangeWatcher, Sandbox, SandboxError};

/// The registry with every built-in tool of the workspace.
pub fn builtin_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    files::register(&mut registry);
    file_edit::register(&mut registry);
    search::register(&mut registry);
    time_calc::register(&mut registry);
    registry
}
