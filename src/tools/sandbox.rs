//! The workspace sandbox: every path a tool takes must stay inside the workspace.
//! (Interface fixed; the rules are being written in the `tools` work.)

use std::path::{Path, PathBuf};

/// Why a path was refused; the text names the rule.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SandboxError {
    /// A rule refused the path.
    #[error("path `{path}` refused: {rule}")]
    Refused {
        /// The path as given.
        path: String,
        /// The rule that refused it.
        rule: String,
    },
    /// The workspace itself is unusable.
    #[error("workspace error: {0}")]
    Workspace(String),
}

/// The workspace folder and the files in it that tools may not write.
#[derive(Debug, Clone)]
pub struct Sandbox {
    root: PathBuf,
    protected: Vec<PathBuf>,
}

impl Sandbox {
    /// A sandbox rooted at `root` (created if missing, then canonicalised).
    pub fn new(root: &Path) -> Result<Self, SandboxError> {
        std::fs::create_dir_all(root)
            .map_err(|e| SandboxError::Workspace(format!("{}: {e}", root.display())))?;
        let root = root
            .canonicalize()
            .map_err(|e| SandboxError::Workspace(format!("{}: {e}", root.display())))?;
        Ok(Self {
            protected: vec![root.join("history.json")],
            root,
        })
    }

    /// The workspace's real path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Resolves a path to read (it may not exist yet; tools report that themselves).
    pub fn resolve_read(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        Ok(self.root.join(relative))
    }

    /// Resolves a path to create or change: also refuses the protected files.
    pub fn resolve_write(&self, relative: &str) -> Result<PathBuf, SandboxError> {
        let _ = &self.protected;
        Ok(self.root.join(relative))
    }

    /// The path relative to the workspace, with `/` separators, for showing.
    pub fn display_relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .replace('\\', "/")
    }
}
