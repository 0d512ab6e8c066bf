//! Workspace tools that look at files: `list_files`, `read_text_file`, `list_directory_tree`.
//! The tools that change files live in `file_edit`; both are registered here.

use std::cmp::Ordering;
use std::io::Read;
use std::path::{Path, PathBuf};

use cap_std::fs::Dir;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{parameters_of, parse_args, to_usize, workspace_root};
use super::error::io_failed;
use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use super::sandbox::Sandbox;
use super::support::{blocking, decode_text, fields};
use super::workspace_io::{open_child_dir, open_dir, open_file};
use crate::llm::ToolSchema;

/// The most bytes `read_text_file` returns.
pub const MAX_READ_BYTES: usize = 200 * 1024;
/// The most entries `list_files` returns.
pub const MAX_LIST_ENTRIES: usize = 1000;
/// The most lines `list_directory_tree` returns.
pub const MAX_TREE_ENTRIES: usize = 500;
/// The deepest `list_directory_tree` goes.
pub const MAX_TREE_DEPTH: u64 = 10;
/// The depth `list_directory_tree` uses when none is given.
const DEFAULT_TREE_DEPTH: u64 = 3;

/// Adds this family's tools (the editing ones are `file_edit`'s).
pub fn register(registry: &mut ToolRegistry) {
    registry.register(ListFiles);
    registry.register(ReadTextFile);
    registry.register(ListDirectoryTree);
}

/// The kind of a directory entry, without following symbolic links.
fn kind_of(file_type: cap_std::fs::FileType) -> &'static str {
    if file_type.is_symlink() {
        "symlink"
    } else if file_type.is_dir() {
        "dir"
    } else {
        "file"
    }
}

/// One child of a folder.
struct Entry {
    name: String,
    kind: &'static str,
    size: Option<u64>,
}

/// Folders first, then by name.
fn entry_order(a: &Entry, b: &Entry) -> Ordering {
    (a.kind != "dir", &a.name).cmp(&(b.kind != "dir", &b.name))
}

/// The direct children of an open folder whose real path is `real`, sorted, without what the
/// sandbox hides (`hidden`); also how many were left out.
fn read_entries(
    dir: &Dir,
    shown: &str,
    sandbox: &Sandbox,
    real: &Path,
) -> Result<(Vec<Entry>, usize), ToolError> {
    let mut entries = Vec::new();
    let mut hidden = 0;
    for item in dir.entries().map_err(|e| io_failed("list", shown, &e))? {
        let Ok(item) = item else { continue };
        let Ok(file_type) = item.file_type() else {
            continue;
        };
        let kind = kind_of(file_type);
        let name = item.file_name();
        if sandbox.hides_entry(real, &name, kind == "symlink") {
            hidden += 1;
            continue;
        }
        // Sizes of links are not shown: their targets may lie outside the workspace.
        let size = (kind == "file")
            .then(|| item.metadata().ok().map(|m| m.len()))
            .flatten();
        entries.push(Entry {
            name: name.to_string_lossy().into_owned(),
            kind,
            size,
        });
    }
    entries.sort_by(entry_order);
    Ok((entries, hidden))
}

/// The note for entries left out, naming no name: the model learns only that some exist.
fn hidden_note(hidden: usize) -> Option<Value> {
    (hidden > 0).then(|| {
        json!(format!(
            "{hidden} entries not shown: files that may hold keys (.env*) and MiniClaw's own \
             files are kept out of the tools' reach"
        ))
    })
}

/// `list_files`: the direct children of a folder.
struct ListFiles;

/// The arguments of `list_files`.
#[derive(Deserialize, JsonSchema)]
struct ListFilesArgs {
    /// Folder path relative to the workspace; "." is the root.
    #[serde(default = "workspace_root")]
    relative_dir: String,
}

