//! `use_skill`: a skill's instructions and the list of its files, for the model to follow.
//! Read-only: it reads what was loaded at start (`crate::skills`) and lists the skill's folder.
//! `read_skill_file` is how `read_text_file` opens one of those files.

use std::io::Read;
use std::path::Path;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{parameters_of, parse_args};
use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use super::support::{blocking, decode_text, fields};
use crate::capped_read::{Links, open_capped};
use crate::llm::ToolSchema;
use crate::skills::Skills;

/// The tool's name.
pub const USE_SKILL: &str = "use_skill";

/// Offers `use_skill`, when there are skills to use (without any it would only cost tokens).
pub fn register(registry: &mut ToolRegistry, skills: &Skills) {
    if !skills.is_empty() {
        registry.register(UseSkill);
    }
}

/// `use_skill`.
struct UseSkill;

/// The arguments of `use_skill`.
#[derive(Deserialize, JsonSchema)]
struct UseSkillArgs {
    /// The skill's name, as the system prompt's list of skills gives it.
    name: String,
}

impl Tool for UseSkill {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: USE_SKILL.into(),
            description: "Get a skill's instructions (the skills are listed in the system \
                prompt) and the files of its folder. Follow the instructions; read a file they \
                need with read_text_file, giving the skill's `folder` joined with the file's \
                relative path. A skill's files are read-only."
                .into(),
            parameters: parameters_of::<UseSkillArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let UseSkillArgs { name } = parse_args(args)?;
            let skills = ctx.sandbox.skills().clone();
            let Some(skill) = skills.get(name.trim()).cloned() else {
                let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
                return Err(ToolError::failed(format!(
                    "there is no skill `{name}`; the skills are: {}",
                    names.join(", ")
                )));
            };
            blocking(move || {
                let (files, truncated) = Skills::files(&skill);
                let folder = skill.dir.to_string_lossy().into_owned();
                Ok(fields(json!({
                    "name": skill.name,
                    "origin": skill.origin.name(),
                    "folder": folder,
                    "instructions": skill.instructions,
                    "files": files,
                    "files_truncated": truncated,
                    "note": format!(
                        "Read a file of this skill with read_text_file, relative_path \
                         \"{folder}/FILE\" (FILE as listed). The skill's files are read-only."
                    ),
                })))
            })
            .await
        })
    }
}

/// Reads at most `cap` bytes of a skill's file named by its absolute `path` (as `use_skill`
/// gave its folder): only inside a skill's folder by real path, never a link at the end,
/// never blocking on a special file. (text, total bytes, truncated, the path shown).
pub(crate) fn read_skill_file(
    skills: &Skills,
    path: &str,
    cap: usize,
) -> Result<(String, u64, bool, String), ToolError> {
    let refused = |why: String| ToolError::failed(format!("path `{path}` refused: {why}"));
    let (_, real) = skills
        .resolve_file(Path::new(path))
        .map_err(|e| refused(e.to_string()))?;
    let shown = real.to_string_lossy().into_owned();
    // The real path was checked to lie inside the folder; it is opened without following a
    // link at its end, so a file swapped for a link since is refused, not followed.
    let file = open_capped(&real, u64::MAX, Links::Refuse).map_err(|e| refused(e.to_string()))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or_default();
    let mut bytes = Vec::new();
    file.take(u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::failed(format!("cannot read `{shown}`: {e}")))?;
    let read = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    let (text, truncated) = decode_text(bytes, cap, &shown)?;
    Ok((text, size.max(read), truncated, shown))
}
