//! Workspace tools that change files: `write_text_file`, `append_text_file`,
//! `replace_text_in_file`. Every path goes through `WriteTarget` (the sandbox's write rules,
//! no link followed, a new file renamed over the old), and no result may exceed
//! `MAX_WRITE_BYTES`: sizes are computed before anything is built.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::args::{parameters_of, parse_args, to_usize};
use super::change::FileChange;
use super::registry::{Tool, ToolContext, ToolError, ToolFuture, ToolRegistry};
use super::sandbox::Sandbox;
use super::support::{blocking, decode_text, fields};
use super::workspace_io::WriteTarget;
use crate::llm::ToolSchema;

/// The largest file the editing tools read, build or write.
pub const MAX_WRITE_BYTES: usize = 10 * 1024 * 1024;
/// The largest file `replace_text_in_file` edits (the same cap).
pub const MAX_EDIT_BYTES: usize = MAX_WRITE_BYTES;

/// Adds the editing tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(WriteTextFile);
    registry.register(AppendTextFile);
    registry.register(ReplaceTextInFile);
}

/// Refuses a result larger than the cap, before it is built.
fn check_size(shown: &str, size: usize, what: &str) -> Result<(), ToolError> {
    if size > MAX_WRITE_BYTES {
        return Err(ToolError::failed(format!(
            "{what} `{shown}` would make it {size} bytes; the limit is {MAX_WRITE_BYTES} bytes, \
             so nothing was changed"
        )));
    }
    Ok(())
}

/// The change a call would make to `relative`: its new text made by `make` from the current
/// one (`None` when there is none or it is not text) and the path as shown. Nothing is
/// created: a missing folder means a new file.
fn planned(
    sandbox: &Sandbox,
    relative: &str,
    make: impl FnOnce(Option<String>, &str) -> Result<String, ToolError>,
) -> Result<FileChange, ToolError> {
    let target = WriteTarget::peek(sandbox, relative)?;
    let (path, existed, before) = match &target {
        Some(t) => (
            t.shown().to_string(),
            t.exists(),
            current_text(t).ok().flatten(),
        ),
        None => {
            let checked = sandbox.resolve_write(relative)?;
            (sandbox.display_relative(&checked), false, None)
        }
    };
    let after = make(before.clone(), &path)?;
    Ok(FileChange {
        path,
        existed,
        before,
        after,
    })
}

/// `old` with `content` added, refused over the cap.
fn appended(old: String, content: &str, shown: &str) -> Result<String, ToolError> {
    check_size(
        shown,
        old.len().saturating_add(content.len()),
        "appending to",
    )?;
    Ok(old + content)
}

/// What a replacement makes of a text.
struct Replaced {
    text: String,
    replaced: usize,
    occurrences: usize,
}

/// `text` with the replacement `a` asks for made; refused when `old_text` is empty or not
/// found, or when the result would be over the cap.
fn replaced(text: &str, a: &ReplaceTextInFileArgs, shown: &str) -> Result<Replaced, ToolError> {
    if a.old_text.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`old_text` must not be empty".into(),
        ));
    }
    let occurrences = text.matches(a.old_text.as_str()).count();
    if occurrences == 0 {
        return Err(ToolError::failed(format!(
            "`old_text` was not found in `{shown}`; nothing was changed (the match is \
             exact, including whitespace and case)"
        )));
    }
    let limit = to_usize(a.count.unwrap_or(0));
    let replaced = if limit == 0 {
        occurrences
    } else {
        limit.min(occurrences)
    };
    // The size is known before the text is built: a small file with many matches and a long
    // replacement must not allocate gigabytes.
    let size = text
        .len()
        .saturating_sub(replaced.saturating_mul(a.old_text.len()))
        .saturating_add(replaced.saturating_mul(a.new_text.len()));
    check_size(shown, size, "this replacement in")?;
    Ok(Replaced {
        text: text.replacen(a.old_text.as_str(), &a.new_text, replaced),
        replaced,
        occurrences,
    })
}

