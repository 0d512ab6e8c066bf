//! One walk of the workspace, before each command and again after it: what the jail must
//! shield (`exposure`'s rules) and the state of every file a command could change (`manifest`
//! compares two of them). One walk serves both, so watching for changes costs only the
//! bookkeeping. Folders the project's `.gitignore` files leave out (`target/`,
//! `node_modules/`) are walked too, by their file states only: a change in them is listed, not
//! kept. Past [`MAX_ENTRIES`] entries the walk stops (SECURITY.md says what that leaves).

use std::collections::{HashSet, VecDeque};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};

use crate::capped_read::{Links, read_capped};
use crate::jail::Shielded;
use crate::tools::hidden;

use super::exposure::read_only_name;

/// The most entries looked at before each command (a few tens of milliseconds).
pub const MAX_ENTRIES: usize = 50_000;

/// The largest `.gitignore` read (a hostile one could be huge, or a pipe).
const MAX_GITIGNORE: u64 = 256 * 1024;

/// What a file's metadata says about it: equal states mean (within a clock tick) equal content.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileStat {
    /// Its size in bytes.
    pub size: u64,
    /// When its content last changed (nanoseconds since the epoch).
    pub modified: i128,
    /// When its metadata last changed (nanoseconds since the epoch): a tool that sets the
    /// modification time back still moves this.
    pub changed: i128,
    /// Its inode (a file replaced by a rename is another file).
    pub inode: u64,
    /// Whether it is a symbolic link (listed when it changes, never kept).
    pub link: bool,
}

impl FileStat {
    fn of(meta: &std::fs::Metadata) -> Self {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        Self {
            size: meta.len(),
            modified: ns(meta.mtime(), meta.mtime_nsec()),
            changed: ns(meta.ctime(), meta.ctime_nsec()),
            inode: meta.ino(),
            link: meta.file_type().is_symlink(),
        }
    }
}

/// A file (or link) the walk found.
#[derive(Clone, Debug)]
pub struct Found {
    /// Its path relative to the workspace, as the tools show it.
    pub relative: String,
    /// Its state.
    pub stat: FileStat,
    /// The folder a `.gitignore` leaves out that holds it (relative), if any.
    pub ignored_in: Option<String>,
}

/// What one walk found.
#[derive(Debug, Default)]
pub struct Survey {
    /// The entries the jail shields, hidden ones first.
    pub shielded: Vec<Shielded>,
    /// Every file and link outside the shielded entries, in walk order.
    pub files: Vec<Found>,
    /// Whether the walk stopped at [`MAX_ENTRIES`] (what lies deeper was not seen).
    pub cut: bool,
}

/// The `.gitignore` rules in force in a folder: its own and its parents', deepest first.
type Rules = Arc<Vec<Arc<Gitignore>>>;

/// Walks the workspace at `root` (a real path), breadth first.
pub fn survey(root: &Path) -> Survey {
    let mut hidden_entries: Vec<PathBuf> = hidden::own_folders_in(root);
    let mut read_only = Vec::new();
    let mut hidden_inodes = HashSet::new();
    let mut linked = Vec::new();
    let mut files = Vec::new();
    let mut queue: VecDeque<(PathBuf, Rules, Option<String>)> =
        VecDeque::from([(root.to_path_buf(), Arc::new(Vec::new()), None)]);
    let mut seen = 0;
    let mut cut = false;
    'walk: while let Some((dir, parent_rules, ignored_in)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let rules = match ignored_in {
            // Inside a left-out folder nothing more needs deciding.
            Some(_) => parent_rules,
            None => with_gitignore(&dir, parent_rules),
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                cut = true;
                break 'walk;
            }
            let name = entry.file_name();
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if hidden::entry_hidden(root, &dir, &name).is_some() {
                if meta.is_file() {
                    hidden_inodes.insert((meta.dev(), meta.ino()));
                }
                if !hidden_entries.contains(&path) {
                    hidden_entries.push(path);
                }
                continue;
            }
            if read_only_name(&name) {
                read_only.push(path);
                continue;
            }
            let relative = || {
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned()
            };
            if meta.is_dir() {
                let ignored = ignored_in
                    .clone()
                    .or_else(|| left_out(&rules, &path, true).then(relative));
                queue.push_back((path, rules.clone(), ignored));
                continue;
            }
            if meta.is_file() && meta.nlink() > 1 {
                linked.push((path.clone(), meta.dev(), meta.ino()));
            }
            if meta.is_file() || meta.file_type().is_symlink() {
                files.push(Found {
                    relative: relative(),
                    stat: FileStat::of(&meta),
                    ignored_in: ignored_in.clone(),
                });
            }
        }
    }
    // Another name of a hidden file is hidden too (and was never a file to keep).
    let linked_hidden: Vec<PathBuf> = linked
        .into_iter()
        .filter(|(_, dev, ino)| hidden_inodes.contains(&(*dev, *ino)))
        .map(|(path, _, _)| path)
        .collect();
    files.retain(|f| !linked_hidden.iter().any(|p| p.ends_with(&f.relative)));
    hidden_entries.extend(linked_hidden);
    let shielded = hidden_entries
        .into_iter()
        .map(Shielded::Hidden)
        .chain(read_only.into_iter().map(Shielded::ReadOnly))
        .collect();
    Survey {
        shielded,
        files,
        cut,
    }
}

