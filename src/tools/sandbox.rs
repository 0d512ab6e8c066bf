//! The workspace sandbox: every path a tool takes must stay inside the workspace.
//!
//! Rules, cheapest first (lexical checks need no system call):
//! 1. the path is not over-long (4096 bytes) and holds no NUL byte;
//! 2. it is relative: no leading `/` or `\`, no Windows drive (`C:`) or UNC/verbatim prefix;
//! 3. no `..` component (`\` counts as a separator too, so `..\x` is caught);
//! 4. its real path — symlinks followed; for a path that does not exist yet, that of its deepest
//!    existing ancestor — is inside the workspace's real path, and it does not go through a
//!    dangling symbolic link;
//! 5. writes only: it names a file (not the root), not the history file `history.json` or
//!    its siblings `history.json.*` (temporary and corrupt copies), no part of it is a name
//!    that MiniClaw, a later MiniClaw started in a subfolder, or git loads as configuration or
//!    code (`.env*`, `tools_plugins`, `miniclaw.toml`, `.mcp.json`, `.miniclaw`, `.agents`,
//!    `.git`), or
//!    that an interpreter loads unasked (`.venv`, `venv`, `node_modules`, `site-packages`,
//!    `__pycache__`, any `*.pth`), in any case, and it goes through no symbolic link at all.
//!
//! Reads (and listings, searches) also refuse what `hidden` hides — `.env*` at any depth and
//! MiniClaw's own files at the root — by the path as given and by its real path, so a link to
//! `.env` is refused too.
//!
//! `""` and `"."` mean the workspace root for reads. These checks explain a refusal; the
//! guarantee comes from `workspace_io`, which opens every path relative to a handle on the
//! root in one step (so a folder swapped for a link after the check cannot lead out).

use std::ffi::OsStr;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use cap_std::ambient_authority;
use cap_std::fs::Dir;

use super::hidden::{self, Hidden};
// The conversation history, which tools may not write.
use crate::paths::HISTORY_FILE as HISTORY_NAME;

/// The longest path accepted, in bytes.
pub const MAX_PATH_BYTES: usize = 4096;

/// Rule: MiniClaw's configuration.
const RULE_CONFIG: &str = "files that MiniClaw, git or an interpreter load as configuration or code (.env*, tools_plugins/, miniclaw.toml, .mcp.json, .miniclaw/, .agents/ (skills and slash commands), .claude/, .git/, .venv/, venv/, node_modules/, site-packages/, __pycache__/, *.pth, the config folder) cannot be written by tools";
/// Rule: writes never follow links.
const RULE_WRITE_LINK: &str =
    "it goes through a symbolic link; writes take the real path, without links";

/// Rule: over-long paths.
const RULE_TOO_LONG: &str = "paths longer than 4096 bytes are not allowed";
/// Rule: NUL bytes.
const RULE_NUL: &str = "NUL bytes are not allowed in paths";
/// Rule: absolute paths.
const RULE_ABSOLUTE: &str = "absolute paths are not allowed; use a path relative to the workspace";
/// Rule: Windows prefixes.
const RULE_WINDOWS: &str = "Windows drive or UNC prefixes are not allowed";
/// Rule: parent components.
const RULE_PARENT: &str = "`..` is not allowed";
/// Rule: symlinks leading out.
const RULE_SYMLINK_OUT: &str = "it leads outside the workspace through a symbolic link";
/// Rule: dangling symlinks.
const RULE_DANGLING: &str = "it goes through a symbolic link whose target does not exist";
/// Rule: writes need a file.
const RULE_ROOT_WRITE: &str = "a file path is required; the workspace root cannot be written";
/// Rule: the history file.
const RULE_HISTORY: &str = "the history file is managed by MiniClaw and cannot be changed by tools";

/// Why a path was refused; the text names the rule.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SandboxError {
    /// A rule refused the path.
    #[error("path `{path}` refused: {rule}")]
    Refused {
        /// The path as given.
        path: String,
        /// The rule that refused it.
        rule: String,
    },
    /// The workspace itself is unusable.
    #[error("workspace error: {0}")]
    Workspace(String),
}

/// Names refused at any depth for writes (compared in ASCII lower case): what MiniClaw, a later
/// MiniClaw started in a subfolder, or git would load as configuration or run as code, and the
/// interpreter environments and dependency folders whose files a Python or Node program (a
/// project MCP server) loads without naming them. `.agents` holds skills and slash commands
/// (instructions a later session obeys), so a model cannot plant its own.
const CONFIG_NAMES: [&str; 12] = [
    "tools_plugins",
    "miniclaw.toml",
    ".mcp.json",
    ".miniclaw",
    ".agents",
    // Claude Code's settings and hook scripts (`.claude/hooks/`), which a hook may run.
    ".claude",
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "site-packages",
    "__pycache__",
];

