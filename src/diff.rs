//! Diffs of text (the `similar` crate): unified diffs for the approval dialog, `/diff` and undo,
//! and the typed, compact [`FileDiff`] the conversation shows under a call that changed a file.

use similar::{ChangeTag, TextDiff};

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

/// Lines of context around each change in a [`FileDiff`]: one is enough to place a change
/// under a call line, where rows are few.
const COMPACT_CONTEXT: usize = 1;

/// The most lines a [`FileDiff`] keeps: a rewrite of a huge file must not fill memory with
/// lines nobody scrolls through (the counts still cover every line).
const COMPACT_CAP: usize = 400;

/// What a line of a [`FileDiff`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiffKind {
    /// Added by the change.
    Added,
    /// Removed by the change.
    Removed,
    /// Unchanged, around a change.
    Context,
    /// Unchanged lines left out between two changes.
    Gap,
}

/// One line of a [`FileDiff`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffLine {
    /// What it is.
    pub kind: DiffKind,
    /// Its text, without the line break (empty for a gap).
    pub text: String,
}

/// What a call changed in one file, as the conversation shows it: the counts of added and
/// removed lines, and the changed lines with a line of context.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileDiff {
    /// The path as shown (relative to the workspace).
    pub path: String,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
    /// The changes with their context, at most `COMPACT_CAP` lines of them.
    pub lines: Vec<DiffLine>,
    /// Lines left out past the cap.
    pub omitted: usize,
    /// What is said instead of counts for a change that cannot be shown line by line (a
    /// binary or large file): `created`, `changed`, `deleted`.
    pub unshown: Option<&'static str>,
}

impl FileDiff {
    /// A change to a file that is not text, or too large to show: named with what happened.
    pub fn unshown(path: &str, what: &'static str) -> Self {
        Self {
            path: path.to_string(),
            added: 0,
            removed: 0,
            lines: Vec::new(),
            omitted: 0,
            unshown: Some(what),
        }
    }

    /// The change that turns `before` into `after` in file `path` (`None`: the file was new,
    /// or gone afterwards).
    pub fn new(path: &str, before: Option<&str>, after: Option<&str>) -> Self {
        let (old, new) = (before.unwrap_or(""), after.unwrap_or(""));
        let diff = TextDiff::configure().timeout(DEADLINE).diff_lines(old, new);
        let mut out = Self {
            path: path.to_string(),
            added: 0,
            removed: 0,
            lines: Vec::new(),
            omitted: 0,
            unshown: None,
        };
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => out.added += 1,
                ChangeTag::Delete => out.removed += 1,
                ChangeTag::Equal => {}
            }
        }
        for (i, group) in diff.grouped_ops(COMPACT_CONTEXT).iter().enumerate() {
            if i > 0 {
                out.push(DiffKind::Gap, "");
            }
            for op in group {
                for change in diff.iter_changes(op) {
                    let kind = match change.tag() {
                        ChangeTag::Insert => DiffKind::Added,
                        ChangeTag::Delete => DiffKind::Removed,
                        ChangeTag::Equal => DiffKind::Context,
                    };
                    let text = change.value();
                    out.push(kind, text.strip_suffix('\n').unwrap_or(text));
                }
            }
        }
        out
    }

    /// Adds a line, or counts it as left out past the cap.
    fn push(&mut self, kind: DiffKind, text: &str) {
        if self.lines.len() < COMPACT_CAP {
            self.lines.push(DiffLine {
                kind,
                text: text.strip_suffix('\r').unwrap_or(text).to_string(),
            });
        } else {
            self.omitted += 1;
        }
    }

    /// `hello.txt: +1 −3`; `hello.txt: unchanged` for a write of what was there.
    pub fn header(&self) -> String {
        if self.added == 0 && self.removed == 0 {
            return format!("{}: unchanged", self.path);
        }
        format!("{}: +{} \u{2212}{}", self.path, self.added, self.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_diff_counts_the_lines_and_keeps_the_changes_with_a_line_around() {
        let d = FileDiff::new(
            "hello.txt",
            Some("one\ntwo\nthree\nfour\nfive\nsix\n"),
            Some("one\n2\nthree\nfour\nfive\nsix\nseven\n"),
        );
        assert_eq!((d.added, d.removed), (2, 1));
        assert_eq!(d.header(), "hello.txt: +2 \u{2212}1");
        let shown: Vec<(DiffKind, &str)> =
            d.lines.iter().map(|l| (l.kind, l.text.as_str())).collect();
        assert_eq!(
            shown,
            [
                (DiffKind::Context, "one"),
                (DiffKind::Removed, "two"),
                (DiffKind::Added, "2"),
                (DiffKind::Context, "three"),
                (DiffKind::Gap, ""),
                (DiffKind::Context, "six"),
                (DiffKind::Added, "seven"),
            ]
        );
        let same = FileDiff::new("s.txt", Some("a\n"), Some("a\n"));
        assert_eq!(same.header(), "s.txt: unchanged");
        let new = FileDiff::new("n.txt", None, Some("a\nb\n"));
        assert_eq!((new.added, new.removed, new.lines.len()), (2, 0, 2));
        let huge: String = (0..1000).map(|i| format!("{i}\n")).collect();
        let big = FileDiff::new("big.txt", None, Some(&huge));
        assert_eq!((big.added, big.lines.len(), big.omitted), (1000, 400, 600));
    }

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
