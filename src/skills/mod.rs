//! Skills in the Agent Skills format (the one Claude Code, Codex, Gemini CLI and goose read): a
//! folder holding a `SKILL.md` (front matter with `name` and `description`, then Markdown
//! instructions) and any files those instructions name.
//!
//! They are instructions, never code: the system prompt lists each skill's name and one-line
//! description, the `use_skill` tool hands the model a skill's instructions and its file list,
//! and the read tools may open those files read-only (`Skills::resolve_file`). Nothing of a
//! skill runs. Found, in this order, in `<config dir>/miniclaw/skills/`, `~/.agents/skills/`
//! and, once the folder MiniClaw starts in is trusted, its `.agents/skills/` (see `load`).

mod files;
mod load;

use std::path::{Path, PathBuf};

pub use files::{FileRefused, MAX_LISTED_FILES};
pub use load::{
    MAX_DESCRIPTION_CHARS, MAX_SKILL_BYTES, MAX_SKILLS, clean_description, default_sources, load,
};

/// Where a skill was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `<config dir>/miniclaw/skills/`: MiniClaw's own, the person's.
    User,
    /// `~/.agents/skills/`: the person's, shared with other agents.
    Shared,
    /// The project's `.agents/skills/` (only once the folder is trusted).
    Project,
}

impl Origin {
    /// How `/skills` names it.
    pub fn name(self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::Shared => "~/.agents",
            Origin::Project => "project",
        }
    }
}

/// A folder to look for skills in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Which kind it is.
    pub origin: Origin,
    /// The folder whose subfolders are skills.
    pub dir: PathBuf,
}

/// One skill, read at start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    /// Its name (from the front matter).
    pub name: String,
    /// Its description: one line, cleaned of control characters, capped.
    pub description: String,
    /// Where it was found.
    pub origin: Origin,
    /// Its folder's real path: the only place its files are read from.
    pub dir: PathBuf,
    /// Its instructions: the `SKILL.md` after the front matter.
    pub instructions: String,
}

/// Every skill found, first found first; the same for the whole session.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skills {
    list: Vec<Skill>,
}

impl Skills {
    /// These skills, in this order (names must differ: `load` sees to that).
    pub fn new(list: Vec<Skill>) -> Self {
        Self { list }
    }

    /// The skills, in the order found.
    pub fn iter(&self) -> impl Iterator<Item = &Skill> {
        self.list.iter()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.list.iter().find(|s| s.name == name)
    }

    /// What `/skill NAME [TEXT]` sends: to use the skill `name` (with `text`).
    pub fn use_prompt(name: &str, text: &str) -> String {
        let mut content = format!(
            "Use the skill `{name}`: call use_skill with the name \"{name}\" first, then follow \
             its instructions."
        );
        if !text.trim().is_empty() {
            content.push_str(&format!("\n\n{}", text.trim()));
        }
        content
    }

    /// The section of the system prompt that lists the skills (empty without any). It depends
    /// only on what was read at start, so it is the same from request to request and stays in
    /// the cacheable prefix.
    pub fn prompt_section(&self) -> String {
        if self.list.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "\n\n# Skills\n\nSkills are instructions for particular tasks. When a task matches a \
             skill, call use_skill with its name first and follow what it returns; a skill's \
             files are read with read_text_file, named by the skill's folder (the absolute \
             path use_skill gives) joined with the file's relative path.\n",
        );
        for skill in &self.list {
            text.push_str(&format!("\n- {}: {}", skill.name, skill.description));
        }
        text
    }

    /// The skill folder holding `path` (an absolute path as `use_skill` printed it) and the
    /// file's real path, if it is a file the read tools may open: inside that folder by its
    /// real path (no link leads out), no `..`, no `.env*` name.
    pub fn resolve_file(&self, path: &Path) -> Result<(&Skill, PathBuf), FileRefused> {
        files::resolve(&self.list, path)
    }

    /// The files of `skill`, as paths relative to its folder (at most [`MAX_LISTED_FILES`];
    /// whether there were more).
    pub fn files(skill: &Skill) -> (Vec<String>, bool) {
        files::list(&skill.dir)
    }
}

#[cfg(test)]
mod tests;
