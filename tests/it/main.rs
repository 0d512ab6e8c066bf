//! The integration tests, one crate: one module per area, sharing `tests/support/`. One test
//! binary links after a change instead of one per file. (`tests/search_many_folders.rs` stays
//! its own binary: it lowers the process's file-descriptor limit, which every test in the same
//! process would share.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails loudly at any surprise.

#[path = "../support/headless.rs"]
mod headless_bin;
#[path = "../support/mcp.rs"]
mod mcp;
#[path = "../support/pty.rs"]
mod pty;
#[path = "../support/mod.rs"]
mod support;

mod agent_mentions;
mod agent_turn;
mod agents_md_config;
mod approvals;
mod command_e2e;
mod command_jail;
mod command_undo;
mod compaction;
mod compaction_e2e;
mod faults;
mod headless_agents_md;
mod headless_approval;
mod headless_costs;
mod headless_e2e;
mod headless_folder;
mod headless_hostile;
mod headless_plan;
mod headless_project;
mod headless_scripts;
mod headless_sessions;
mod headless_stream;
mod history_durability;
mod history_journal;
mod hooks;
mod hooks_e2e;
mod llm_client;
mod llm_direct_hostile;
mod llm_fixtures;
mod llm_key;
mod llm_sse_props;
mod mcp_hub;
mod mcp_project;
mod mcp_servers;
mod mcp_tui;
mod nested_agents_md;
mod own_folders_hidden;
mod plan;
mod planted_files_hostile;
mod project_env_hostile;
mod providers;
mod queued;
mod real_model;
mod sandbox_hostile;
mod shared_folder;
mod skills_commands;
mod text_protocol;
mod text_protocol_props;
mod tool_args_props;
mod tool_panics;
mod tool_schemas;
mod toolbox_plugins;
mod toolbox_shell;
mod toolbox_subagent;
mod toolbox_web;
mod tools_files;
mod tools_sandbox;
mod tools_search;
mod tools_time_calc;
mod transcript_replay;
mod trust_changes;
mod tui_approvals;
mod tui_e2e;
mod tui_folder;
mod tui_interrupt;
mod tui_key;
mod tui_keys;
mod tui_opening;
mod tui_plan;
mod tui_retry;
mod tui_screen;
mod tui_step_limit;
mod undo;
mod workspace_secrets;

/// proptest's configuration for `cases` cases (`PROPTEST_CASES` in the environment asks for
/// more), a failing case saved in (and re-run from) the `.proptest-regressions` file next to the
/// test's source file. (proptest's default would look in `tests/proptest-regressions/`, as this
/// folder holds a `main.rs`.)
fn proptest_config(cases: u32) -> proptest::test_runner::Config {
    use proptest::test_runner::{Config, FileFailurePersistence};
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(cases);
    Config {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..Config::with_cases(cases)
    }
}
