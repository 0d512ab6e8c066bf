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
mod listing;
mod matcher;
mod walk;

use std::sync::atomic::Ordering;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args, to_usize, workspace_root};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use crate::tools::support::{blocking, fields};
pub use listing::workspace_files;
pub use matcher::MAX_LINE_CHARS;
use matcher::{Shared, build_matcher};
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

/// The arguments of `search_files`.
#[derive(Deserialize, JsonSchema)]
struct SearchFilesArgs {
    /// Regular expression to find.
    pattern: String,
    /// Folder (or single file) to search, relative to the workspace; "." is the root.
    #[serde(default = "workspace_root")]
    relative_dir: String,
    /// Match letter case exactly (default false).
    #[serde(default)]
    case_sensitive: bool,
    #[schemars(
        description = format!(
            "Most matching lines to return (default {DEFAULT_MAX_MATCHES}, at most {MAX_MATCHES})."
        ),
        range(min = 1, max = MAX_MATCHES)
    )]
    max_matches: Option<u64>,
    /// Also search files excluded by .gitignore/.ignore (default false).
    #[serde(default)]
    include_ignored: bool,
}

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
            parameters: parameters_of::<SearchFilesArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let SearchFilesArgs {
                pattern,
                relative_dir: relative,
                case_sensitive,
                max_matches,
                include_ignored,
            } = parse_args(args)?;
            let limit = to_usize(
                max_matches
                    .unwrap_or(DEFAULT_MAX_MATCHES)
                    .clamp(1, MAX_MATCHES),
            );
            let (re, literal_because) = build_matcher(&pattern, case_sensitive)?;
            let shown = ctx
                .sandbox
                .display_relative(&ctx.sandbox.resolve_read(&relative)?);
            let sandbox = ctx.sandbox.clone();
            let cancel = ctx.cancel.clone();
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
                let found = Found {
                    shown,
                    pattern,
                    literal_because,
                    limit,
                };
                Ok(found.report(shared))
            })
            .await
        })
    }
}

/// What a finished search reports besides its counters.
struct Found {
    shown: String,
    pattern: String,
    /// Why the pattern was searched as literal text, if it was.
    literal_because: Option<String>,
    limit: usize,
}

impl Found {
    /// The result fields: the matches sorted by path and line, the counters, and notes.
    fn report(self, shared: Shared) -> Map<String, Value> {
        let limit = self.limit;
        let mut hits = shared.hits.into_inner().unwrap_or_default();
        hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
        hits.truncate(limit);
        let truncated = shared.found.load(Ordering::Relaxed) > limit;
        let matches: Vec<String> = hits
            .iter()
            .map(|h| format!("{}:{}:{}", h.path, h.line, h.text))
            .collect();
        let mut out = fields(json!({
            "path": self.shown,
            "pattern": self.pattern,
            "literal": self.literal_because.is_some(),
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
        if let Some(why) = self.literal_because {
            notes.push(format!(
                "the pattern is not a valid regular expression ({why}); it was searched as \
                 literal text"
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
        out
    }
}
