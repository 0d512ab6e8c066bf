//! Workspace tools that change files: `write_text_file`, `append_text_file`,
//! `replace_text_in_file`. Every path goes through `Sandbox::resolve_write`.

use std::fs;
use std::io::Write;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::files::{blocking, fields, io_failed, read_text};
use super::registry::{
    Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, arg_opt_u64, arg_str,
};
use crate::llm::ToolSchema;

/// The largest file `replace_text_in_file` edits.
pub const MAX_EDIT_BYTES: usize = 10 * 1024 * 1024;

/// Adds the editing tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(WriteTextFile);
    registry.register(AppendTextFile);
    registry.register(ReplaceTextInFile);
}

/// Creates the missing folders above `path`, refusing to write over a folder.
/// Returns whether the file already existed.
fn prepare(path: &Path, shown: &str) -> Result<bool, ToolError> {
    match fs::metadata(path) {
        Ok(meta) if meta.is_dir() => Err(ToolError::failed(format!(
            "`{shown}` is a folder; give a file path"
        ))),
        Ok(_) => Ok(true),
        Err(_) => {
            if let Some(parent) = path.parent() {
                fs::create_dir_all(parent)
                    .map_err(|e| io_failed("create the folders of", shown, &e))?;
            }
            Ok(false)
        }
    }
}

/// The `relative_path` + `content` schema shared by write and append.
fn path_content_schema(content_doc: &str) -> Value {
    json!({
        "type": "object",
        "properties": {
            "relative_path": {
                "type": "string",
                "description": "File path relative to the workspace, e.g. \"notes/todo.md\"."
            },
            "content": {"type": "string", "description": content_doc}
        },
        "required": ["relative_path", "content"]
    })
}

/// `write_text_file`: creates or replaces a file.
struct WriteTextFile;

impl Tool for WriteTextFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_text_file".into(),
            description: "Create a text file in the workspace, or replace all of an existing \
                file's content. Missing parent folders are created. Reports the bytes written."
                .into(),
            parameters: path_content_schema("The full text to write (UTF-8)."),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let relative = arg_str(&args, "relative_path")?;
            let content = arg_str(&args, "content")?.to_string();
            let path = ctx.sandbox.resolve_write(relative)?;
            let shown = ctx.sandbox.display_relative(&path);
            blocking(move || {
                let existed = prepare(&path, &shown)?;
                fs::write(&path, content.as_bytes()).map_err(|e| io_failed("write", &shown, &e))?;
                Ok(fields(json!({
                    "path": shown,
                    "bytes_written": content.len(),
                    "created": !existed,
                })))
            })
            .await
        })
    }
}

/// `append_text_file`: adds text at the end of a file.
struct AppendTextFile;

impl Tool for AppendTextFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "append_text_file".into(),
            description: "Add text at the end of a text file in the workspace; the file (and its \
                folders) are created when missing. No newline is added for you."
                .into(),
            parameters: path_content_schema("The text to add at the end (UTF-8)."),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let relative = arg_str(&args, "relative_path")?;
            let content = arg_str(&args, "content")?.to_string();
            let path = ctx.sandbox.resolve_write(relative)?;
            let shown = ctx.sandbox.display_relative(&path);
            blocking(move || {
                let existed = prepare(&path, &shown)?;
                let mut file = fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)
                    .map_err(|e| io_failed("open", &shown, &e))?;
                file.write_all(content.as_bytes())
                    .map_err(|e| io_failed("append to", &shown, &e))?;
                let size = file.metadata().map(|m| m.len()).unwrap_or_default();
                Ok(fields(json!({
                    "path": shown,
                    "bytes_appended": content.len(),
                    "size": size,
                    "created": !existed,
                })))
            })
            .await
        })
    }
}

/// `replace_text_in_file`: exact text replacement.
struct ReplaceTextInFile;

impl Tool for ReplaceTextInFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "replace_text_in_file".into(),
            description: "Replace exact text in a workspace text file (no regular expressions). \
                Fails without changing anything when `old_text` is not found. Replaces every \
                occurrence unless `count` limits it (the first `count` ones); reports how many \
                were replaced."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "relative_path": {
                        "type": "string",
                        "description": "File path relative to the workspace."
                    },
                    "old_text": {
                        "type": "string",
                        "description": "The exact text to find (not empty; whitespace matters)."
                    },
                    "new_text": {"type": "string", "description": "The text to put instead."},
                    "count": {
                        "type": "integer",
                        "description": "How many occurrences to replace, from the start; 0 or absent = all.",
                        "minimum": 0
                    }
                },
                "required": ["relative_path", "old_text", "new_text"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let relative = arg_str(&args, "relative_path")?;
            let old_text = arg_str(&args, "old_text")?.to_string();
            let new_text = arg_str(&args, "new_text")?.to_string();
            let limit = arg_opt_u64(&args, "count", usize::MAX as u64)?.unwrap_or(0) as usize;
            if old_text.is_empty() {
                return Err(ToolError::InvalidArguments(
                    "`old_text` must not be empty".into(),
                ));
            }
            let path = ctx.sandbox.resolve_write(relative)?;
            let shown = ctx.sandbox.display_relative(&path);
            blocking(move || {
                let (text, total, truncated) = read_text(&path, &shown, MAX_EDIT_BYTES)?;
                if truncated {
                    return Err(ToolError::failed(format!(
                        "`{shown}` is too large to edit ({total} bytes; the limit is {MAX_EDIT_BYTES})"
                    )));
                }
                let occurrences = text.matches(old_text.as_str()).count();
                if occurrences == 0 {
                    return Err(ToolError::failed(format!(
                        "`old_text` was not found in `{shown}`; nothing was changed (the match is \
                         exact, including whitespace and case)"
                    )));
                }
                let replaced = if limit == 0 { occurrences } else { limit.min(occurrences) };
                let updated = text.replacen(old_text.as_str(), &new_text, replaced);
                fs::write(&path, updated.as_bytes()).map_err(|e| io_failed("write", &shown, &e))?;
                Ok(fields(json!({
                    "path": shown,
                    "replaced": replaced,
                    "occurrences": occurrences,
                    "bytes": updated.len(),
                })))
            })
            .await
        })
    }
}
