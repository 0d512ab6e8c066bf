//! File content kept before a call changes it, and put back by `/undo`. Every path goes
//! through the same write rules as the editing tools (`WriteTarget`): nothing hidden, nothing
//! outside, no link followed.

use super::file_edit::MAX_WRITE_BYTES;
use super::registry::ToolError;
use super::sandbox::Sandbox;
use super::workspace_io::WriteTarget;

/// A file's content as it is now, kept to put it back later.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The path as shown (relative to the workspace).
    pub path: String,
    /// Its bytes (`None`: it does not exist).
    pub bytes: Option<Vec<u8>>,
}

/// What `relative` holds now. Refused for a file over the editing tools' cap (it could not be
/// put back in one piece).
pub fn snapshot(sandbox: &Sandbox, relative: &str) -> Result<Snapshot, ToolError> {
    let Some(target) = WriteTarget::peek(sandbox, relative)? else {
        let checked = sandbox.resolve_write(relative)?;
        return Ok(Snapshot {
            path: sandbox.display_relative(&checked),
            bytes: None,
        });
    };
    let cap = MAX_WRITE_BYTES as u64;
    let bytes = target.read_existing(cap)?;
    if bytes.as_ref().is_some_and(|b| b.len() > MAX_WRITE_BYTES) {
        return Err(ToolError::failed(format!(
            "`{}` is over {} MB: it cannot be kept for undo",
            target.shown(),
            MAX_WRITE_BYTES >> 20
        )));
    }
    Ok(Snapshot {
        path: target.shown().to_string(),
        bytes,
    })
}

/// Puts `relative` back as `bytes` (`None`: removes it, for a file a call created).
pub fn restore(sandbox: &Sandbox, relative: &str, bytes: Option<&[u8]>) -> Result<(), ToolError> {
    match bytes {
        Some(bytes) => WriteTarget::open(sandbox, relative, true)?.replace_with(bytes),
        None => match WriteTarget::peek(sandbox, relative)? {
            Some(target) => target.remove(),
            None => Ok(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_never_restores_into_an_interpreter_environment() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".venv/lib")).unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        for path in [".venv/lib/evil.pth", "Node_Modules/dep/index.js", "a/x.PTH"] {
            let err = restore(&sandbox, path, Some(b"import os")).unwrap_err();
            assert!(err.to_string().contains("interpreter"), "{path}: {err}");
        }
        assert!(!dir.path().join(".venv/lib/evil.pth").exists());
        assert!(!dir.path().join("a").exists());
    }

    #[test]
    fn a_snapshot_restores_what_was_and_a_created_file_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        std::fs::write(dir.path().join("b.txt"), "one\n").unwrap();
        let kept = snapshot(&sandbox, "b.txt").unwrap();
        assert_eq!(kept.bytes.as_deref(), Some(&b"one\n"[..]));
        std::fs::write(dir.path().join("b.txt"), "two\n").unwrap();
        restore(&sandbox, "b.txt", kept.bytes.as_deref()).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("b.txt")).unwrap(),
            "one\n"
        );
        let absent = snapshot(&sandbox, "c.txt").unwrap();
        std::fs::write(dir.path().join("c.txt"), "made by a call").unwrap();
        restore(&sandbox, "c.txt", absent.bytes.as_deref()).unwrap();
        assert!(!dir.path().join("c.txt").exists());
        assert!(
            snapshot(&sandbox, ".env").is_err(),
            "hidden files stay out of reach"
        );
        assert!(snapshot(&sandbox, "../outside.txt").is_err());
    }
}
