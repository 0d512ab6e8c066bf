//! `[context]` and `[deepseek]` of the person's `config.toml`: when a long session is compacted,
//! and how hard the pro preset thinks. Only the person's own file counts: a cloned project has no
//! say in what its sessions cost.

use serde::Deserialize;

use super::mcp::{Origin, Scope};

/// The `[context]` settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContextSettings {
    /// The share of the context budget (percent) a request may reach before the session is
    /// compacted; 0 turns automatic compaction off.
    pub compact_at: Option<u8>,
}

/// The `[deepseek]` settings.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeepSeekSettings {
    /// The pro preset's `reasoning_effort`: `high` (the default) or `max`.
    pub reasoning_effort: Option<String>,
}

/// Parses the table `name` of a user's file into `T`; `None` (with the warning) for a project's
/// file, a broken table or a value `check` refuses.
pub fn parse_user_table<T: serde::de::DeserializeOwned>(
    name: &str,
    value: &toml::Value,
    origin: &Origin,
    check: impl Fn(&T) -> Result<(), String>,
) -> (Option<T>, Vec<String>) {
    let file = origin.file.display();
    if origin.scope == Scope::Project {
        return (
            None,
            vec![format!(
                "{file}: [{name}] is ignored here: it is set only in your own config.toml, never by a project"
            )],
        );
    }
    match value.clone().try_into::<T>() {
        Ok(settings) => match check(&settings) {
            Ok(()) => (Some(settings), Vec::new()),
            Err(why) => (None, vec![format!("{file}: [{name}]: {why}")]),
        },
        Err(e) => (None, vec![format!("{file}: [{name}]: {e}")]),
    }
}

/// Checks `[context]`: a share past 100% would never compact.
pub fn check_context(s: &ContextSettings) -> Result<(), String> {
    match s.compact_at {
        Some(p) if p > 100 => Err(format!(
            "compact_at is a percent of the context budget, 0 to 100 (it is {p})"
        )),
        _ => Ok(()),
    }
}

/// Checks `[deepseek]`: only the efforts DeepSeek knows.
pub fn check_deepseek(s: &DeepSeekSettings) -> Result<(), String> {
    match s.reasoning_effort.as_deref() {
        Some(e) if !matches!(e.trim().to_ascii_lowercase().as_str(), "high" | "max") => {
            Err(format!("reasoning_effort is `high` or `max` (it is `{e}`)"))
        }
        _ => Ok(()),
    }
}
