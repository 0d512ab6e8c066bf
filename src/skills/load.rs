//! Finding the skills at start: each source folder's subfolders that hold a `SKILL.md`, read
//! the way MiniClaw reads any planted file (no blocking on a special file, a size cap, a
//! project's `SKILL.md` never a link), checked, capped and cleaned.

use std::path::{Path, PathBuf};

use super::{Origin, Skill, Skills, Source};
use crate::capped_read::{Links, read_capped_string};

/// The most of a `SKILL.md` read; a larger one is reported and skipped.
pub const MAX_SKILL_BYTES: u64 = 64 * 1024;
/// The most skills kept: each costs a line of every request's prompt.
pub const MAX_SKILLS: usize = 200;
/// The longest description the prompt and `/skills` carry, in characters (longer ones are cut).
pub const MAX_DESCRIPTION_CHARS: usize = 300;
/// The longest skill name, as the Agent Skills format allows.
const MAX_NAME_CHARS: usize = 64;
/// The skill file in each skill folder.
const SKILL_FILE: &str = "SKILL.md";

/// The folders skills are looked for in, in order: MiniClaw's config folder, the shared
/// `~/.agents/skills/`, and `project`'s `.agents/skills/` only when it is trusted.
pub fn default_sources(project_trusted: bool, project: Option<&Path>) -> Vec<Source> {
    let mut sources = Vec::new();
    if let Some(config) = crate::paths::config_dir() {
        sources.push(Source {
            origin: Origin::User,
            dir: config.join("skills"),
        });
    }
    if let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        sources.push(Source {
            origin: Origin::Shared,
            dir: PathBuf::from(home).join(".agents").join("skills"),
        });
    }
    if project_trusted && let Some(project) = project {
        sources.push(Source {
            origin: Origin::Project,
            dir: project.join(".agents").join("skills"),
        });
    }
    sources
}

/// Reads the skills of `sources`; a warning for each skill skipped (a broken front matter, a
/// name taken by an earlier one, too many) naming its file.
pub fn load(sources: &[Source]) -> (Skills, Vec<String>) {
    let mut list: Vec<Skill> = Vec::new();
    let mut warnings = Vec::new();
    let mut same_folder = Vec::new();
    for source in sources {
        // `~/.agents` and the config folder may be the same folder through a link: read once.
        let Ok(real) = source.dir.canonicalize() else {
            continue;
        };
        if same_folder.contains(&real) {
            continue;
        }
        same_folder.push(real.clone());
        for dir in skill_dirs(&real) {
            let file = dir.join(SKILL_FILE);
            // A project's skill folder is the project's own: a link leading out of its
            // `.agents/skills/` (to the home folder, say) would open that to the read tools.
            if source.origin == Origin::Project
                && !dir.canonicalize().is_ok_and(|d| d.starts_with(&real))
            {
                warnings.push(format!(
                    "Skill folder {} skipped: it leads out of {} through a symbolic link.",
                    dir.display(),
                    real.display()
                ));
                continue;
            }
            match read_skill(&dir, &file, source.origin) {
                Ok(None) => {}
                Ok(Some(skill)) => {
                    if let Some(first) = list.iter().find(|s| s.name == skill.name) {
                        warnings.push(format!(
                            "Skill `{}` in {} skipped: the {} skill of that name in {} comes first.",
                            skill.name,
                            file.display(),
                            first.origin.name(),
                            first.dir.display()
                        ));
                    } else if list.len() >= MAX_SKILLS {
                        warnings.push(format!(
                            "Skill {} skipped: MiniClaw keeps at most {MAX_SKILLS} skills.",
                            file.display()
                        ));
                    } else {
                        list.push(skill);
                    }
                }
                Err(why) => {
                    warnings.push(format!("Skill {} skipped: {why}.", file.display()));
                }
            }
        }
    }
    (Skills::new(list), warnings)
}

/// The subfolders of `dir` (links to folders included: a person may link a skill in from a
/// repository), by name.
fn skill_dirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    // A folder with thousands of entries is not read whole: a few past the cap are enough to
    // report that there are too many.
    dirs.truncate(MAX_SKILLS * 2);
    dirs
}

/// Reads one skill folder's `SKILL.md`; `Ok(None)` for a folder without one.
fn read_skill(dir: &Path, file: &Path, origin: Origin) -> Result<Option<Skill>, String> {
    // The person's own skills may be links into a dotfiles repository; a project's are files
    // of the project (a link could lead anywhere, and is not followed).
    let links = match origin {
        Origin::Project => Links::Refuse,
        Origin::User | Origin::Shared => Links::Follow,
    };
    let text = match read_capped_string(file, MAX_SKILL_BYTES, links) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let doc = crate::front_matter::parse(&text).map_err(|e| e.to_string())?;
    if !doc.has_front_matter {
        return Err("it has no front matter (`---`, `name:`, `description:`, `---`)".into());
    }
    let name = doc
        .get("name")
        .ok_or("its front matter has no `name`")?
        .trim();
    if !valid_name(name) {
        return Err(format!(
            "its name `{}` is not lower-case letters, digits, `-` and `_` (at most {MAX_NAME_CHARS})",
            crate::terminal_text::clean(name)
        ));
    }
    let description = doc
        .get("description")
        .map(clean_description)
        .filter(|d| !d.is_empty())
        .ok_or("its front matter has no `description`")?;
    let real = dir.canonicalize().map_err(|e| e.to_string())?;
    Ok(Some(Skill {
        name: name.to_string(),
        description,
        origin,
        dir: real,
        instructions: doc.body.trim().to_string(),
    }))
}

/// Whether a skill name may be used: it is shown, sent and typed after `/skill`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_'))
}

/// A description as one clean line: control characters and escapes removed (it is drawn on the
/// terminal and sent in every prompt), white space collapsed, cut at the cap.
pub fn clean_description(text: &str) -> String {
    let clean = crate::terminal_text::clean(text);
    let words: Vec<&str> = clean.split_whitespace().collect();
    let line = words.join(" ");
    if line.chars().count() <= MAX_DESCRIPTION_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_DESCRIPTION_CHARS - 1).collect();
    cut.push('…');
    cut
}
