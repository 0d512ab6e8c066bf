//! A subfolder's `AGENTS.md`: when a call reads or changes files in a folder (or below one)
//! whose `AGENTS.md` this turn has not read yet, that file's instructions join the call's
//! observation (`instructions`), so they hold for the rest of the turn, and the timeline notes
//! it. Codex merges the files from the root down to the folder worked in; Claude Code loads a
//! subfolder's file when it works there: this is both, for the folders between the root (whose
//! file the system prompt carries) and the one the call names, outermost first.
//!
//! The observation, not the system prompt, carries them: requests stay a prefix of the next
//! (DeepSeek's cache), and the model reads them next to what it read.

use std::collections::BTreeSet;
use std::path::{Component, Path};

use serde_json::{Value, json};

use super::blocking::off_runtime;
use super::instructions::{INSTRUCTIONS_FILE, ProjectInstructions, read_instructions_at};
use super::turn::{Agent, NestedRead};
use crate::events::{AgentEvent, EventSink};
use crate::llm::ToolCall;

/// The argument names a call names a file or folder by.
const PATH_ARGUMENTS: [&str; 4] = ["relative_path", "path", "working_dir", "directory"];

/// At most this many subfolder files join one turn: each is up to 32 KB of every later request.
pub const MAX_NESTED_PER_TURN: usize = 8;

/// One subfolder's instructions, as read.
struct Read {
    file: String,
    found: Result<ProjectInstructions, String>,
}

impl Agent {
    /// Forgets which subfolders' instructions were read: a new turn reads them again where it
    /// works.
    pub(super) fn forget_nested_instructions(&self) {
        if let Ok(mut read) = self.nested_read.lock() {
            *read = NestedRead::default();
        }
    }

    /// After a call that succeeded: adds the instructions of the subfolders it worked in that
    /// this turn has not read to its observation, and tells each.
    pub(super) async fn nested_instructions(
        &self,
        call: &ToolCall,
        result: &mut Value,
        events: &EventSink,
    ) {
        let folders = folders_named(&call.function.arguments);
        if folders.is_empty() {
            return;
        }
        let sandbox = self.sandbox.clone();
        let candidates: Vec<String> = {
            let Ok(read) = self.nested_read.lock() else {
                return;
            };
            if read.loaded >= MAX_NESTED_PER_TURN {
                return;
            }
            folders
                .iter()
                .flat_map(|f| ancestors(f))
                .filter(|file| !read.looked.contains(file))
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect()
        };
        if candidates.is_empty() {
            return;
        }
        let found = off_runtime(move || {
            candidates
                .into_iter()
                .filter_map(|file| {
                    let (folder, named) = split_folder(&file)?;
                    // A folder that is a file (the path was one) or is not there has none.
                    if !sandbox.dir().is_dir(folder) {
                        return None;
                    }
                    match read_instructions_at(&sandbox, &named) {
                        Ok(None) => Some((file, None)),
                        Ok(Some(i)) => Some((file.clone(), Some(Read { file, found: Ok(i) }))),
                        Err(e) => Some((
                            file.clone(),
                            Some(Read {
                                file,
                                found: Err(e.to_string()),
                            }),
                        )),
                    }
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        let mut added = Vec::new();
        {
            let Ok(mut read) = self.nested_read.lock() else {
                return;
            };
            for (file, got) in found {
                // Looked at once a turn, found or not: a second call there costs nothing.
                if !read.looked.insert(file) {
                    continue;
                }
                if let Some(got) = got
                    && read.loaded < MAX_NESTED_PER_TURN
                {
                    read.loaded += 1;
                    added.push(got);
                }
            }
        }
        let mut entries = Vec::new();
        for got in added {
            match got.found {
                Ok(i) if i.text.trim().is_empty() => {}
                Ok(i) => {
                    events.send(AgentEvent::InstructionsRead {
                        id: call.id.clone(),
                        file: got.file.clone(),
                        bytes: i.bytes,
                        truncated: i.truncated,
                    });
                    entries.push(json!({
                        "file": got.file,
                        "applies_to": format!("{}/", got.file.trim_end_matches(INSTRUCTIONS_FILE).trim_end_matches('/')),
                        "truncated": i.truncated,
                        "text": i.text,
                    }));
                }
                Err(why) => events.send(AgentEvent::Notice(format!(
                    "{} was not read ({why}).",
                    got.file
                ))),
            }
        }
        if let (false, Value::Object(o)) = (entries.is_empty(), result) {
            o.insert(
                "instructions".into(),
                json!({
                    "note": "Project instructions of the folders this call worked in; follow them for files there for the rest of this turn.",
                    "files": entries,
                }),
            );
        }
    }
}

/// The workspace-relative folders a call's arguments name: each path argument's folder (the
/// path itself when it is one; which it is, is looked at when read). Paths that are absolute or
/// climb out are left alone (the tool refused them).
fn folders_named(arguments: &str) -> Vec<String> {
    let Ok(Value::Object(args)) = serde_json::from_str::<Value>(arguments) else {
        return Vec::new();
    };
    PATH_ARGUMENTS
        .iter()
        .filter_map(|k| args.get(*k).and_then(Value::as_str))
        .filter_map(normal)
        .collect()
}

/// `path` as plain folder names (`./src//x` is `src/x`), or `None` when it is absolute or
/// climbs out.
fn normal(path: &str) -> Option<String> {
    let mut parts = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str()?.to_string()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(parts.join("/"))
}

/// The `AGENTS.md` files from just below the root down to `path` itself: `src/a/b.rs` gives
/// `src/AGENTS.md`, `src/a/AGENTS.md`, `src/a/b.rs/AGENTS.md` (the last is dropped when
/// `b.rs` turns out to be a file).
fn ancestors(path: &str) -> Vec<String> {
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    (1..=parts.len())
        .map(|n| format!("{}/{INSTRUCTIONS_FILE}", parts[..n].join("/")))
        .collect()
}

/// `src/a/AGENTS.md` as its folder `src/a` and itself.
fn split_folder(file: &str) -> Option<(&str, String)> {
    let folder = file.strip_suffix(INSTRUCTIONS_FILE)?.trim_end_matches('/');
    (!folder.is_empty()).then(|| (folder, file.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_files_looked_for_run_from_below_the_root_down_and_nothing_climbs_out() {
        assert_eq!(
            ancestors("src/parser/lexer.rs"),
            [
                "src/AGENTS.md",
                "src/parser/AGENTS.md",
                "src/parser/lexer.rs/AGENTS.md"
            ]
        );
        assert_eq!(
            folders_named(r#"{"relative_path": "./src//x.rs", "working_dir": "/etc"}"#),
            ["src/x.rs"]
        );
        assert!(folders_named(r#"{"relative_path": "../outside"}"#).is_empty());
        assert!(
            ancestors("").is_empty(),
            "the root's file is the system prompt's"
        );
    }
}
