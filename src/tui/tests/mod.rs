//! Tests of the UI from inside the crate, where its internals are visible.

mod approval;
mod command_approval;
mod commands_jobs;
mod common;
mod compaction;
mod conversation;
mod costs;
mod help;
mod hostile;
mod inline_results;
mod key_dialog;
mod keys;
mod look_and_keys;
mod markdown;
mod plan;
mod popups;
mod providers;
mod queue;
mod reasoning;
mod sessions;
mod side_panes;
mod skills_commands;
mod small_screens;
mod snapshots;
mod support;
mod tables;
