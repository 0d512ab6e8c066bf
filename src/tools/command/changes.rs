//! What a command changed, told to everyone who needs it: the observation's `files_changed`
//! (for the model), a diff per file (for the conversation and the timeline), the turn's record
//! (for `/undo` and `/diff`) and the trust record of the project folder (a file a command wrote
//! counts as changed by MiniClaw's tools).

use serde_json::{Value, json};

use crate::diff::FileDiff;
use crate::events::AgentEvent;
use crate::tools::kept_changes::ChangeKeeper;
use crate::tools::registry::ToolContext;
use crate::tools::sandbox::Sandbox;
use crate::tools::snapshot::snapshot;

use super::manifest::Changes;

/// The most paths named in each list of the observation.
const MAX_LISTED: usize = 100;

/// The most files shown as diffs (the rest are named in the observation).
const MAX_DIFFS: usize = 30;

/// The largest file shown as a diff.
const MAX_DIFF_BYTES: usize = 256 * 1024;

/// Records `changes` in the turn's record and the trust record (blocking file work: called off
/// the runtime), and returns the diffs to show.
pub fn record(
    changes: &Changes,
    sandbox: &Sandbox,
    keeper: Option<&dyn ChangeKeeper>,
) -> Vec<FileDiff> {
    let root = sandbox.root();
    let mut diffs = Vec::new();
    let created = changes.created.iter().map(|p| (p, None));
    let touched = changes.changed.iter().chain(&changes.deleted);
    for (path, before) in created.chain(touched.map(|(p, h)| (p, h.clone()))) {
        if let Some(keeper) = keeper {
            keeper.changed(path, before.clone());
        }
        sandbox.note_change(&root.join(path));
        if diffs.len() < MAX_DIFFS {
            diffs.push(diff_of(sandbox, keeper, path, before.as_deref()));
        }
    }
    for folder in &changes.not_kept {
        if let Some(keeper) = keeper {
            keeper.not_kept(folder);
        }
        sandbox.note_change(&root.join(folder));
    }
    diffs
}

/// Tells the diffs as the call's file changes (before its `ToolFinished`).
pub fn tell(diffs: Vec<FileDiff>, ctx: &ToolContext) {
    for diff in diffs {
        ctx.events.send(AgentEvent::FileEdited {
            id: ctx.call_id.clone(),
            diff,
        });
    }
}

/// The diff of one file from what was kept to what it holds now; a file that is not text, is
/// too large or was not kept shows as one line saying so.
fn diff_of(
    sandbox: &Sandbox,
    keeper: Option<&dyn ChangeKeeper>,
    path: &str,
    before: Option<&str>,
) -> FileDiff {
    let text = |bytes: Vec<u8>| {
        (bytes.len() <= MAX_DIFF_BYTES)
            .then(|| String::from_utf8(bytes).ok())
            .flatten()
    };
    // `Some(None)`: it did not exist; `None`: it cannot be shown.
    let before = match before {
        Some(hash) => keeper.and_then(|k| k.kept(hash)).and_then(text).map(Some),
        None => Some(None),
    };
    let after = match snapshot(sandbox, path).map(|s| s.bytes) {
        Ok(Some(bytes)) => text(bytes).map(Some),
        Ok(None) => Some(None),
        Err(_) => None,
    };
    match (before, after) {
        (Some(before), Some(after)) => FileDiff::new(path, before.as_deref(), after.as_deref()),
        (before, after) => {
            let what = match (before, after) {
                (Some(None), _) => "created (not text, or too large to show)",
                (_, Some(None)) => "deleted (not text, or too large to show)",
                _ => "changed (not text, or too large to show)",
            };
            FileDiff::unshown(path, what)
        }
    }
}

/// The observation's `files_changed`: the paths created, changed and deleted, and what could
/// not be kept (`None`: nothing changed).
pub fn observed(changes: &Changes, undoable: bool) -> Option<Value> {
    if changes.is_empty() {
        return None;
    }
    let list = |paths: Vec<&String>| {
        let mut named: Vec<Value> = paths.iter().take(MAX_LISTED).map(|p| json!(p)).collect();
        if paths.len() > MAX_LISTED {
            named.push(json!(format!("… and {} more", paths.len() - MAX_LISTED)));
        }
        Value::Array(named)
    };
    let mut out = serde_json::Map::new();
    for (name, paths) in [
        ("created", changes.created.iter().collect::<Vec<_>>()),
        ("changed", changes.changed.iter().map(|(p, _)| p).collect()),
        ("deleted", changes.deleted.iter().map(|(p, _)| p).collect()),
    ] {
        if !paths.is_empty() {
            out.insert(name.into(), list(paths));
        }
    }
    if !changes.not_kept.is_empty() {
        out.insert("not_kept".into(), list(changes.not_kept.iter().collect()));
        out.insert(
            "not_kept_note".into(),
            json!("changed, but not kept (left out by .gitignore, dependency folders and caches no tool may write, links, files too large): /undo cannot put these back"),
        );
    }
    if !undoable {
        out.insert(
            "note".into(),
            json!("no history is kept in this session: these changes cannot be undone"),
        );
    }
    Some(Value::Object(out))
}