/// The rules of `dir`: its parent's, with its own `.gitignore` (read capped, never through a
/// link) in front.
fn with_gitignore(dir: &Path, parent: Rules) -> Rules {
    let file = dir.join(".gitignore");
    let Ok(bytes) = read_capped(&file, MAX_GITIGNORE, Links::Refuse) else {
        return parent;
    };
    let mut builder = GitignoreBuilder::new(dir);
    for line in String::from_utf8_lossy(&bytes).lines() {
        // A line the matcher cannot read is skipped, as git skips it.
        let _ = builder.add_line(None, line);
    }
    match builder.build() {
        Ok(own) if !own.is_empty() => {
            let mut rules = Vec::with_capacity(parent.len() + 1);
            rules.push(Arc::new(own));
            rules.extend(parent.iter().cloned());
            Arc::new(rules)
        }
        _ => parent,
    }
}

/// Whether the rules leave `path` out (the deepest file that says anything decides).
fn left_out(rules: &Rules, path: &Path, is_dir: bool) -> bool {
    for rules in rules.iter() {
        let m = rules.matched(path, is_dir);
        if m.is_ignore() {
            return true;
        }
        if m.is_whitelist() {
            return false;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, relative: &str, text: &str) {
        let path = root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn files_are_found_outside_the_shields_and_left_out_folders_are_marked() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, ".gitignore", "target/\n*.log\n");
        write(&root, "src/main.rs", "fn main() {}\n");
        write(&root, "target/debug/app", "binary");
        write(&root, "pkg/.gitignore", "out\n!keep.log\n");
        write(&root, "pkg/out/x.js", "x");
        write(&root, "pkg/keep.log", "kept");
        write(&root, ".env", "KEY=secret\n");
        write(&root, ".git/config", "[core]\n");
        std::fs::hard_link(root.join(".env"), root.join("src/alias")).unwrap();
        let survey = survey(&root);
        let found: Vec<(&str, Option<&str>)> = survey
            .files
            .iter()
            .map(|f| (f.relative.as_str(), f.ignored_in.as_deref()))
            .collect();
        for expected in [
            ("src/main.rs", None),
            ("target/debug/app", Some("target")),
            ("pkg/out/x.js", Some("pkg/out")),
            ("pkg/keep.log", None),
            (".gitignore", None),
        ] {
            assert!(found.contains(&expected), "{expected:?} in {found:?}");
        }
        for never in [".env", ".git/config", "src/alias"] {
            assert!(
                !found.iter().any(|(p, _)| *p == never),
                "{never} in {found:?}"
            );
        }
        let shielded = super::super::exposure::paths(&survey.shielded);
        assert!(shielded.contains(&root.join("src/alias")), "{shielded:?}");
        assert!(!survey.cut);
    }

    #[test]
    fn a_gitignore_that_is_a_pipe_or_a_link_is_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        write(&root, "rules", "target/\n");
        std::os::unix::fs::symlink(root.join("rules"), root.join(".gitignore")).unwrap();
        write(&root, "target/a", "a");
        let sub = root.join("sub");
        std::fs::create_dir_all(&sub).unwrap();
        let fifo = std::ffi::CString::new(sub.join(".gitignore").to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        write(&root, "sub/b", "b");
        let survey = survey(&root);
        assert!(
            survey
                .files
                .iter()
                .all(|f| f.ignored_in.is_none() || f.relative == ".gitignore"),
            "{:?}",
            survey.files
        );
    }
}
