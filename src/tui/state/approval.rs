//! Calls waiting for a yes or no (the `ask` approval mode), as the dialog shows them.

use crate::approval::ApprovalRequest;

/// One call waiting, and what the person has done in its dialog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalView {
    /// The call, its arguments and the diff it would make.
    pub request: ApprovalRequest,
    /// How far the arguments and diff are scrolled.
    pub scroll: usize,
    /// The reason being typed after a no (`None`: not denying yet).
    pub reason: Option<String>,
}

impl ApprovalView {
    /// A fresh dialog for `request`.
    pub fn new(request: ApprovalRequest) -> Self {
        Self {
            request,
            scroll: 0,
            reason: None,
        }
    }

    /// The lines of the dialog's body: the arguments, pretty, then the diff.
    pub fn body(&self) -> Vec<String> {
        let arguments = serde_json::from_str::<serde_json::Value>(&self.request.arguments)
            .ok()
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| self.request.arguments.clone());
        let mut lines: Vec<String> = arguments.lines().map(str::to_string).collect();
        if let Some(diff) = &self.request.diff {
            lines.push(String::new());
            if diff.is_empty() {
                lines.push("(the file would not change)".into());
            }
            lines.extend(diff.lines().map(str::to_string));
        }
        lines
    }
}
