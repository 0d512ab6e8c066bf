//! One prefix rule (`cargo test`): the words a simple command must start with, whole words.

use serde::{Deserialize, Serialize};

use crate::command_line::{self, SimpleCommand, Unreadable};

/// The words a simple command must start with to run without asking.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CommandRule {
    words: Vec<String>,
}

/// Why a text is not a rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// The text is not a plain command line.
    #[error("`{text}` is not a plain command prefix: {why}")]
    Unreadable {
        /// The text.
        text: String,
        /// What the command line reader said.
        why: Unreadable,
    },
    /// A word the shell would change (`$X`, `*`, `~`) cannot be matched.
    #[error("`{text}` holds `{word}`, which the shell changes before the command sees it")]
    Expands {
        /// The text.
        text: String,
        /// The word.
        word: String,
    },
    /// A rule from a config file holds more than one command.
    #[error("`{0}` holds more than one command; give each its own rule")]
    Several(String),
}

/// Commands that run their arguments as another command: a yes to their first word alone
/// would be a yes to anything, so their default prefix is the whole command.
const RUNS_ITS_ARGUMENTS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "fish", "env", "eval", "exec", "xargs", "sudo", "doas",
    "su", "command", "builtin", "nohup", "nice", "timeout", "time", "watch", "stdbuf", "setsid",
    "chroot", "unshare", "busybox",
];

impl CommandRule {
    /// The rule made of `words` (`None` when there are none).
    pub fn new(words: Vec<String>) -> Option<Self> {
        (!words.is_empty()).then_some(Self { words })
    }

    /// Its words.
    pub fn words(&self) -> &[String] {
        &self.words
    }

    /// Whether `command` starts with this rule's words, whole words, none of them one the
    /// shell changes.
    pub fn matches(&self, command: &SimpleCommand) -> bool {
        command.words.len() >= self.words.len()
            && self
                .words
                .iter()
                .zip(&command.words)
                .all(|(rule, word)| !word.expands && *rule == word.text)
    }

    /// The first of `parts` no one of `rules` matches (`None`: they cover the line, as the gate
    /// lets a line through).
    pub fn first_uncovered<'a>(
        rules: &[CommandRule],
        parts: &'a [SimpleCommand],
    ) -> Option<&'a SimpleCommand> {
        parts.iter().find(|p| !rules.iter().any(|r| r.matches(p)))
    }

    /// The prefix offered for "don't ask again" for `command`: its first two words, only the
    /// first when the second is a flag or a path; for an interpreter, up to its module or
    /// script (`python3 -m unittest`, `node scripts/test.js`); the whole command for one that
    /// runs its arguments (`sh -c`, `env`, `xargs`). Never past a word the shell changes.
    pub fn default_for(command: &SimpleCommand) -> Option<Self> {
        let plain: Vec<&str> = command
            .words
            .iter()
            .take_while(|w| !w.expands)
            .map(|w| w.text.as_str())
            .collect();
        let first = *plain.first()?;
        let take = if let Some(take) = interpreter_prefix(&plain) {
            take
        } else if RUNS_ITS_ARGUMENTS.contains(&base_name(first)) {
            plain.len()
        } else {
            match plain.get(1) {
                Some(second) if !is_flag_or_path(second) => 2,
                _ => 1,
            }
        };
        Self::new(plain[..take].iter().map(|w| w.to_string()).collect())
    }

    /// The rules written in `text` (`cargo test; git status`): one per simple command.
    pub fn parse_list(text: &str) -> Result<Vec<Self>, RuleError> {
        let parts = command_line::split(text).map_err(|why| RuleError::Unreadable {
            text: text.trim().to_string(),
            why,
        })?;
        parts
            .iter()
            .map(|part| {
                if let Some(word) = part.words.iter().find(|w| w.expands) {
                    return Err(RuleError::Expands {
                        text: text.trim().to_string(),
                        word: word.text.clone(),
                    });
                }
                Ok(Self {
                    words: part.words.iter().map(|w| w.text.clone()).collect(),
                })
            })
            .collect()
    }

    /// The one rule written in `text` (a config file's entry).
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let mut rules = Self::parse_list(text)?;
        match rules.len() {
            1 => Ok(rules.remove(0)),
            _ => Err(RuleError::Several(text.trim().to_string())),
        }
    }
}

impl std::fmt::Display for CommandRule {
    /// The words as a command line reads them back (quoted where needed).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let words: Vec<String> = self.words.iter().map(|w| command_line::quote(w)).collect();
        f.write_str(&words.join(" "))
    }
}

/// Rules written for showing and editing: `cargo test; git status`.
pub fn list_text(rules: &[CommandRule]) -> String {
    let texts: Vec<String> = rules.iter().map(ToString::to_string).collect();
    texts.join("; ")
}

/// Interpreters whose first word alone would be a yes to any program: their prefix runs to the
/// module (`-m unittest`) or the script they run. Names are matched without a version
/// (`python3.12`, `ruby3`).
const INTERPRETERS: &[&str] = &[
    "python", "pypy", "node", "nodejs", "ruby", "perl", "php", "deno", "bun", "lua", "Rscript",
    "julia", "tclsh", "bash", "sh", "zsh", "dash", "ksh",
];

/// Shells: given a flag first (`-c`), they keep their whole command (they run its argument).
const SHELLS: &[&str] = &["bash", "sh", "zsh", "dash", "ksh"];

/// How many of `words` (plain ones) an interpreter's prefix keeps (`None`: not an
/// interpreter): its flags up to and with the module after `-m` or the first other word (the
/// script, or the code after `-c` / `-e`), past a `run` / `x` of deno and bun.
fn interpreter_prefix(words: &[&str]) -> Option<usize> {
    let name = base_name(words.first()?).trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !INTERPRETERS.contains(&name) {
        return None;
    }
    if SHELLS.contains(&name) && words.get(1).is_some_and(|w| w.starts_with('-')) {
        return Some(words.len());
    }
    let mut i = 1;
    while let Some(word) = words.get(i) {
        i += 1;
        match *word {
            "-m" => return Some((i + 1).min(words.len())),
            "run" | "x" if i == 2 && matches!(name, "deno" | "bun") => {}
            flag if flag.starts_with('-') => {}
            _ => return Some(i),
        }
    }
    Some(words.len())
}

/// `/usr/bin/env` → `env`.
fn base_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether a second word is a flag (`-v`) or a path (`./x`, `src/a.rs`, `/tmp`): then the
/// first word alone is the prefix.
fn is_flag_or_path(word: &str) -> bool {
    word.starts_with('-') || word.starts_with('.') || word.starts_with('~') || word.contains('/')
}