/// The current text of the target (`None` when it does not exist), refusing files over the cap.
fn current_text(target: &WriteTarget) -> Result<Option<String>, ToolError> {
    let cap = u64::try_from(MAX_WRITE_BYTES).unwrap_or(u64::MAX);
    let Some(bytes) = target.read_existing(cap)? else {
        return Ok(None);
    };
    if bytes.len() > MAX_WRITE_BYTES {
        return Err(ToolError::failed(format!(
            "`{}` is too large to edit (over {MAX_WRITE_BYTES} bytes)",
            target.shown()
        )));
    }
    decode_text(bytes, MAX_WRITE_BYTES, target.shown()).map(|(text, _)| Some(text))
}

/// `write_text_file`: creates or replaces a file.
struct WriteTextFile;

/// The arguments of `write_text_file`.
#[derive(Deserialize, JsonSchema)]
struct WriteTextFileArgs {
    /// File path relative to the workspace, e.g. "notes/todo.md".
    relative_path: String,
    /// The full text to write (UTF-8).
    content: String,
}

impl Tool for WriteTextFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "write_text_file".into(),
            description: "Create a text file in the workspace, or replace all of an existing \
                file's content. Missing parent folders are created. Reports the bytes written."
                .into(),
            parameters: parameters_of::<WriteTextFileArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn written_path(&self, args: &Map<String, Value>) -> Option<String> {
        // Read as the call reads them, so what is judged is what gets written.
        parse_args::<WriteTextFileArgs>(args.clone())
            .ok()
            .map(|a| a.relative_path)
    }

    fn preview(
        &self,
        args: Map<String, Value>,
        sandbox: &Sandbox,
    ) -> Option<Result<FileChange, ToolError>> {
        let preview = || {
            let a: WriteTextFileArgs = parse_args(args)?;
            planned(sandbox, &a.relative_path, |_, shown| {
                check_size(shown, a.content.len(), "writing")?;
                Ok(a.content.clone())
            })
        };
        Some(preview())
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let WriteTextFileArgs {
                relative_path: relative,
                content,
            } = parse_args(args)?;
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                let target = WriteTarget::open(&sandbox, &relative, true)?;
                check_size(target.shown(), content.len(), "writing")?;
                let existed = target.exists();
                target.replace_with(content.as_bytes())?;
                Ok(fields(json!({
                    "path": target.shown(),
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

/// The arguments of `append_text_file`.
#[derive(Deserialize, JsonSchema)]
struct AppendTextFileArgs {
    /// File path relative to the workspace, e.g. "notes/todo.md".
    relative_path: String,
    /// The text to add at the end (UTF-8).
    content: String,
}

impl Tool for AppendTextFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "append_text_file".into(),
            description: "Add text at the end of a text file in the workspace; the file (and its \
                folders) are created when missing. No newline is added for you."
                .into(),
            parameters: parameters_of::<AppendTextFileArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn written_path(&self, args: &Map<String, Value>) -> Option<String> {
        // Read as the call reads them, so what is judged is what gets written.
        parse_args::<AppendTextFileArgs>(args.clone())
            .ok()
            .map(|a| a.relative_path)
    }

    fn preview(
        &self,
        args: Map<String, Value>,
        sandbox: &Sandbox,
    ) -> Option<Result<FileChange, ToolError>> {
        let preview = || {
            let a: AppendTextFileArgs = parse_args(args)?;
            planned(sandbox, &a.relative_path, |old, shown| {
                appended(old.unwrap_or_default(), &a.content, shown)
            })
        };
        Some(preview())
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let AppendTextFileArgs {
                relative_path: relative,
                content,
            } = parse_args(args)?;
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                let target = WriteTarget::open(&sandbox, &relative, true)?;
                let old = current_text(&target)?.unwrap_or_default();
                let size = old.len().saturating_add(content.len());
                let existed = target.exists();
                target.replace_with(appended(old, &content, target.shown())?.as_bytes())?;
                Ok(fields(json!({
                    "path": target.shown(),
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

/// The arguments of `replace_text_in_file`.
#[derive(Deserialize, JsonSchema)]
struct ReplaceTextInFileArgs {
    /// File path relative to the workspace.
    relative_path: String,
    /// The exact text to find (not empty; whitespace matters).
    old_text: String,
    /// The text to put instead.
    new_text: String,
    /// How many occurrences to replace, from the start; 0 or absent = all.
    count: Option<u64>,
}

impl Tool for ReplaceTextInFile {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "replace_text_in_file".into(),
            description: "Replace exact text in a workspace text file (no regular expressions). \
                Fails without changing anything when `old_text` is not found. Replaces every \
                occurrence unless `count` limits it (the first `count` ones); reports how many \
                were replaced."
                .into(),
            parameters: parameters_of::<ReplaceTextInFileArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn written_path(&self, args: &Map<String, Value>) -> Option<String> {
        // Read as the call reads them, so what is judged is what gets written.
        parse_args::<ReplaceTextInFileArgs>(args.clone())
            .ok()
            .map(|a| a.relative_path)
    }

    fn preview(
        &self,
        args: Map<String, Value>,
        sandbox: &Sandbox,
    ) -> Option<Result<FileChange, ToolError>> {
        let preview = || {
            let a: ReplaceTextInFileArgs = parse_args(args)?;
            planned(sandbox, &a.relative_path, |text, shown| {
                let Some(text) = text else {
                    return Err(ToolError::failed(format!("`{shown}` does not exist")));
                };
                replaced(&text, &a, shown).map(|r| r.text)
            })
        };
        Some(preview())
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let a: ReplaceTextInFileArgs = parse_args(args)?;
            let sandbox = ctx.sandbox.clone();
            blocking(move || {
                let target = WriteTarget::open(&sandbox, &a.relative_path, false)?;
                let shown = target.shown().to_string();
                let Some(text) = current_text(&target)? else {
                    return Err(ToolError::failed(format!("`{shown}` does not exist")));
                };
                let Replaced {
                    text: updated,
                    replaced,
                    occurrences,
                } = replaced(&text, &a, &shown)?;
                target.replace_with(updated.as_bytes())?;
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

#[cfg(test)]
mod tests {
    use crate::tools::{Sandbox, builtin_registry};

    #[test]
    fn previews_show_the_change_without_making_it() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let registry = builtin_registry();
        let preview = |name: &str, args: &str| registry.preview(name, args, &sandbox).unwrap();
        let new = preview(
            "write_text_file",
            r#"{"relative_path": "new/deep/a.txt", "content": "hello\n"}"#,
        )
        .unwrap();
        assert_eq!((new.path.as_str(), new.existed), ("new/deep/a.txt", false));
        assert!(
            !dir.path().join("new").exists(),
            "nothing created by a preview"
        );
        assert!(
            new.diff()
                .contains("+++ b/new/deep/a.txt\n@@ -0,0 +1 @@\n+hello")
        );
        std::fs::write(dir.path().join("b.txt"), "one\ntwo\n").unwrap();
        let replace = preview(
            "replace_text_in_file",
            r#"{"relative_path": "b.txt", "old_text": "two", "new_text": "2"}"#,
        )
        .unwrap();
        assert!(replace.diff().contains("-two\n+2\n"), "{}", replace.diff());
        let append = preview(
            "append_text_file",
            r#"{"relative_path": "b.txt", "content": "three\n"}"#,
        )
        .unwrap();
        assert_eq!(append.after, "one\ntwo\nthree\n");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "one\ntwo\n"
        );
        let missing = preview(
            "replace_text_in_file",
            r#"{"relative_path": "b.txt", "old_text": "nine", "new_text": "9"}"#,
        );
        assert!(missing.unwrap_err().to_string().contains("was not found"));
        assert!(
            preview(
                "write_text_file",
                r#"{"relative_path": ".env", "content": "x"}"#
            )
            .is_err()
        );
        assert!(
            registry
                .preview("read_text_file", r#"{"relative_path": "b.txt"}"#, &sandbox)
                .is_none()
        );
    }
}
