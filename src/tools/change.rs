//! The change a call would make to one file, shown before it runs (the approval dialog's diff).

/// The change a call would make to one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileChange {
    /// The path as shown (relative to the workspace).
    pub path: String,
    /// Whether the file exists now.
    pub existed: bool,
    /// Its text now (`None`: new, or not readable as text).
    pub before: Option<String>,
    /// Its text after the call.
    pub after: String,
}

impl FileChange {
    /// The change as a unified diff (a new file all added; a file that is not text noted).
    pub fn diff(&self) -> String {
        match (&self.before, self.existed) {
            (Some(before), _) => crate::diff::unified(&self.path, Some(before), Some(&self.after)),
            (None, false) => crate::diff::unified(&self.path, None, Some(&self.after)),
            (None, true) => format!(
                "(`{}` is not a text file MiniClaw can show, or is too large: it is replaced whole)\n{}",
                self.path,
                crate::diff::unified(&self.path, None, Some(&self.after))
            ),
        }
    }
}