/// Suffixes refused at any depth for writes (ASCII lower case): Python runs every `*.pth` file
/// of its `site-packages` at start, wherever that folder is.
const CONFIG_SUFFIXES: [&str; 1] = [".pth"];

/// Whether one path component is a configuration name (`.env*`, one of `CONFIG_NAMES`, or a
/// name ending in one of `CONFIG_SUFFIXES`).
pub fn is_config_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    hidden::is_key_name(name)
        || CONFIG_NAMES.contains(&lower.as_str())
        || CONFIG_SUFFIXES.iter().any(|s| lower.ends_with(s))
}

/// The name of the instructions file MiniClaw (and other agents) load into the system prompt.
pub const INSTRUCTIONS_NAME: &str = "AGENTS.md";

/// Whether one path component names an instructions file (`AGENTS.md`, any letter case).
pub fn is_instructions_name(name: &str) -> bool {
    name.eq_ignore_ascii_case(INSTRUCTIONS_NAME)
}

/// What a write's target is to MiniClaw: the one place that says a path is configuration the
/// tools may still write, but only with a person's yes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WriteKind {
    /// An ordinary workspace file.
    Ordinary,
    /// An `AGENTS.md` (in any folder, any letter case): it joins the system prompt of a later
    /// session, so the model writing it is asked about even in `auto` mode.
    Instructions,
}

/// Told of every file the tools changed, by its real path: the trust record of the project
/// folder (`trust::changes`) implements it, so the tools need not know trust.
pub trait ChangeWatcher: Send + Sync + std::fmt::Debug {
    /// A tool changed (wrote, replaced or put back) the file at `real`. Blocking file work is
    /// fine: it is called from the tools' blocking threads.
    fn changed(&self, real: &Path);
}

/// The workspace folder and the files in it that tools may not write.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    /// A handle on the root: every open goes through it, never through `root` as a path.
    dir: Arc<Dir>,
    protected: Vec<PathBuf>,
    /// MiniClaw's own configuration (a `.env`, the plugin folder, the config folder): never
    /// written by tools, so a model cannot redirect the key or install a plugin for next time.
    config: Vec<PathBuf>,
    /// Told of every file the tools change (the trust record, `trust::changes`).
    changes: Option<Arc<dyn ChangeWatcher>>,
    /// The skills of the session: their folders are the one place outside the workspace the
    /// read tools may open files in (read-only), and `use_skill` reads them.
    skills: Arc<crate::skills::Skills>,
}

impl Sandbox {
    /// A sandbox rooted at `root` (created if missing, then canonicalised).
    pub fn new(root: &Path) -> Result<Self, SandboxError> {
        if root.exists() && !root.is_dir() {
            return Err(SandboxError::Workspace(format!(
                "{} is a file, not a folder",
                root.display()
            )));
        }
        std::fs::create_dir_all(root)
            .map_err(|e| SandboxError::Workspace(format!("{}: {e}", root.display())))?;
        let root = root
            .canonicalize()
            .map_err(|e| SandboxError::Workspace(format!("{}: {e}", root.display())))?;
        let dir = Dir::open_ambient_dir(&root, ambient_authority())
            .map_err(|e| SandboxError::Workspace(format!("{}: {e}", root.display())))?;
        Ok(Self {
            protected: vec![root.join(HISTORY_NAME)],
            config: Vec::new(),
            changes: None,
            skills: Arc::default(),
            dir: Arc::new(dir),
            root,
        })
    }

    /// Also refuses writing these files and folders (and anything inside the folders), wherever
    /// they are; they matter only when they lie inside the workspace (`--workspace .`).
    pub fn with_protected_config(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        self.config
            .extend(paths.into_iter().map(|p| real_or_lexical(&p)));
        self
    }

    /// Records every file the tools change through this sandbox in `log` (the trust record of
    /// the project folder MiniClaw started in).
    pub fn with_change_log(mut self, log: Option<Arc<dyn ChangeWatcher>>) -> Self {
        self.changes = log;
        self
    }

    /// Offers `skills` to the tools: `use_skill` reads them, and the read tools may open the
    /// files of their folders by absolute path (never write them: writes take workspace paths).
    pub fn with_skills(mut self, skills: Arc<crate::skills::Skills>) -> Self {
        self.skills = skills;
        self
    }

    /// The skills of the session (none unless [`Self::with_skills`] gave some).
    pub fn skills(&self) -> &Arc<crate::skills::Skills> {
        &self.skills
    }

    /// Notes that a tool changed the file at `real` (a real path). Blocking file work: called
    /// from the tools' blocking threads, after the change is made.
    pub fn note_change(&self, real: &Path) {
        if let Some(log) = &self.changes {
            log.changed(real);
        }
    }

