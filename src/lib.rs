//! MiniClaw: a terminal agent. A DeepSeek model reasons, calls sandboxed local tools and answers.
//!
//! Arrows point one way: `tui` and `headless` read `agent` events; `agent` uses `llm` and `tools`;
//! `tools` and `llm` know nothing of the screen.

pub mod agent;
pub mod approval;
pub(crate) mod capped_read;
pub mod command_line;
pub mod command_rules;
pub mod config;
pub mod custom_commands;
pub mod diff;
pub(crate) mod durable;
pub(crate) mod env_files;
pub mod events;
pub mod front_matter;
pub mod headless;
pub mod hooks;
pub mod jail;
pub mod llm;
pub mod logging;
pub mod paths;
pub mod remembered;
pub mod secrets;
pub mod settings;
pub mod skills;
pub mod startup;
pub mod terminal_text;
pub mod tools;
pub mod transcript;
pub mod trust;
pub mod tui;
