//! The command rules made in a project ("don't ask again for `cargo test`"), kept in the
//! per-folder records (`<data dir>/folders.json`, under their lock, keyed by the folder's
//! canonical path): outside the project, where neither the model nor a cloned repository
//! writes.

use std::path::Path;

use super::CommandRule;
use crate::remembered::folders;

/// The rules kept for `folder` in the records at `store` (none when the file is missing or
/// damaged; the start already said so; a kept entry that is no rule is skipped).
pub fn load(store: &Path, folder: &Path) -> Vec<CommandRule> {
    folders::load(store, folder)
        .0
        .command_rules
        .into_iter()
        .filter_map(CommandRule::new)
        .collect()
}

/// Adds `rules` to `folder`'s (each once), keeping what another MiniClaw added meanwhile.
pub fn add(store: &Path, folder: &Path, rules: &[CommandRule]) -> std::io::Result<()> {
    folders::remember(store, folder, |record| {
        for rule in rules {
            let words = rule.words().to_vec();
            if !record.command_rules.contains(&words) {
                record.command_rules.push(words);
            }
        }
    })
    .map(|_| ())
}

/// Removes `rule` from `folder`'s.
pub fn forget(store: &Path, folder: &Path, rule: &CommandRule) -> std::io::Result<()> {
    folders::remember(store, folder, |record| {
        record
            .command_rules
            .retain(|words| words.as_slice() != rule.words());
    })
    .map(|_| ())
}