impl Tool for ListFiles {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "list_files".into(),
            description: "List the direct children of a folder in the workspace: folders first \
                (shown with a trailing `/`), then files with their sizes in bytes. Use \".\" for \
                the workspace root."
                .into(),
            parameters: parameters_of::<ListFilesArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let ListFilesArgs {
                relative_dir: relative,
            } = parse_args(args)?;
            let real = ctx.sandbox.resolve_read(&relative)?;
            let shown = ctx.sandbox.display_relative(&real);
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                let dir = open_dir(&sandbox, &relative, &shown)?;
                let (mut entries, hidden) = read_entries(&dir, &shown, &sandbox, &real)?;
                let total = entries.len();
                entries.truncate(MAX_LIST_ENTRIES);
                let listing: Vec<String> = entries
                    .iter()
                    .map(|e| match e.kind {
                        "dir" => format!("{}/", e.name),
                        "symlink" => format!("{}@", e.name),
                        _ => e.name.clone(),
                    })
                    .collect();
                let items: Vec<Value> = entries
                    .iter()
                    .map(|e| match e.size {
                        Some(size) => json!({"name": e.name, "type": e.kind, "size": size}),
                        None => json!({"name": e.name, "type": e.kind}),
                    })
                    .collect();
                let mut out = fields(json!({
                    "path": shown,
                    "entries": items,
                    "listing": listing.join("\n"),
                    "count": total,
                    "truncated": total > MAX_LIST_ENTRIES,
                }));
                if let Some(note) = hidden_note(hidden) {
                    out.insert("hidden".into(), json!(hidden));
                    out.insert("note".into(), note);
                }
                Ok(out)
            })
            .await
        })
    }
}

/// Reads at most `cap` bytes of a workspace text file, opened beneath the root in one step:
/// (text, total bytes, truncated).
pub(crate) fn read_text(
    sandbox: &Sandbox,
    relative: &str,
    shown: &str,
    cap: usize,
) -> Result<(String, u64, bool), ToolError> {
    let (file, meta) = open_file(sandbox, relative, shown)?;
    let mut bytes = Vec::with_capacity(to_usize(meta.len()).min(cap));
    // One byte past the cap tells whether the file goes on, even if its size changed.
    file.take(u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_failed("read", shown, &e))?;
    let read_len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    let (text, truncated) = decode_text(bytes, cap, shown)?;
    Ok((text, meta.len().max(read_len), truncated))
}

/// `read_text_file`: a UTF-8 text file, capped in size.
struct ReadTextFile;

/// The arguments of `read_text_file`.
#[derive(Deserialize, JsonSchema)]
struct ReadTextFileArgs {
    // A skill's file is named by its folder's absolute path (use_skill's description and
    // result say so), so this schema, which the model has seen in every session, stays as it
    // was.
    /// File path relative to the workspace, e.g. "notes/todo.md".
    relative_path: String,
}

impl Tool for ReadTextFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "read_text_file".into(),
            description: format!(
                "Read a UTF-8 text file in the workspace. At most {} KB are returned; when the \
                 file is longer, `truncated` is true and `bytes` gives its full size. Binary or \
                 non-UTF-8 files are refused.",
                MAX_READ_BYTES / 1024
            ),
            parameters: parameters_of::<ReadTextFileArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let ReadTextFileArgs {
                relative_path: relative,
            } = parse_args(args)?;
            // A skill's file, named by the absolute path `use_skill` gave: read-only, only
            // inside that skill's folder (its own rules, in `skill::read_skill_file`).
            if Path::new(&relative).is_absolute() && !ctx.sandbox.skills().is_empty() {
                let skills = ctx.sandbox.skills().clone();
                return blocking(move || {
                    let (content, total, truncated, shown) =
                        super::skill::read_skill_file(&skills, &relative, MAX_READ_BYTES)?;
                    Ok(text_result(shown, content, total, truncated))
                })
                .await;
            }
            let shown = ctx
                .sandbox
                .display_relative(&ctx.sandbox.resolve_read(&relative)?);
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                let (content, total, truncated) =
                    read_text(&sandbox, &relative, &shown, MAX_READ_BYTES)?;
                Ok(text_result(shown, content, total, truncated))
            })
            .await
        })
    }
}

/// The result of `read_text_file`: the text with its path and sizes.
fn text_result(shown: String, content: String, total: u64, truncated: bool) -> Map<String, Value> {
    let mut out = fields(json!({
        "path": shown,
        "bytes": total,
        "returned_bytes": content.len(),
        "truncated": truncated,
    }));
    if truncated {
        out.insert(
            "note".into(),
            json!(format!(
                "only the first {} of {total} bytes are shown",
                content.len()
            )),
        );
    }
    out.insert("content".into(), Value::String(content));
    out
}

