//! `[hooks]`: commands the person runs at fixed points of a session, in Claude Code's nesting
//! written as TOML, so a `settings.json` block translates line by line:
//!
//! ```toml
//! [[hooks.PreToolUse]]
//! matcher = "write_text_file|run_command"
//! hooks = [{ type = "command", command = "python3 ~/hooks/guard.py", timeout = 30 }]
//! ```
//!
//! Read from the person's `config.toml` and from a trusted project's `miniclaw.toml` (the
//! tools can write neither).

use std::time::Duration;

use serde::Deserialize;

use super::mcp::Origin;

/// How long a hook may run, unless its entry says otherwise.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest timeout an entry may ask for.
const MAX_HOOK_TIMEOUT_SECS: f64 = 3600.0;
/// The most hooks one file may configure: far past real use, short of a planted flood.
const MAX_HOOKS_PER_FILE: usize = 64;

/// When a hook runs (Claude Code's names).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum HookEvent {
    /// Before a tool call; it may block the call.
    PreToolUse,
    /// After a tool call; it may add a note for the model.
    PostToolUse,
    /// When a prompt is submitted; it may add context or block the prompt.
    UserPromptSubmit,
    /// When a turn ends with an answer; it may ask the model to go on.
    Stop,
    /// When MiniClaw needs the person (an approval, a turn that ended).
    Notification,
    /// When a session starts, is resumed or cleared; it may add context.
    SessionStart,
}

impl HookEvent {
    /// Every event, in the order `/hooks` lists them.
    pub const ALL: [HookEvent; 6] = [
        Self::SessionStart,
        Self::UserPromptSubmit,
        Self::PreToolUse,
        Self::PostToolUse,
        Self::Notification,
        Self::Stop,
    ];

    /// The name in the settings file and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            Self::PreToolUse => "PreToolUse",
            Self::PostToolUse => "PostToolUse",
            Self::UserPromptSubmit => "UserPromptSubmit",
            Self::Stop => "Stop",
            Self::Notification => "Notification",
            Self::SessionStart => "SessionStart",
        }
    }

    fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What its matcher is matched against (`None`: it has none).
    pub fn matches_on(self) -> Option<&'static str> {
        match self {
            Self::PreToolUse | Self::PostToolUse => Some("the tool's name"),
            Self::SessionStart => Some("how the session started (startup, resume, clear)"),
            Self::Notification => Some("the notification's type"),
            Self::UserPromptSubmit | Self::Stop => None,
        }
    }
}

