//! `search_files`: a regex search over the workspace's text files, using a parallel walker.
//!
//! What is searched: every regular file under the folder, hidden ones included. Files that the
//! workspace's own `.gitignore`/`.ignore` files exclude are skipped (so `target/` or
//! `node_modules/` do not drown the results) unless `include_ignored` is true; ignore files above
//! the searched folder and the global git excludes are never read. The `.git` folder is never
//! searched, symbolic links are not followed, and binary files (a NUL byte in their first 8 KB)
//! are skipped. The walk opens every folder and file from its parent's handle, so a folder
//! swapped for a link mid-walk cannot lead it out of the workspace.

mod ignores;
mod matcher;
mod walk;

use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

use crate::llm::ToolSchema;
use crate::tools::registry::{
    Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, arg_opt_bool, arg_opt_str, arg_opt_u64,
    arg_str,
};
use crate::tools::support::{blocking, fields};
pub use matcher::MAX_LINE_CHARS;
use matcher::build_matcher;
use walk::run_search;

/// Matches returned when the call does not say.
const DEFAULT_MAX_MATCHES: u64 = 50;
/// The most matches one call may ask for.
pub const MAX_MATCHES: u64 = 500;

/// Adds this family's tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(SearchFiles);
}

/// `search_files`: regex search of file contents.
struct SearchFiles;

impl Tool for SearchFiles {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "search_files".into(),
            description: format!(
                "Search the text files under a workspace folder for a regular expression (Rust \
                 regex syntax; a pattern that is not a valid regex is searched as literal text, \
                 and the result says so). Returns matching lines as `path:line:text` (long lines \
                 cut to {MAX_LINE_CHARS} characters around the match), sorted by path and line. \
                 Binary files, the `.git` folder and files excluded by the workspace's \
                 .gitignore are skipped (set `include_ignored` to search those too). \
                 `truncated` tells when more matches existed than `max_matches`."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression to find."},
                    "relative_dir": {
                        "type": "string",
                        "description": "Folder (or single file) to search, relative to the workspace; \".\" is the root.",
                        "default": "."
                    },
                    "case_sensitive": {
                        "type": "boolean",
                        "description": "Match letter case exactly (default false).",
                        "default": false
                    },
                    "max_matches": {
                        "type": "integer",
                        "description": format!("Most matching lines to return (default {DEFAULT_MAX_MATCHES}, at most {MAX_MATCHES})."),
                        "minimum": 1,
                        "maximum": MAX_MATCHES
                    },
                    "include_ignored": {
                        "type": "boolean",
                        "description": "Also search files excluded by .gitignore/.ignore (default false).",
                        "default": false
                    }
                },
                "required": ["pattern"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let pattern = arg_str(&args, "pattern")?;
            let relative = arg_opt_str(&args, "relative_dir")?.unwrap_or(".");
            let case_sensitive = arg_opt_bool(&args, "case_sensitive")?.unwrap_or(false);
            let include_ignored = arg_opt_bool(&args, "include_ignored")?.unwrap_or(false);
            let limit = arg_opt_u64(&args, "max_matches", MAX_MATCHES)?
                .unwrap_or(DEFAULT_MAX_MATCHES)
                .max(1) as usize;
            let (re, literal_because) = build_matcher(pattern, case_sensitive)?;
            let shown = ctx
                .sandbox
                .display_relative(&ctx.sandbox.resolve_read(relative)?);
            let sandbox = ctx.sandbox.clone();
            let cancel = ctx.cancel.clone();
            let pattern = pattern.to_string();
            let relative = relative.to_string();
            blocking(move || {
                let shared = run_search(
                    &sandbox,
                    &relative,
                    &shown,
                    &re,
                    limit,
                    include_ignored,
                    &cancel,
                )?;
                if cancel.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let mut hits = shared.hits.into_inner().unwrap_or_default();
                hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
                hits.truncate(limit);
                let truncated = shared.found.load(Ordering::Relaxed) > limit;
                let matches: Vec<String> = hits
                    .iter()
                    .map(|h| format!("{}:{}:{}", h.path, h.line, h.text))
                    .collect();
                let mut out = fields(json!({
                    "path": shown,
                    "pattern": pattern,
                    "literal": literal_because.is_some(),
                    "match_count": matches.len(),
                    "truncated": truncated,
                    "files_searched": shared.files.load(Ordering::Relaxed),
                    "binary_files_skipped": shared.binary.load(Ordering::Relaxed),
                    "matches": matches,
                }));
                let large = shared.large.load(Ordering::Relaxed);
                if large > 0 {
                    out.insert("large_files_skipped".into(), json!(large));
                }
                let skipped_dirs = shared.skipped_dirs.load(Ordering::Relaxed);
                if skipped_dirs > 0 {
                    out.insert("folders_skipped".into(), json!(skipped_dirs));
                }
                let mut notes = Vec::new();
                if let Some(why) = literal_because {
                    notes.push(format!(
                        "the pattern is not a valid regular expression ({why}); it was searched as literal text"
                    ));
                }
                if truncated {
                    notes.push(format!(
                        "stopped after {limit} matches; narrow the pattern or folder, or raise max_matches"
                    ));
                }
                if !notes.is_empty() {
                    out.insert("note".into(), json!(notes.join("; ")));
                }
                Ok(out)
            })
            .await
        })
    }
}
