//! `/undo` and `/diff`: before a tool changes a file its content is kept (once per turn); at
//! the end of the turn what it changed is recorded (`history::Checkpoints`). `/undo` puts the
//! last turn's files back — asking first when one was changed since — and the model is told in
//! the next request; `/diff` shows what this session's turns changed, file by file.

use std::collections::BTreeMap;

use super::history::{Checkpoints, FileMark, TurnMark, hash};
use super::session::shorten;
use super::turn::Agent;
use crate::llm::ToolCall;
use crate::tools::sandbox::WriteKind;
use crate::tools::snapshot::{restore, snapshot};

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

impl Agent {
    /// The checkpoints of the current session (`None` when no history is kept).
    pub(super) fn checkpoints(&self) -> Option<Checkpoints> {
        let path = self.settings.history_path.as_deref()?;
        Some(Checkpoints::of(path, &self.session.id))
    }

    /// Keeps the content of the file `call` would change, before its first change in this turn.
    /// A call that is not a file edit, or that would fail, keeps nothing.
    pub(super) fn keep_before(&self, call: &ToolCall) {
        let Some(checkpoints) = self.checkpoints() else {
            return;
        };
        let Some(Ok(change)) =
            self.registry
                .preview(&call.function.name, &call.function.arguments, &self.sandbox)
        else {
            return;
        };
        let Ok(mut kept) = self.changes.files.lock() else {
            return;
        };
        if kept.iter().any(|(path, _)| *path == change.path) {
            return;
        }
        let before = match snapshot(&self.sandbox, &change.path) {
            Ok(s) => s.bytes,
            Err(e) => {
                tracing::warn!(error = %e, path = %change.path, "not kept for undo");
                return;
            }
        };
        match before.as_deref().map(|b| checkpoints.keep(b)).transpose() {
            Ok(hash) => kept.push((change.path, hash)),
            Err(e) => tracing::warn!(error = %e, "could not keep a file for undo"),
        }
    }

    /// Records what the turn of `prompt` changed (called when it ends), so `/undo` can put it
    /// back; returns a problem to report, if any.
    pub(super) fn record_changes(&self, prompt: &str) -> Option<String> {
        let kept = std::mem::take(&mut *self.changes.files.lock().ok()?);
        let checkpoints = self.checkpoints()?;
        if kept.is_empty() {
            return None;
        }
        let files = kept
            .into_iter()
            .map(|(path, before)| FileMark {
                after: current_hash(self, &path),
                path,
                before,
            })
            .collect();
        let mut turns = checkpoints.turns();
        turns.push(TurnMark {
            prompt: shorten(prompt.lines().next().unwrap_or(""), 60),
            files,
            undone: false,
        });
        checkpoints
            .save_turns(&turns)
            .err()
            .map(|e| format!("The changes of this turn cannot be undone: {e}"))
    }

    /// Puts back the files the last turn not yet undone changed. A file changed since that
    /// turn is put back only when `force` is set (else the diff of what would be lost comes
    /// back). The model hears of it in the next request.
    pub fn undo(&mut self, force: bool) -> Result<UndoOutcome, String> {
        let Some(checkpoints) = self.checkpoints() else {
            return Ok(UndoOutcome::Nothing);
        };
        let mut turns = checkpoints.turns();
        let Some(last) = turns.iter().rposition(|t| !t.undone) else {
            return Ok(UndoOutcome::Nothing);
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
            let configuration = self.sandbox.write_kind(&file.path) == WriteKind::Instructions;
            if configuration {
                lost.push_str(&format!(
                    "({} is configuration: it joins the system prompt, so putting it back needs your yes)\n",
                    file.path
                ));
            }
            if configuration || current_hash(self, &file.path) != file.after {
                let now = snapshot(&self.sandbox, &file.path).map_err(|e| e.to_string())?;
                lost.push_str(&crate::diff::unified(
                    &file.path,
                    now.bytes.as_deref().map(String::from_utf8_lossy).as_deref(),
                    before.as_deref().map(String::from_utf8_lossy).as_deref(),
                ));
            }
            befores.push(before);
        }
        if !lost.is_empty() && !force {
            return Ok(UndoOutcome::Conflict(lost));
        }
        let mut done = Vec::new();
        for (file, before) in turn.files.iter().zip(&befores).rev() {
            restore(&self.sandbox, &file.path, before.as_deref())
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
        let list = done.join(", ");
        self.undo_note = Some(format!(
            "[Note from MiniClaw: the user undid the file changes of the earlier turn \u{201c}{}\u{201d} ({list}); those files are as they were before it.]",
            turn.prompt
        ));
        Ok(UndoOutcome::Undone(format!(
            "Undid the changes of \u{201c}{}\u{201d}: {list}.",
            turn.prompt
        )))
    }

    /// What this session's turns changed, file by file: each file from before its first change
    /// to now, as one unified diff (empty when nothing changed).
    pub fn session_diff(&self) -> String {
        let Some(checkpoints) = self.checkpoints() else {
            return String::new();
        };
        let mut first: BTreeMap<String, Option<String>> = BTreeMap::new();
        for turn in checkpoints.turns().into_iter().filter(|t| !t.undone) {
            for file in turn.files {
                first.entry(file.path).or_insert(file.before);
            }
        }
        let mut diff = String::new();
        for (path, before) in first {
            let before = before.and_then(|h| checkpoints.blob(&h).ok());
            let now = snapshot(&self.sandbox, &path).ok().and_then(|s| s.bytes);
            diff.push_str(&crate::diff::unified(
                &path,
                before.as_deref().map(String::from_utf8_lossy).as_deref(),
                now.as_deref().map(String::from_utf8_lossy).as_deref(),
            ));
        }
        diff
    }
}

/// The hash of what `path` holds now (`None`: missing or unreadable).
fn current_hash(agent: &Agent, path: &str) -> Option<String> {
    snapshot(&agent.sandbox, path)
        .ok()
        .and_then(|s| s.bytes)
        .map(|b| hash(&b))
}
