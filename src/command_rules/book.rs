//! The rules in force for one workspace: the project's (kept by MiniClaw outside it) and the
//! person's `config.toml`'s, shared by the approval gate (which reads and adds) and the UI
//! (`/permissions` lists and removes).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::CommandRule;
use crate::command_line::SimpleCommand;

/// A rule of the person's `config.toml`, and that file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConfigRule {
    /// The rule.
    pub rule: CommandRule,
    /// The file it is written in.
    pub file: PathBuf,
}

/// A rule as `/permissions` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Listed {
    /// Made in this project (removable).
    Project(CommandRule),
    /// Written in the person's config file (removed by editing it).
    Config(ConfigRule),
}

impl Listed {
    /// The rule.
    pub fn rule(&self) -> &CommandRule {
        match self {
            Self::Project(rule) => rule,
            Self::Config(c) => &c.rule,
        }
    }
}

/// Why a change of the project's rules was not kept.
#[derive(Debug, thiserror::Error)]
pub enum RulesError {
    /// No place outside the project to keep it.
    #[error(
        "MiniClaw has no data folder outside this project to keep it in, so it holds for this session only"
    )]
    NoStore,
    /// The records could not be written.
    #[error("the folder records could not be written ({0})")]
    Io(#[from] std::io::Error),
}

#[derive(Debug, Default)]
struct Book {
    project: Vec<CommandRule>,
    config: Vec<ConfigRule>,
}

/// The rules in force for one workspace.
#[derive(Debug)]
pub struct CommandRules {
    /// The workspace: the key of its records, and where its commands run.
    folder: PathBuf,
    /// The per-folder records' file (`None`: nothing is kept across runs).
    store: Option<PathBuf>,
    book: Mutex<Book>,
}

impl CommandRules {
    /// No rules, nothing kept (tests, sub-agents, a start without a data folder).
    pub fn empty(folder: &Path) -> Self {
        Self {
            folder: folder.to_path_buf(),
            store: None,
            book: Mutex::new(Book::default()),
        }
    }

    /// The rules for `folder`: the project's from the records at `store`, and `config` (each
    /// entry's text and its file). Returns a warning for each entry that is not a rule, and
    /// when the records lie inside the workspace (then they are not used: what the model or
    /// a repository can write never lets a command through).
    pub fn load(
        store: Option<PathBuf>,
        folder: &Path,
        config: &[(String, PathBuf)],
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut book = Book::default();
        for (text, file) in config {
            match CommandRule::parse(text) {
                Ok(rule) => book.config.push(ConfigRule {
                    rule,
                    file: file.clone(),
                }),
                Err(e) => warnings.push(format!(
                    "{}: [commands] allow: {e}; this entry was skipped.",
                    file.display()
                )),
            }
        }
        let store = match store {
            Some(store) if inside(&store, folder) => {
                warnings.push(format!(
                    "MiniClaw's folder records ({}) lie inside the workspace, where the tools can \
                     write: the command rules kept there are not used, and none are kept this run.",
                    store.display()
                ));
                None
            }
            other => other,
        };
        if let Some(store) = &store {
            book.project = super::stored::load(store, folder);
        }
        let rules = Self {
            folder: folder.to_path_buf(),
            store,
            book: Mutex::new(book),
        };
        (rules, warnings)
    }

    /// The workspace.
    pub fn folder(&self) -> &Path {
        &self.folder
    }

    /// Whether every one of `parts` starts with some rule's words.
    pub fn covers(&self, parts: &[SimpleCommand]) -> bool {
        self.covering(parts).is_some()
    }

    /// The rules that let `parts` through, the first that matches each part, each once
    /// (`None`: some part matches none).
    pub fn covering(&self, parts: &[SimpleCommand]) -> Option<Vec<CommandRule>> {
        let book = self.book.lock().ok()?;
        let rules: Vec<&CommandRule> = book
            .project
            .iter()
            .chain(book.config.iter().map(|c| &c.rule))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let mut used: Vec<CommandRule> = Vec::new();
        for part in parts {
            let rule = rules.iter().find(|r| r.matches(part))?;
            if !used.contains(rule) {
                used.push((*rule).clone());
            }
        }
        Some(used)
    }

    /// Every rule: the project's first, then the config file's.
    pub fn list(&self) -> Vec<Listed> {
        let Ok(book) = self.book.lock() else {
            return Vec::new();
        };
        book.project
            .iter()
            .cloned()
            .map(Listed::Project)
            .chain(book.config.iter().cloned().map(Listed::Config))
            .collect()
    }

    /// Adds `rules` to the project's for this run (each once); [`Self::save_added`] keeps them.
    pub fn add(&self, rules: &[CommandRule]) {
        if let Ok(mut book) = self.book.lock() {
            for rule in rules {
                if !book.project.contains(rule) {
                    book.project.push(rule.clone());
                }
            }
        }
    }

    /// Keeps `rules` in the records (a file write under a lock: call off the async runtime).
    pub fn save_added(&self, rules: &[CommandRule]) -> Result<(), RulesError> {
        let store = self.store.as_ref().ok_or(RulesError::NoStore)?;
        super::stored::add(store, &self.folder, rules)?;
        Ok(())
    }

    /// Removes `rule` from the project's for this run; whether it was one.
    /// [`Self::save_forgotten`] removes it from the records.
    pub fn forget(&self, rule: &CommandRule) -> bool {
        let Ok(mut book) = self.book.lock() else {
            return false;
        };
        let before = book.project.len();
        book.project.retain(|r| r != rule);
        book.project.len() != before
    }

    /// Removes `rule` from the records (a file write: call off the async runtime).
    pub fn save_forgotten(&self, rule: &CommandRule) -> Result<(), RulesError> {
        let store = self.store.as_ref().ok_or(RulesError::NoStore)?;
        super::stored::forget(store, &self.folder, rule)?;
        Ok(())
    }
}

/// Whether `store` lies inside `folder` (both resolved as far as they exist).
fn inside(store: &Path, folder: &Path) -> bool {
    let folder = crate::remembered::folders::canonical(folder);
    // The file may not exist yet: its nearest existing folder decides.
    let mut probe = store.to_path_buf();
    let resolved = loop {
        if let Ok(real) = std::fs::canonicalize(&probe) {
            break real;
        }
        if !probe.pop() {
            break std::path::absolute(store).unwrap_or_else(|_| store.to_path_buf());
        }
    };
    resolved.starts_with(&folder)
}