/// One configured hook command.
#[derive(Clone, Debug, PartialEq)]
pub struct HookEntry {
    /// When it runs.
    pub event: HookEvent,
    /// The regular expression its group selects with, as written (`None`, empty or `*`: all).
    pub matcher: Option<String>,
    /// The shell command (run with `sh -c`).
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// The file it comes from.
    pub origin: Origin,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupIn {
    #[serde(default)]
    matcher: Option<String>,
    hooks: Vec<CommandIn>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CommandIn {
    #[serde(rename = "type")]
    kind: String,
    command: Option<String>,
    timeout: Option<f64>,
}

/// Parses a `[hooks]` table: the entries it holds, in file order, and a warning for each one
/// skipped.
pub fn parse_table(value: &toml::Value, origin: &Origin) -> (Vec<HookEntry>, Vec<String>) {
    let file = origin.file.display();
    let mut entries = Vec::new();
    let mut warnings = Vec::new();
    let Some(table) = value.as_table() else {
        return (entries, vec![format!("{file}: [hooks] must be a table")]);
    };
    for (name, groups) in table {
        let Some(event) = HookEvent::from_name(name) else {
            let known: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
            warnings.push(format!(
                "{file}: [hooks.{name}] is skipped: the events are {}",
                known.join(", ")
            ));
            continue;
        };
        let groups: Vec<GroupIn> = match groups.clone().try_into() {
            Ok(groups) => groups,
            Err(e) => {
                warnings.push(format!("{file}: [[hooks.{name}]] is skipped: {e}"));
                continue;
            }
        };
        for mut group in groups {
            // Claude Code's "match everything": no matcher at all.
            group.matcher = group.matcher.filter(|m| !m.is_empty() && m != "*");
            if let Some(matcher) = &group.matcher
                && let Err(e) = regex::Regex::new(&anchored(matcher))
            {
                warnings.push(format!(
                    "{file}: [[hooks.{name}]] matcher `{matcher}` is skipped: not a regular expression ({e})"
                ));
                continue;
            }
            for hook in group.hooks {
                match entry(event, group.matcher.clone(), hook, origin) {
                    Ok(e) if entries.len() < MAX_HOOKS_PER_FILE => entries.push(e),
                    Ok(_) => {
                        warnings.push(format!(
                            "{file}: more than {MAX_HOOKS_PER_FILE} hooks; the rest are skipped"
                        ));
                        return (entries, warnings);
                    }
                    Err(why) => warnings.push(format!("{file}: a {name} hook is skipped: {why}")),
                }
            }
        }
    }
    (entries, warnings)
}

fn entry(
    event: HookEvent,
    matcher: Option<String>,
    hook: CommandIn,
    origin: &Origin,
) -> Result<HookEntry, String> {
    if hook.kind != "command" {
        return Err(format!(
            "type `{}` is not one MiniClaw runs (only `command`)",
            hook.kind
        ));
    }
    let command = hook
        .command
        .filter(|c| !c.trim().is_empty())
        .ok_or("it has no `command`")?;
    let timeout = match hook.timeout {
        None => DEFAULT_HOOK_TIMEOUT,
        Some(t) if t > 0.0 && t <= MAX_HOOK_TIMEOUT_SECS => Duration::from_secs_f64(t),
        Some(t) => {
            return Err(format!(
                "timeout {t} is not between 0 and {MAX_HOOK_TIMEOUT_SECS} seconds"
            ));
        }
    };
    Ok(HookEntry {
        event,
        matcher,
        command,
        timeout,
        origin: origin.clone(),
    })
}

impl HookEntry {
    /// The paths inside `workspace` (canonical, where hooks run) that the command names, as a
    /// shell would read its words: `$CLAUDE_PROJECT_DIR` and `$MINICLAW_PROJECT_DIR` (plain,
    /// braced or quoted) are the workspace, words are split at spaces and at `;`, `&`, `|`,
    /// `(`, `)`, `<` and `>`, quotes are taken off, options are left out. A path that does not
    /// exist yet counts too: a script the model writes later must not run either. Lexical (the
    /// shell's other expansions are not followed): what a hook runs indirectly (a project's
    /// tooling and its configuration) is not named here, which the README says.
    pub fn named_paths(&self, workspace: &std::path::Path) -> Vec<std::path::PathBuf> {
        named_paths(&self.command, workspace)
    }
}

/// See [`HookEntry::named_paths`].
pub fn named_paths(command: &str, workspace: &std::path::Path) -> Vec<std::path::PathBuf> {
    use std::path::{Component, PathBuf};
    let root = workspace.to_string_lossy();
    let mut text = command.to_string();
    for var in ["CLAUDE_PROJECT_DIR", "MINICLAW_PROJECT_DIR"] {
        text = text
            .replace(&format!("${{{var}}}"), &root)
            .replace(&format!("${var}"), &root);
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for word in shell_words(&text) {
        let joined = workspace.join(&word);
        // Lexically inside the workspace, without `..` climbing out.
        let mut parts = PathBuf::new();
        let mut inside = true;
        for c in joined.components() {
            match c {
                Component::ParentDir => inside &= parts.pop(),
                Component::CurDir => {}
                other => parts.push(other.as_os_str()),
            }
        }
        let path = parts.canonicalize().unwrap_or(parts);
        if inside && path.starts_with(workspace) && path != workspace && !out.contains(&path) {
            out.push(path);
        }
    }
    out
}

/// The words of a shell command that may name what it runs: split at spaces and at `;`, `&`,
/// `|`, `(`, `)` and `<`, quotes taken off; options, assignments and what output goes to
/// (after `>` or `>>`: a log the hook writes is no script) left out.
fn shell_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut output = false;
    let end = |word: &mut String, output: &mut bool, words: &mut Vec<String>| {
        if !word.is_empty() {
            if !*output && !word.starts_with('-') && !word.contains('=') {
                words.push(std::mem::take(word));
            }
            word.clear();
            *output = false;
        }
    };
    for c in text.chars() {
        match c {
            '"' | '\'' => {}
            '>' => {
                // `2>file`: the descriptor is no word of its own.
                if word.chars().all(|c| c.is_ascii_digit() || c == '&') {
                    word.clear();
                }
                end(&mut word, &mut output, &mut words);
                output = true;
            }
            c if c.is_whitespace() || ";&|()<".contains(c) => {
                end(&mut word, &mut output, &mut words)
            }
            c => word.push(c),
        }
    }
    end(&mut word, &mut output, &mut words);
    words
}

/// A matcher as a regular expression over the whole name: `Edit` is `Edit`, not `NotebookEdit`.
pub fn anchored(matcher: &str) -> String {
    format!("^(?:{matcher})$")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Scope;

    fn parse(text: &str) -> (Vec<HookEntry>, Vec<String>) {
        let table: toml::Table = toml::from_str(text).unwrap();
        let origin = Origin {
            file: "config.toml".into(),
            scope: Scope::User,
        };
        parse_table(&table["hooks"], &origin)
    }

    #[test]
    fn the_paths_a_command_names_are_found_as_a_shell_splits_its_words() {
        let ws = std::path::Path::new("/nonexistent-ws");
        let found = named_paths(
            r#""$CLAUDE_PROJECT_DIR"/.claude/hooks/check.sh; cd tools && ./fmt.sh --fix 2>>err.txt|cat >${MINICLAW_PROJECT_DIR}/log.txt; python3 -m x /etc/passwd ../up.sh"#,
            ws,
        );
        let names: Vec<String> = found
            .iter()
            .map(|p| p.strip_prefix(ws).unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            names.contains(&".claude/hooks/check.sh".to_string()),
            "{names:?}"
        );
        assert!(
            names.contains(&"fmt.sh".to_string()) || names.contains(&"tools".to_string()),
            "{names:?}"
        );
        assert!(
            !names.contains(&"log.txt".to_string()),
            "an output is no script: {names:?}"
        );
        assert!(
            !names
                .iter()
                .any(|n| n.contains("passwd") || n.contains("up.sh")),
            "{names:?}"
        );
        assert!(
            !names
                .iter()
                .any(|n| n.starts_with('-') || n.contains("err")),
            "{names:?}"
        );
    }

    #[test]
    fn claude_codes_nesting_reads_line_by_line_and_bad_entries_are_said() {
        let (entries, warnings) = parse(
            r#"
            [[hooks.PreToolUse]]
            matcher = "write_text_file|run_command"
            hooks = [{ type = "command", command = "python3 ~/hooks/guard.py", timeout = 30 }]

            [[hooks.PreToolUse]]
            matcher = "*"
            hooks = [{ type = "command", command = "log.sh" }, { type = "prompt", command = "x" }]

            [[hooks.Stop]]
            hooks = [{ type = "command", command = "notify-send done", timeout = 99999 }]

            [[hooks.SessionEnd]]
            hooks = [{ type = "command", command = "x" }]

            [[hooks.PostToolUse]]
            matcher = "(unclosed"
            hooks = [{ type = "command", command = "x" }]
            "#,
        );
        assert_eq!(entries.len(), 2, "{entries:?}");
        assert_eq!(entries[0].event, HookEvent::PreToolUse);
        assert_eq!(
            entries[0].matcher.as_deref(),
            Some("write_text_file|run_command")
        );
        assert_eq!(entries[0].timeout, Duration::from_secs(30));
        assert_eq!(entries[1].matcher, None, "`*` matches every tool");
        assert_eq!(entries[1].timeout, DEFAULT_HOOK_TIMEOUT);
        let all = warnings.join("\n");
        assert!(all.contains("type `prompt`"), "{all}");
        assert!(all.contains("timeout 99999"), "{all}");
        assert!(all.contains("[hooks.SessionEnd] is skipped"), "{all}");
        assert!(all.contains("not a regular expression"), "{all}");
    }
}
