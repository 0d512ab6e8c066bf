//! `[run_command]` of the person's `config.toml`: the jail's limits and what it may also read.
//! Only the person's own file counts: a project's `miniclaw.toml` that widens the jail is a
//! cloned repository choosing its own sandbox, so there the table is ignored with a warning.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::expand::expand_vars;
use super::mcp::{Origin, Scope};

/// The `[run_command]` settings (every field optional; defaults in `tools::command`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunCommandSettings {
    /// The timeout of a call that gives none, seconds.
    pub timeout_sec: Option<u64>,
    /// The longest timeout a call may ask for, seconds.
    pub max_timeout_sec: Option<u64>,
    /// Writable memory per process, MB.
    pub memory_mb: Option<u64>,
    /// The largest file a command may write, MB.
    pub file_mb: Option<u64>,
    /// How many processes a command (with the session's jobs) may run at once.
    pub processes: Option<u64>,
    /// How many background jobs may run at once.
    pub max_jobs: Option<usize>,
    /// How many workspace entries are looked at before and after each command (a larger
    /// workspace is refused: it cannot be shielded whole).
    pub max_entries: Option<usize>,
    /// Whether the ready list of toolchain folders (cargo, rustup, pyenv, nvm, npm's and pip's
    /// caches) may be read (default: yes).
    pub toolchains: Option<bool>,
    /// More folders or files outside the workspace commands may read and run (`~` and `$VAR`
    /// expanded).
    #[serde(default)]
    pub read: Vec<String>,
    /// More environment variables for commands.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
}

impl RunCommandSettings {
    /// The extra read paths, expanded (`~`, `$VAR`); one that does not expand is skipped with a
    /// warning.
    pub fn read_paths(&self, warnings: &mut Vec<String>) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let lookup = |name: &str| std::env::var(name).ok();
        for raw in &self.read {
            let text = match expand_vars(raw, &lookup) {
                Ok(text) => text,
                Err(missing) => {
                    warnings.push(format!(
                        "[run_command] read `{raw}` names unset variables ({}): skipped",
                        missing.join(", ")
                    ));
                    continue;
                }
            };
            let home = lookup("HOME").map(PathBuf::from);
            match (text.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => out.push(home.join(rest)),
                _ if text.starts_with('/') => out.push(PathBuf::from(text)),
                _ => warnings.push(format!(
                    "[run_command] read `{raw}` is not an absolute path: skipped"
                )),
            }
        }
        out
    }
}

/// Parses the table from the file of `origin`; `None` (with the warning) for a project's file
/// or a broken table.
pub fn parse(value: &toml::Value, origin: &Origin) -> (Option<RunCommandSettings>, Vec<String>) {
    if origin.scope == Scope::Project {
        return (
            None,
            vec![format!(
                "{}: [run_command] is ignored here: what the jail allows is set only in your own \
                 config.toml, never by a project",
                origin.file.display()
            )],
        );
    }
    match value.clone().try_into::<RunCommandSettings>() {
        Ok(settings) => (Some(settings), Vec::new()),
        Err(e) => (
            None,
            vec![format!("{}: [run_command]: {e}", origin.file.display())],
        ),
    }
}
