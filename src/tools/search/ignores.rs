//! The ignore rules of a search: the workspace's own `.gitignore`, `.ignore` and
//! `.git/info/exclude` files, read folder by folder as the walk enters them.

use std::ffi::OsStr;
use std::path::Path;

use cap_std::fs::Dir;
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::tools::workspace_io::{open_child_dir, read_child_file};

/// The largest ignore file read.
const MAX_IGNORE_BYTES: u64 = 1024 * 1024;

/// The ignore rules in force while walking: one matcher per folder that has rules, deepest
/// last. Paths are matched as `/`-rooted paths relative to the search folder.
pub(super) struct Ignores {
    respect: bool,
    stack: Vec<(usize, Gitignore)>,
}

impl Ignores {
    /// No rules yet; with `respect` false, nothing is ever ignored.
    pub(super) fn new(respect: bool) -> Self {
        Self {
            respect,
            stack: Vec::new(),
        }
    }

    /// Adds the rules of the folder at `rel` (depth `depth`): `.git/info/exclude` first, then
    /// `.gitignore`, then `.ignore` (later lines win, as in git).
    pub(super) fn enter(&mut self, dir: &Dir, rel: &Path, depth: usize) {
        if !self.respect {
            return;
        }
        let mut builder = GitignoreBuilder::new(Path::new("/").join(rel));
        let mut any = false;
        let exclude = open_child_dir(dir, OsStr::new(".git"))
            .and_then(|git| open_child_dir(&git, OsStr::new("info")))
            .ok()
            .and_then(|info| read_child_file(&info, OsStr::new("exclude"), MAX_IGNORE_BYTES));
        let own = [".gitignore", ".ignore"]
            .map(|name| read_child_file(dir, OsStr::new(name), MAX_IGNORE_BYTES));
        for text in std::iter::once(exclude).chain(own).flatten() {
            for line in String::from_utf8_lossy(&text).lines() {
                any |= builder.add_line(None, line).is_ok();
            }
        }
        if any && let Ok(matcher) = builder.build() {
            self.stack.push((depth, matcher));
        }
    }

    /// Drops the rules of folders deeper than `depth` (the walk has left them).
    pub(super) fn leave(&mut self, depth: usize) {
        while self.stack.last().is_some_and(|(d, _)| *d > depth) {
            self.stack.pop();
        }
    }

    /// Whether the entry at `rel` is ignored: the deepest folder with a rule about it decides.
    pub(super) fn ignored(&self, rel: &Path, is_dir: bool) -> bool {
        let path = Path::new("/").join(rel);
        for (_, matcher) in self.stack.iter().rev() {
            let m = matcher.matched(&path, is_dir);
            if m.is_ignore() {
                return true;
            }
            if m.is_whitelist() {
                return false;
            }
        }
        false
    }
}
