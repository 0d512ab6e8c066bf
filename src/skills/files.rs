//! A skill's own files: listed for `use_skill`, and the one rule by which the read tools may
//! open them although they lie outside the workspace.

use std::path::{Component, Path, PathBuf};

use super::Skill;

/// The most files `use_skill` lists of one skill.
pub const MAX_LISTED_FILES: usize = 100;
/// How deep the listing goes into a skill's folder.
const MAX_DEPTH: usize = 5;

/// Why a path outside the workspace was not opened as a skill's file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileRefused {
    /// It lies in no skill's folder.
    #[error(
        "it is outside the workspace and in no skill's folder (use a path relative to the workspace, or a skill folder's absolute path as use_skill gave it)"
    )]
    NotInSkill,
    /// It holds `..`.
    #[error("`..` is not allowed")]
    Parent,
    /// A part of it is a name that may hold keys.
    #[error(".env* files are kept out of the tools' reach, in skills too")]
    Hidden,
    /// Its real path leaves the skill's folder (a link).
    #[error("it leads out of the skill's folder through a symbolic link")]
    LeadsOut,
    /// It does not exist (or cannot be looked at).
    #[error("it does not exist in the skill's folder")]
    Missing,
    /// It lies in MiniClaw's own config or data folder, outside the skills folder there.
    #[error("MiniClaw's own files are kept out of the tools' reach")]
    OwnFolder,
}

/// Whether a real path lies in MiniClaw's data folder, or in its config folder outside
/// `skills/` (a skill folder that is, or links to, a parent of them must not open their
/// settings, keys or trust records to the tools).
fn own_folder(real: &Path) -> bool {
    let canonical = |p: PathBuf| p.canonicalize().unwrap_or(p);
    if crate::paths::data_dir()
        .map(canonical)
        .is_some_and(|data| real.starts_with(data))
    {
        return true;
    }
    crate::paths::config_dir()
        .map(canonical)
        .is_some_and(|config| real.starts_with(&config) && !real.starts_with(config.join("skills")))
}

/// Whether a name may hold keys or a repository's internals (never listed, never opened).
fn hidden_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.starts_with(".env") || lower == ".git"
}

/// The skill holding `path` and the file's real path (see `Skills::resolve_file`).
pub(super) fn resolve<'s>(
    skills: &'s [Skill],
    path: &Path,
) -> Result<(&'s Skill, PathBuf), FileRefused> {
    if !path.is_absolute() {
        return Err(FileRefused::NotInSkill);
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(FileRefused::Parent);
    }
    let (skill, inner) = skills
        .iter()
        .find_map(|s| path.strip_prefix(&s.dir).ok().map(|inner| (s, inner)))
        .ok_or(FileRefused::NotInSkill)?;
    if inner
        .components()
        .any(|c| hidden_name(&c.as_os_str().to_string_lossy()))
    {
        return Err(FileRefused::Hidden);
    }
    let real = path.canonicalize().map_err(|_| FileRefused::Missing)?;
    if !real.starts_with(&skill.dir) {
        return Err(FileRefused::LeadsOut);
    }
    if own_folder(&real) {
        return Err(FileRefused::OwnFolder);
    }
    let inner_real = real.strip_prefix(&skill.dir).unwrap_or(&real);
    if inner_real
        .components()
        .any(|c| hidden_name(&c.as_os_str().to_string_lossy()))
    {
        return Err(FileRefused::Hidden);
    }
    Ok((skill, real))
}

/// The files under `dir`, relative, sorted, without following links, without `SKILL.md`
/// itself and hidden names; whether the list was cut.
pub(super) fn list(dir: &Path) -> (Vec<String>, bool) {
    let mut found = Vec::new();
    // Not even the names of MiniClaw's own files are told.
    if own_folder(dir) {
        return (found, false);
    }
    let mut cut = false;
    walk(dir, Path::new(""), 0, &mut found, &mut cut);
    found.sort();
    (found, cut)
}

fn walk(dir: &Path, relative: &Path, depth: usize, found: &mut Vec<String>, cut: &mut bool) {
    let Ok(entries) = std::fs::read_dir(dir.join(relative)) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name().to_string_lossy().into_owned();
        if hidden_name(&name) || (depth == 0 && name == "SKILL.md") {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = relative.join(&name);
        if kind.is_dir() {
            if depth + 1 < MAX_DEPTH {
                walk(dir, &path, depth + 1, found, cut);
            }
        } else if kind.is_file() {
            if found.len() >= MAX_LISTED_FILES {
                *cut = true;
                return;
            }
            found.push(path.to_string_lossy().replace('\\', "/"));
        }
    }
}
