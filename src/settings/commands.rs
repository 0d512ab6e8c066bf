//! `[commands]`: the person's own prefix rules for `run_command` (`allow = ["cargo test"]`).
//! Read from the user's `config.toml` only: in a project's `miniclaw.toml` the table is
//! ignored with a warning, so a cloned repository cannot let its own commands run unasked.

use std::path::{Path, PathBuf};

use super::Scope;

/// One `allow` entry: the rule's text as written, and its file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedCommand {
    /// The rule as written (`cargo test`); read into words by `command_rules`.
    pub text: String,
    /// The file it is written in.
    pub file: PathBuf,
}

/// The `allow` entries of a `[commands]` table read from `file`, and a warning for each
/// problem.
pub fn parse_table(
    value: &toml::Value,
    file: &Path,
    scope: Scope,
) -> (Vec<AllowedCommand>, Vec<String>) {
    let shown = file.display();
    if scope == Scope::Project {
        return (
            Vec::new(),
            vec![format!(
                "{shown}: [commands] was ignored: command rules are read only from your own \
                 config.toml, so a project's files cannot let its commands run without asking."
            )],
        );
    }
    let Some(table) = value.as_table() else {
        return (
            Vec::new(),
            vec![format!(
                "{shown}: [commands] must be a table; it was skipped."
            )],
        );
    };
    let mut warnings = Vec::new();
    for key in table.keys().filter(|k| k.as_str() != "allow") {
        warnings.push(format!("{shown}: [commands]: unknown key `{key}` ignored."));
    }
    let Some(allow) = table.get("allow") else {
        return (Vec::new(), warnings);
    };
    let Some(list) = allow.as_array() else {
        warnings.push(format!(
            "{shown}: [commands] allow must be a list of strings (allow = [\"cargo test\"]); it was skipped."
        ));
        return (Vec::new(), warnings);
    };
    let mut allowed = Vec::new();
    for entry in list {
        match entry.as_str() {
            Some(text) => allowed.push(AllowedCommand {
                text: text.to_string(),
                file: file.to_path_buf(),
            }),
            None => warnings.push(format!(
                "{shown}: [commands] allow: `{entry}` is not a string; it was skipped."
            )),
        }
    }
    (allowed, warnings)
}
