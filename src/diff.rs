//! Unified diffs of text, for the approval dialog, `/diff` and undo (the `similar` crate).

use similar::TextDiff;

/// The most time a diff may take.
const DEADLINE: std::time::Duration = std::time::Duration::from_millis(300);

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// The unified diff that turns `before` into `after` for file `path` (`before` `None`: a new
/// file, all added; `after` `None`: a deleted file). Empty when nothing changes.
pub fn unified(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
    if before.is_some() == after.is_some() && old == new {
        return String::new();
    }
    let from = if before.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let to = if after.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    // A deadline: two large, very different texts would otherwise cost minutes (the diff
    // then falls back to coarser hunks, still correct).
    TextDiff::configure()
        .timeout(DEADLINE)
        .diff_lines(old, new)
        .unified_diff()
        .context_radius(CONTEXT)
        .header(&from, &to)
        .missing_newline_hint(true)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_a_new_file_and_no_change() {
        let d = unified("a.txt", Some("one\ntwo\nthree\n"), Some("one\n2\nthree\n"));
        assert!(
            d.starts_with("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n"),
            "{d}"
        );
        assert!(d.contains("\n-two\n+2\n"), "{d}");
        let new = unified("n.txt", None, Some("hi\nthere\n"));
        assert!(new.starts_with("--- /dev/null\n+++ b/n.txt\n"), "{new}");
        assert_eq!(unified("same", Some("x\n"), Some("x\n")), "");
        let gone = unified("g.txt", Some("bye\n"), None);
        assert!(
            gone.contains("+++ /dev/null") && gone.contains("-bye"),
            "{gone}"
        );
    }
}