    /// The workspace's real path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The handle on the workspace root that every tool opens files through.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// The path's plain names after the lexical rules (`.` and empty parts dropped).
    pub fn parts<'p>(&self, relative: &'p str) -> Result<Vec<&'p str>, SandboxError> {
        lexical_parts(relative)
    }

    /// Resolves a path to read (it may not exist yet; tools report that themselves).
    /// `""` and `"."` are the root.
    /// Hidden paths (`hidden`) are refused, named as given or reached through a link.
    pub fn resolve_read(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let parts = lexical_parts(relative)?;
        if let Some(why) = hidden::parts_hidden(parts.iter().copied()) {
            return Err(refused(relative, why.rule()));
        }
        let real = self.resolve_real(relative, &parts)?;
        match self.hidden_real(&real) {
            Some(why) => Err(refused(relative, why.rule())),
            None => Ok(real),
        }
    }

    /// Whether a real path inside the workspace is hidden from the tools.
    pub fn hidden_real(&self, real: &Path) -> Option<Hidden> {
        real.strip_prefix(&self.root)
            .ok()
            .and_then(hidden::path_hidden)
            .or_else(|| hidden::real_hidden(real))
    }

    /// Whether the entry `name` of the folder whose real path is `dir` is left out of listings
    /// and searches: by its name, or, for a symbolic link, by where it leads.
    pub fn hides_entry(&self, dir: &Path, name: &OsStr, is_link: bool) -> bool {
        if hidden::entry_hidden(&self.root, dir, name).is_some() {
            return true;
        }
        is_link
            && dir
                .join(name)
                .canonicalize()
                .is_ok_and(|real| self.hidden_real(&real).is_some())
    }

    /// What writing `relative` would change, judged by its last name (writes follow no link,
    /// so the name written is the file changed).
    pub fn write_kind(&self, relative: &str) -> WriteKind {
        let last = relative
            .rsplit(['/', '\\'])
            .find(|p| !p.is_empty() && *p != ".");
        if last.is_some_and(is_instructions_name) {
            WriteKind::Instructions
        } else {
            WriteKind::Ordinary
        }
    }

    /// Resolves a path to create or change: also refuses the root, the protected files,
    /// configuration names at any depth, and any symbolic link on the way (the real path must
    /// be given, so what is checked by name is what gets written).
    pub fn resolve_write(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let parts = lexical_parts(relative)?;
        if parts.is_empty() {
            return Err(refused(relative, RULE_ROOT_WRITE));
        }
        if parts.iter().any(|p| is_config_name(p)) {
            return Err(refused(relative, RULE_CONFIG));
        }
        let mut current = self.root.clone();
        for part in &parts {
            let candidate = current.join(part);
            match candidate.symlink_metadata() {
                Ok(meta) if meta.file_type().is_symlink() => {
                    // Name the link's fate: out of the workspace, dangling, or just a link.
                    let rule = match candidate.canonicalize() {
                        Ok(real) if real.starts_with(&self.root) => {
                            if self.is_protected(&real) {
                                RULE_HISTORY
                            } else {
                                RULE_WRITE_LINK
                            }
                        }
                        Ok(_) => RULE_SYMLINK_OUT,
                        Err(_) if self.dangling_leads_out(&current, &candidate) => RULE_SYMLINK_OUT,
                        Err(_) => RULE_DANGLING,
                    };
                    return Err(refused(relative, rule));
                }
                Ok(_) => current = candidate,
                Err(_) => {
                    current = candidate;
                }
            }
        }
        if self.is_protected(&current) {
            return Err(refused(relative, RULE_HISTORY));
        }
        if self.is_config(&current) {
            return Err(refused(relative, RULE_CONFIG));
        }
        Ok(current)
    }

    /// Whether a real path is, or is inside, one of MiniClaw's configuration paths.
    fn is_config(&self, real: &Path) -> bool {
        let lower = |p: &Path| PathBuf::from(p.to_string_lossy().to_ascii_lowercase());
        let real_lower = lower(real);
        self.config
            .iter()
            .any(|c| real.starts_with(c) || real_lower.starts_with(lower(c)))
    }

    /// The path relative to the workspace, with `/` separators, for showing.
    pub fn display_relative(&self, path: &Path) -> String {
        match path.strip_prefix(&self.root) {
            Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
            Ok(rel) => rel.to_string_lossy().replace('\\', "/"),
            Err(_) => path.to_string_lossy().replace('\\', "/"),
        }
    }

    /// Whether a real path is the history file or one of its `history.json.*` siblings.
    fn is_protected(&self, real: &Path) -> bool {
        self.protected.iter().any(|p| {
            let (Some(dir), Some(name)) = (p.parent(), p.file_name()) else {
                return false;
            };
            real.parent() == Some(dir) && real.file_name().is_some_and(|n| same_or_sibling(n, name))
        })
    }

    /// Follows the path from the root one component at a time. An existing path costs one
    /// `canonicalize`; only a path that does not exist yet is walked step by step.
    fn resolve_real(&self, given: &str, parts: &[&str]) -> Result<PathBuf, SandboxError> {
        let joined = parts.iter().fold(self.root.clone(), |p, c| p.join(c));
        if let Ok(real) = joined.canonicalize() {
            return if real.starts_with(&self.root) {
                Ok(real)
            } else {
                Err(refused(given, RULE_SYMLINK_OUT))
            };
        }
        let mut current = self.root.clone();
        for (i, part) in parts.iter().enumerate() {
            let candidate = current.join(part);
            let Ok(meta) = candidate.symlink_metadata() else {
                // Nothing exists from here on: the rest is plain names under a real folder.
                return Ok(parts[i..].iter().fold(current, |p, c| p.join(c)));
            };
            if !meta.file_type().is_symlink() {
                current = candidate;
                continue;
            }
            match candidate.canonicalize() {
                Ok(real) if real.starts_with(&self.root) => current = real,
                Ok(_) => return Err(refused(given, RULE_SYMLINK_OUT)),
                Err(_) => {
                    let rule = if self.dangling_leads_out(&current, &candidate) {
                        RULE_SYMLINK_OUT
                    } else {
                        RULE_DANGLING
                    };
                    return Err(refused(given, rule));
                }
            }
        }
        Ok(current)
    }

    /// Where a dangling link would lead, judged lexically (its target does not exist).
    fn dangling_leads_out(&self, dir: &Path, link: &Path) -> bool {
        let Ok(target) = std::fs::read_link(link) else {
            return true;
        };
        let mut out = if target.is_absolute() {
            PathBuf::new()
        } else {
            dir.to_path_buf()
        };
        for c in target.components() {
            match c {
                Component::ParentDir => {
                    out.pop();
                }
                Component::CurDir => {}
                other => out.push(other.as_os_str()),
            }
        }
        !out.starts_with(&self.root)
    }
}

