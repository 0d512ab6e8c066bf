//! `/undo` and `/diff`: before a tool changes a file its content is kept (once per turn); at
//! the end of the turn what it changed is recorded (`history::Checkpoints`). `/undo` puts the
//! last turn's files back — asking first when one was changed since — and the model is told in
//! the next request; `/diff` shows what this session's turns changed, file by file.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::blocking::off_runtime;
use super::history::{Checkpoints, FileMark, HistoryError, TurnChanges, TurnMark, hash};
use super::session::shorten;
use super::turn::Agent;
use crate::llm::ToolCall;
use crate::tools::sandbox::WriteKind;
use crate::tools::snapshot::{restore, snapshot};
use crate::tools::{ChangeKeeper, Sandbox, ToolRegistry};

/// What `/undo` did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UndoOutcome {
    /// No turn of this session changed a file (or every one was undone).
    Nothing,
    /// Files were changed since the turn: nothing was done; this diff shows what undoing would
    /// throw away.
    Conflict(String),
    /// The files were put back; a sentence saying which.
    Undone(String),
}

/// Where a command's changes are kept: the session's checkpoints (blobs) and the running
/// turn's record of what changed.
#[derive(Debug)]
struct TurnKeeper {
    checkpoints: Checkpoints,
    changes: Arc<TurnChanges>,
}

impl ChangeKeeper for TurnKeeper {
    fn store_id(&self) -> String {
        self.checkpoints.blobs_dir().to_string_lossy().into_owned()
    }

    fn keep(&self, bytes: &[u8]) -> Result<String, String> {
        self.checkpoints
            .keep_quick(bytes)
            .map_err(|e| e.to_string())
    }

    fn kept(&self, hash: &str) -> Option<Vec<u8>> {
        self.checkpoints.blob(hash).ok()
    }

    fn changed(&self, path: &str, before: Option<String>) {
        if let Ok(mut files) = self.changes.files.lock()
            && !files.iter().any(|(p, _)| p == path)
        {
            files.push((path.to_string(), before));
        }
    }

    fn not_kept(&self, folder: &str) {
        if let Ok(mut folders) = self.changes.not_kept.lock()
            && !folders.iter().any(|f| f == folder)
        {
            folders.push(folder.to_string());
        }
    }
}

impl Agent {
    /// Where a call that may change any file keeps what it changed (`None` when no history is
    /// kept).
    pub(super) fn change_keeper(&self) -> Option<Arc<dyn ChangeKeeper>> {
        let checkpoints = self.checkpoints()?;
        Some(Arc::new(TurnKeeper {
            checkpoints,
            changes: self.changes.clone(),
        }))
    }

    /// The checkpoints of the current session (`None` when no history is kept).
    pub(super) fn checkpoints(&self) -> Option<Checkpoints> {
        let path = self.settings.history_path.as_deref()?;
        Some(Checkpoints::of(path, &self.session.id))
    }

    /// Keeps the content of the file `call` would change, before its first change in this turn
    /// (read, hashed and kept off the runtime). A call that is not a file edit, or that would
    /// fail, keeps nothing.
    pub(super) async fn keep_before(&self, call: &ToolCall) {
        let Some(checkpoints) = self.checkpoints() else {
            return;
        };
        let Ok(kept) = self.changes.files.lock().map(|k| paths_of(&k)) else {
            return;
        };
        let (registry, sandbox) = (self.registry.clone(), self.sandbox.clone());
        let (name, arguments) = (call.function.name.clone(), call.function.arguments.clone());
        let work = move || {
            keep_first(
                &registry,
                &sandbox,
                &checkpoints,
                (&name, &arguments),
                &kept,
            )
        };
        match off_runtime(work).await {
            Ok(Some(first)) => {
                if let Ok(mut kept) = self.changes.files.lock()
                    && !kept.iter().any(|(path, _)| *path == first.0)
                {
                    kept.push(first);
                }
            }
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, "could not keep a file for undo"),
        }
    }

    /// Records what the turn of `prompt` changed (called when it ends, off the runtime), so
    /// `/undo` can put it back; returns a problem to report, if any.
    pub(super) async fn record_changes(&self, prompt: &str) -> Option<String> {
        let kept = std::mem::take(&mut *self.changes.files.lock().ok()?);
        let not_kept = std::mem::take(&mut *self.changes.not_kept.lock().ok()?);
        let checkpoints = self.checkpoints()?;
        if kept.is_empty() && not_kept.is_empty() {
            return None;
        }
        let sandbox = self.sandbox.clone();
        let prompt = shorten(prompt.lines().next().unwrap_or(""), 60);
        let work = move || {
            let files = kept
                .into_iter()
                .map(|(path, before)| FileMark {
                    after: current_hash(&sandbox, &path),
                    path,
                    before,
                })
                .collect();
            let mut turns = checkpoints.turns();
            turns.push(TurnMark {
                prompt,
                files,
                undone: false,
                not_kept,
            });
            checkpoints.save_turns(&turns)
        };
        let saved = off_runtime(work).await.map_err(HistoryError::from);
        saved
            .and_then(|saved| saved)
            .err()
            .map(|e| format!("The changes of this turn cannot be undone: {e}"))
    }

    /// Puts back the files the last turn not yet undone changed (off the runtime). A file
    /// changed since that turn is put back only when `force` is set (else the diff of what
    /// would be lost comes back). The model hears of it in the next request.
    pub async fn undo(&mut self, force: bool) -> Result<UndoOutcome, String> {
        let Some(checkpoints) = self.checkpoints() else {
            return Ok(UndoOutcome::Nothing);
        };
        let sandbox = self.sandbox.clone();
        let work = move || undo_last(&sandbox, &checkpoints, force);
        let (outcome, note) = off_runtime(work).await.map_err(|e| e.to_string())??;
        if note.is_some() {
            self.undo_note = note;
        }
        Ok(outcome)
    }

    /// What this session's turns changed, file by file: each file from before its first change
    /// to now, as one unified diff (empty when nothing changed). Read and diffed off the
    /// runtime.
    pub async fn session_diff(&self) -> String {
        let Some(checkpoints) = self.checkpoints() else {
            return String::new();
        };
        let sandbox = self.sandbox.clone();
        off_runtime(move || diff_since_first_change(&sandbox, &checkpoints))
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "the session's changes could not be shown");
                String::new()
            })
    }
}

