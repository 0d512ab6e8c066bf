//! Claude Code's names for MiniClaw's tools, so a hook written for Claude Code runs unchanged:
//! a matcher may name a tool either way (`Write` selects `write_text_file`), a hook selected by
//! Claude Code's name is told that name as `tool_name`, and `tool_input` also carries the
//! fields Claude Code's tools have (`file_path`, absolute; `old_string`, `new_string`).

use std::path::Path;

use serde_json::Value;

/// MiniClaw's tools and Claude Code's names for them, where one does the same.
const NAMES: [(&str, &str); 7] = [
    ("run_command", "Bash"),
    ("write_text_file", "Write"),
    ("replace_text_in_file", "Edit"),
    ("read_text_file", "Read"),
    ("search_files", "Grep"),
    ("fetch_web_page", "WebFetch"),
    ("search_web", "WebSearch"),
];

/// Claude Code's name for `tool`, if it has one.
pub fn name(tool: &str) -> Option<&'static str> {
    NAMES
        .iter()
        .find(|(ours, _)| *ours == tool)
        .map(|(_, theirs)| *theirs)
}

/// Adds Claude Code's field names to a call's `tool_input`: `file_path` (the absolute path in
/// `workspace`) beside `relative_path`, `old_string` and `new_string` beside `old_text` and
/// `new_text`. What the model sent stays as it was.
pub fn add_fields(input: &mut Value, workspace: &Path) {
    let Value::Object(o) = input else {
        return;
    };
    if let Some(relative) = o.get("relative_path").and_then(Value::as_str) {
        let absolute = workspace.join(relative).to_string_lossy().into_owned();
        o.entry("file_path").or_insert(Value::String(absolute));
    }
    for (ours, theirs) in [("old_text", "old_string"), ("new_text", "new_string")] {
        if let Some(v) = o.get(ours).cloned() {
            o.entry(theirs).or_insert(v);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_fields_join_what_the_model_sent() {
        let mut input =
            serde_json::json!({"relative_path": "src/a.rs", "old_text": "x", "new_text": "y"});
        add_fields(&mut input, Path::new("/ws"));
        assert_eq!(input["file_path"], "/ws/src/a.rs");
        assert_eq!(input["old_string"], "x");
        assert_eq!(input["new_string"], "y");
        assert_eq!(input["relative_path"], "src/a.rs");
        assert_eq!(name("run_command"), Some("Bash"));
        assert_eq!(name("list_files"), None);
    }
}