/// The real path of `p`: its deepest existing ancestor resolved, the rest appended as written.
fn real_or_lexical(p: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut base = p.to_path_buf();
    loop {
        if let Ok(real) = base.canonicalize() {
            return rest
                .iter()
                .rev()
                .fold(real, |acc: PathBuf, name| acc.join(name));
        }
        match (base.file_name().map(|n| n.to_os_string()), base.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                base = parent.to_path_buf();
            }
            _ => return p.to_path_buf(),
        }
    }
}

/// Splits a path into plain names after the lexical rules; `.` and empty parts are dropped.
fn lexical_parts(path: &str) -> Result<Vec<&str>, SandboxError> {
    if path.len() > MAX_PATH_BYTES {
        return Err(refused(path, RULE_TOO_LONG));
    }
    if path.contains('\0') {
        return Err(refused(path, RULE_NUL));
    }
    if path.starts_with('/') || path.starts_with('\\') {
        return Err(refused(path, RULE_ABSOLUTE));
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' {
        return Err(refused(path, RULE_WINDOWS));
    }
    let mut parts = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => return Err(refused(path, RULE_PARENT)),
            name => parts.push(name),
        }
    }
    Ok(parts)
}

/// `name` is `protected` itself or `protected.<anything>`, ignoring ASCII case (for
/// case-insensitive file systems).
fn same_or_sibling(name: &OsStr, protected: &OsStr) -> bool {
    let (Some(name), Some(protected)) = (name.to_str(), protected.to_str()) else {
        return false;
    };
    let n = name.to_ascii_lowercase();
    let p = protected.to_ascii_lowercase();
    n == p || n.strip_prefix(&p).is_some_and(|rest| rest.starts_with('.'))
}

/// A refusal of `path` by `rule`, with the path shortened for the message.
fn refused(path: &str, rule: &str) -> SandboxError {
    let shown: String = path.chars().take(200).collect();
    let shown = if shown.len() < path.len() {
        format!("{shown}…")
    } else {
        shown
    };
    SandboxError::Refused {
        path: shown.replace('\0', "\\0"),
        rule: rule.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agents_md_in_any_folder_and_letter_case_is_configuration() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        for path in [
            "AGENTS.md",
            "agents.md",
            "./Agents.MD",
            "sub/agents.md",
            "a/b/AGENTS.md/",
            "sub\\AGENTS.md",
        ] {
            assert_eq!(sandbox.write_kind(path), WriteKind::Instructions, "{path}");
        }
        for path in [
            "AGENTS.md/notes.txt",
            "README.md",
            "AGENTS.md.bak",
            "xAGENTS.md",
            "",
        ] {
            assert_eq!(sandbox.write_kind(path), WriteKind::Ordinary, "{path}");
        }
    }
}