/// The paths already kept this turn.
fn paths_of(kept: &[(String, Option<String>)]) -> Vec<String> {
    kept.iter().map(|(path, _)| path.clone()).collect()
}

/// Keeps what the file a call (`name`, `arguments`) would change holds now, unless its path is
/// one of `kept`: the path and the hash of its content (`None`: it does not exist).
fn keep_first(
    registry: &ToolRegistry,
    sandbox: &Sandbox,
    checkpoints: &Checkpoints,
    (name, arguments): (&str, &str),
    kept: &[String],
) -> Option<(String, Option<String>)> {
    let Some(Ok(change)) = registry.preview(name, arguments, sandbox) else {
        return None;
    };
    if kept.contains(&change.path) {
        return None;
    }
    let before = match snapshot(sandbox, &change.path) {
        Ok(s) => s.bytes,
        Err(e) => {
            tracing::warn!(error = %e, path = %change.path, "not kept for undo");
            return None;
        }
    };
    match before.as_deref().map(|b| checkpoints.keep(b)).transpose() {
        Ok(hash) => Some((change.path, hash)),
        Err(e) => {
            tracing::warn!(error = %e, "could not keep a file for undo");
            None
        }
    }
}

/// `/undo`'s file work: what it did, and the note for the model when it put files back.
fn undo_last(
    sandbox: &Sandbox,
    checkpoints: &Checkpoints,
    force: bool,
) -> Result<(UndoOutcome, Option<String>), String> {
    let mut turns = checkpoints.turns();
    let Some(last) = turns.iter().rposition(|t| !t.undone) else {
        return Ok((UndoOutcome::Nothing, None));
    };
    let turn = turns[last].clone();
    let mut lost = String::new();
    let mut befores = Vec::new();
    for file in &turn.files {
        let before = match &file.before {
            Some(h) => Some(checkpoints.blob(h).map_err(|e| e.to_string())?),
            None => None,
        };
        // Configuration (an AGENTS.md) is put back only with a yes, like a changed file.
        let configuration = sandbox.write_kind(&file.path) == WriteKind::Instructions;
        if configuration {
            lost.push_str(&format!(
                "({} is configuration: it joins the system prompt, so putting it back needs your yes)\n",
                file.path
            ));
        }
        if configuration || current_hash(sandbox, &file.path) != file.after {
            let now = snapshot(sandbox, &file.path).map_err(|e| e.to_string())?;
            lost.push_str(&crate::diff::unified(
                &file.path,
                now.bytes.as_deref().map(String::from_utf8_lossy).as_deref(),
                before.as_deref().map(String::from_utf8_lossy).as_deref(),
            ));
        }
        befores.push(before);
    }
    if !lost.is_empty() && !force {
        return Ok((UndoOutcome::Conflict(lost), None));
    }
    let mut done = Vec::new();
    for (file, before) in turn.files.iter().zip(&befores).rev() {
        restore(sandbox, &file.path, before.as_deref())
            .map_err(|e| format!("{}: {e}", file.path))?;
        let how = if before.is_some() {
            "restored"
        } else {
            "removed"
        };
        done.push(format!("{} {how}", file.path));
    }
    done.reverse();
    turns[last].undone = true;
    checkpoints.save_turns(&turns).map_err(|e| e.to_string())?;
    let mut list = done.join(", ");
    if !turn.not_kept.is_empty() {
        let left = format!(
            "not put back: {} (never kept: left out by .gitignore, dependency folders and caches, links, or too large)",
            turn.not_kept.join(", ")
        );
        list = if list.is_empty() {
            left
        } else {
            format!("{list}; {left}")
        };
    }
    let note = format!(
        "[Note from MiniClaw: the user undid the file changes of the earlier turn \u{201c}{}\u{201d} ({list}); those files are as they were before it.]",
        turn.prompt
    );
    let said = format!(
        "Undid the changes of \u{201c}{}\u{201d}: {list}.",
        turn.prompt
    );
    Ok((UndoOutcome::Undone(said), Some(note)))
}

