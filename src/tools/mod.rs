//! The tools the model can call, each sandboxed to the workspace, and the registry that runs them.

pub mod args;
pub mod change;
pub mod confine;
pub mod error;
pub mod file_edit;
pub mod files;
pub mod hidden;
pub mod mcp;
pub mod observation;
pub mod panic_guard;
pub mod plugins;
pub mod process;
pub mod reach;
pub mod registry;
pub mod sandbox;
pub mod search;
pub mod shell;
pub mod snapshot;
pub mod subagent;
pub mod support;
pub mod time_calc;
pub mod toolbox;
pub mod web;
pub mod workspace_io;

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