/// What a tree walk has produced so far.
struct Tree<'a> {
    lines: Vec<String>,
    max_depth: usize,
    truncated: bool,
    sandbox: &'a Sandbox,
    /// Entries left out because the sandbox hides them.
    hidden: usize,
}

impl Tree<'_> {
    /// Adds the children of `dir` (real path `real`) at `depth` (1 = children of the root),
    /// depth first. Each child folder is opened from its parent's handle without following a
    /// link, so its real path is its parent's joined with its name.
    fn walk(&mut self, dir: &Dir, real: &Path, depth: usize) {
        let Ok((entries, hidden)) = read_entries(dir, "", self.sandbox, real) else {
            return;
        };
        self.hidden += hidden;
        let indent = "  ".repeat(depth);
        for entry in entries {
            if self.lines.len() > MAX_TREE_ENTRIES {
                self.truncated = true;
                return;
            }
            match entry.kind {
                "dir" => {
                    // `.git` holds thousands of objects the model never needs.
                    let skip = entry.name == ".git" && depth < self.max_depth;
                    let note = if skip { " (not expanded)" } else { "" };
                    self.lines.push(format!("{indent}{}/{note}", entry.name));
                    if depth < self.max_depth
                        && !skip
                        && let Ok(child) = open_child_dir(dir, std::ffi::OsStr::new(&entry.name))
                    {
                        let child_real: PathBuf = real.join(&entry.name);
                        self.walk(&child, &child_real, depth + 1);
                    }
                }
                "symlink" => self.lines.push(format!("{indent}{}@", entry.name)),
                _ => self.lines.push(format!("{indent}{}", entry.name)),
            }
        }
    }
}

/// `list_directory_tree`: an indented tree, bounded in depth and size.
struct ListDirectoryTree;

/// The arguments of `list_directory_tree`.
#[derive(Deserialize, JsonSchema)]
struct ListDirectoryTreeArgs {
    /// Folder path relative to the workspace; "." is the root.
    #[serde(default = "workspace_root")]
    relative_dir: String,
    /// How many levels to show (1 = only direct children).
    #[serde(default = "default_tree_depth")]
    #[schemars(range(min = 1, max = MAX_TREE_DEPTH))]
    max_depth: u64,
}

/// The depth shown when the call does not say.
fn default_tree_depth() -> u64 {
    DEFAULT_TREE_DEPTH
}

impl Tool for ListDirectoryTree {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "list_directory_tree".into(),
            description: format!(
                "Show the folders and files under a workspace folder as an indented tree \
                 (folders end with `/`, symbolic links with `@`, which are not followed). Goes \
                 `max_depth` levels deep (default {DEFAULT_TREE_DEPTH}, at most {MAX_TREE_DEPTH}) \
                 and shows at most {MAX_TREE_ENTRIES} entries; `truncated` tells when it was cut."
            ),
            parameters: parameters_of::<ListDirectoryTreeArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let ListDirectoryTreeArgs {
                relative_dir: relative,
                max_depth,
            } = parse_args(args)?;
            let max_depth = to_usize(max_depth.clamp(1, MAX_TREE_DEPTH));
            let real = ctx.sandbox.resolve_read(&relative)?;
            let shown = ctx.sandbox.display_relative(&real);
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                // Reports a missing folder or a file clearly before walking.
                let dir = open_dir(&sandbox, &relative, &shown)?;
                read_entries(&dir, &shown, &sandbox, &real)?;
                let mut tree = Tree {
                    lines: vec![format!("{shown}/")],
                    max_depth,
                    truncated: false,
                    sandbox: &sandbox,
                    hidden: 0,
                };
                tree.walk(&dir, &real, 1);
                tree.lines.truncate(MAX_TREE_ENTRIES + 1);
                if tree.truncated {
                    tree.lines
                        .push(format!("… (cut at {MAX_TREE_ENTRIES} entries)"));
                }
                let mut out = fields(json!({
                    "path": shown,
                    "max_depth": max_depth,
                    "tree": tree.lines.join("\n"),
                    "truncated": tree.truncated,
                }));
                if let Some(note) = hidden_note(tree.hidden) {
                    out.insert("hidden".into(), json!(tree.hidden));
                    out.insert("note".into(), note);
                }
                Ok(out)
            })
            .await
        })
    }
}