/// `/diff`'s file work: each file the session's turns changed, from before its first change to
/// now.
fn diff_since_first_change(sandbox: &Sandbox, checkpoints: &Checkpoints) -> String {
    let mut first: BTreeMap<String, Option<String>> = BTreeMap::new();
    for turn in checkpoints.turns().into_iter().filter(|t| !t.undone) {
        for file in turn.files {
            first.entry(file.path).or_insert(file.before);
        }
    }
    let mut diff = String::new();
    for (path, before) in first {
        let before = before.and_then(|h| checkpoints.blob(&h).ok());
        let now = snapshot(sandbox, &path).ok().and_then(|s| s.bytes);
        diff.push_str(&crate::diff::unified(
            &path,
            before.as_deref().map(String::from_utf8_lossy).as_deref(),
            now.as_deref().map(String::from_utf8_lossy).as_deref(),
        ));
    }
    diff
}

/// The hash of what `path` holds now (`None`: missing or unreadable).
fn current_hash(sandbox: &Sandbox, path: &str) -> Option<String> {
    snapshot(sandbox, path)
        .ok()
        .and_then(|s| s.bytes)
        .map(|b| hash(&b))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::{Arc, Mutex};
    use std::thread::ThreadId;

    use serde_json::{Map, Value, json};

    use super::*;
    use crate::agent::AgentSettings;
    use crate::agent::session::Session;
    use crate::llm::{FunctionCall, LlmClient, Preset, ToolSchema};
    use crate::tools::change::FileChange;
    use crate::tools::{ChangeWatcher, Tool, ToolContext, ToolError, ToolFuture};

    /// The threads the agent's file work was seen on, by what it was.
    #[derive(Debug, Default)]
    struct Seen(Mutex<Vec<(&'static str, ThreadId)>>);

    impl Seen {
        fn note(&self, what: &'static str) {
            self.0
                .lock()
                .unwrap()
                .push((what, std::thread::current().id()));
        }
    }

    /// Told by the tools' file work when `/undo` puts a file back.
    impl ChangeWatcher for Seen {
        fn changed(&self, _real: &Path) {
            self.note("restore");
        }
    }

    /// A file-changing tool whose preview (read for the checkpoint and the approval diff) says
    /// which thread it runs on.
    struct Probe(Arc<Seen>);

    impl Tool for Probe {
        fn schema(&self) -> ToolSchema {
            ToolSchema {
                name: "probe".into(),
                description: "changes a.txt".into(),
                parameters: json!({"type": "object", "properties": {}}),
            }
        }

        fn read_only(&self) -> bool {
            false
        }

        fn preview(
            &self,
            _args: Map<String, Value>,
            _sandbox: &Sandbox,
        ) -> Option<Result<FileChange, ToolError>> {
            self.0.note("preview");
            Some(Ok(FileChange {
                path: "a.txt".into(),
                existed: true,
                before: Some("before\n".into()),
                after: "after\n".into(),
            }))
        }

        fn call<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
            Box::pin(async { Ok(Map::new()) })
        }
    }

    #[tokio::test]
    async fn checkpoints_approval_diffs_and_undo_do_their_file_work_off_the_runtime() {
        // A current-thread runtime: this thread is the runtime's only one, so file work seen
        // on it would have blocked every other task.
        let runtime = std::thread::current().id();
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("a.txt"), "before\n").unwrap();
        let seen = Arc::new(Seen::default());
        let sandbox = Sandbox::new(ws.path())
            .unwrap()
            .with_change_log(Some(seen.clone()));
        let mut registry = ToolRegistry::new();
        registry.register(Probe(seen.clone()));
        let (registry, sandbox) = (Arc::new(registry), Arc::new(sandbox));
        let mut agent = Agent::new(
            LlmClient::new("http://127.0.0.1:9", None).unwrap(),
            registry.clone(),
            sandbox.clone(),
            Session::new(),
            AgentSettings {
                preset: Preset::Flash,
                max_steps: 2,
                history_path: Some(ws.path().join("history.json")),
            },
        );
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "probe".into(),
                arguments: "{}".into(),
            },
        };
        let diff = super::super::approvals::preview_diff(&registry, &sandbox, &call).await;
        assert!(diff.is_some_and(|d| d.contains("+after")));
        agent.keep_before(&call).await;
        std::fs::write(ws.path().join("a.txt"), "after\n").unwrap();
        assert_eq!(agent.record_changes("change a.txt").await, None);
        let undone = agent.undo(false).await.unwrap();
        assert!(matches!(undone, UndoOutcome::Undone(_)), "{undone:?}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
            "before\n"
        );
        let seen = seen.0.lock().unwrap().clone();
        let whats: Vec<&str> = seen.iter().map(|(what, _)| *what).collect();
        assert_eq!(whats, ["preview", "preview", "restore"]);
        for (what, thread) in seen {
            assert_ne!(thread, runtime, "the {what} ran on the runtime's thread");
        }
    }
}
