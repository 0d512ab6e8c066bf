//! One walk of the workspace, before each command and again after it: what the jail must
//! shield (`exposure`'s rules) and the state of every file a command could change (`manifest`
//! compares two of them). One walk serves both, so watching for changes costs only the
//! bookkeeping. Folders the project's `.gitignore` files leave out (`target/`), and those no tool
//! may write (`node_modules/`, `__pycache__/`, `.venv/`), are walked too, by their file states
//! only: a change in them is listed, not kept. Past its entry limit (`[run_command] max_entries`, default [`MAX_ENTRIES`]) the walk
//! stops, and a command is refused rather than run half-shielded.

use std::collections::{HashSet, VecDeque};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use rustix::fs::{AtFlags, Mode, OFlags};

use crate::capped_read::{Links, read_capped};
use crate::jail::Shielded;
use crate::tools::hidden;
use crate::tools::sandbox::is_config_name;

use super::exposure::read_only_name;

/// The most entries looked at before each command by default (a few tens of milliseconds).
pub const MAX_ENTRIES: usize = 50_000;

/// The largest `.gitignore` read (a hostile one could be huge, or a pipe).
const MAX_GITIGNORE: u64 = 256 * 1024;

/// The shielded entries of the workspace at `root` (a real path), hidden ones first.
pub fn shielded(root: &Path) -> Vec<Shielded> {
    survey(root, MAX_ENTRIES).shielded
}

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
    /// The device and inode of each shielded entry: a shielded name whose entry is not one of
    /// these afterwards was made (or swapped in) by the command.
    pub shielded_ids: HashSet<(u64, u64)>,
    /// Every file and link outside the shielded entries, in walk order.
    pub files: Vec<Found>,
    /// Whether the walk stopped at its entry limit (what lies deeper was not seen).
    pub cut: bool,
    /// Whether the tree changed under the walk (a folder gone, replaced or seen twice): what
    /// it found cannot be trusted to cover everything.
    pub disturbed: bool,
}

/// The `.gitignore` rules in force in a folder: its own and its parents', deepest first.
type Rules = Arc<Vec<Arc<Gitignore>>>;

/// A folder waiting to be walked: its path, the device and inode the listing above it saw,
/// its rules and the left-out folder holding it.
type Queued = (PathBuf, (u64, u64), Rules, Option<String>);

/// Walks the workspace at `root` (a real path), breadth first, looking at no more than
/// `max_entries` entries. Each folder is opened without following a link and must be the one
/// its parent listed (a folder swapped for another, or for a link, while the walk runs marks
/// it `disturbed`); entries are looked at through their folder's handle, never through a
/// path that could lead elsewhere.
pub fn survey(root: &Path, max_entries: usize) -> Survey {
    let mut out = Survey::default();
    let mut hidden_entries: Vec<PathBuf> = hidden::own_folders_in(root);
    let mut read_only = Vec::new();
    let mut hidden_inodes = HashSet::new();
    let mut linked = Vec::new();
    let mut visited = HashSet::new();
    let Ok(top) = std::fs::symlink_metadata(root) else {
        out.disturbed = true;
        return out;
    };
    let mut queue: VecDeque<Queued> = VecDeque::from([(
        root.to_path_buf(),
        (top.dev(), top.ino()),
        Arc::new(Vec::new()),
        None,
    )]);
    let mut seen = 0;
    'walk: while let Some((dir, id, parent_rules, ignored_in)) = queue.pop_front() {
        let Some(handle) = open_folder(&dir, id, &mut visited) else {
            out.disturbed = true;
            continue;
        };
        let rules = match ignored_in {
            // Inside a left-out folder nothing more needs deciding.
            Some(_) => parent_rules,
            None => with_gitignore(&dir, parent_rules),
        };
        let Ok(mut listing) = rustix::fs::Dir::read_from(&handle) else {
            out.disturbed = true;
            continue;
        };
        while let Some(Ok(entry)) = listing.read() {
            let name_bytes = entry.file_name().to_bytes();
            if name_bytes == b"." || name_bytes == b".." {
                continue;
            }
            seen += 1;
            if seen > max_entries {
                out.cut = true;
                break 'walk;
            }
            let name = std::ffi::OsStr::from_bytes(name_bytes).to_os_string();
            let path = dir.join(&name);
            let Ok(stat) =
                rustix::fs::statat(&handle, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
            else {
                continue;
            };
            let meta = Meta::of(&stat);
            if hidden::entry_hidden(root, &dir, &name).is_some() {
                if meta.kind == Kind::File {
                    hidden_inodes.insert(meta.id);
                }
                out.shielded_ids.insert(meta.id);
                if !hidden_entries.contains(&path) {
                    hidden_entries.push(path);
                }
                continue;
            }
            if read_only_name(&name) {
                out.shielded_ids.insert(meta.id);
                read_only.push(path);
                continue;
            }
            let relative = || {
                path.strip_prefix(root)
                    .unwrap_or(&path)
                    .to_string_lossy()
                    .into_owned()
            };
            match meta.kind {
                Kind::Dir => {
                    // A dependency folder or interpreter cache (`node_modules`, `__pycache__`,
                    // `.venv`) is one no tool may write, so /undo could not put it back either.
                    let unwritable = is_config_name(&name.to_string_lossy());
                    let ignored = ignored_in
                        .clone()
                        .or_else(|| (unwritable || left_out(&rules, &path, true)).then(relative));
                    queue.push_back((path, meta.id, rules.clone(), ignored));
                }
                Kind::File | Kind::Link => {
                    if meta.kind == Kind::File && stat.st_nlink > 1 {
                        linked.push((path.clone(), meta.id));
                    }
                    out.files.push(Found {
                        relative: relative(),
                        stat: meta.file_stat(&stat),
                        ignored_in: ignored_in.clone(),
                    });
                }
                Kind::Other => {}
            }
        }
    }
    // Another name of a hidden file is hidden too (and was never a file to keep).
    let linked_hidden: Vec<PathBuf> = linked
        .into_iter()
        .filter(|(_, id)| hidden_inodes.contains(id))
        .map(|(path, _)| path)
        .collect();
    out.files
        .retain(|f| !linked_hidden.iter().any(|p| p.ends_with(&f.relative)));
    hidden_entries.extend(linked_hidden);
    out.shielded = hidden_entries
        .into_iter()
        .map(Shielded::Hidden)
        .chain(read_only.into_iter().map(Shielded::ReadOnly))
        .collect();
    out
}

/// What an entry is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    File,
    Dir,
    Link,
    Other,
}

/// An entry's kind and identity.
struct Meta {
    kind: Kind,
    id: (u64, u64),
}

impl Meta {
    fn of(stat: &rustix::fs::Stat) -> Self {
        let kind = match rustix::fs::FileType::from_raw_mode(stat.st_mode) {
            rustix::fs::FileType::RegularFile => Kind::File,
            rustix::fs::FileType::Directory => Kind::Dir,
            rustix::fs::FileType::Symlink => Kind::Link,
            _ => Kind::Other,
        };
        Self {
            kind,
            id: (stat.st_dev, stat.st_ino),
        }
    }

    fn file_stat(&self, stat: &rustix::fs::Stat) -> FileStat {
        let ns = |secs: i64, nanos: i64| i128::from(secs) * 1_000_000_000 + i128::from(nanos);
        FileStat {
            size: u64::try_from(stat.st_size).unwrap_or(0),
            modified: ns(stat.st_mtime, stat.st_mtime_nsec as i64),
            changed: ns(stat.st_ctime, stat.st_ctime_nsec as i64),
            inode: stat.st_ino,
            link: self.kind == Kind::Link,
        }
    }
}

/// Opens the folder at `path` without following a link in its last part, and only if it is
/// the folder its parent listed (`id`) and was not walked already (a folder moved under the
/// walk is seen twice, or not at all). `None`: the tree changed under the walk.
fn open_folder(
    path: &Path,
    id: (u64, u64),
    visited: &mut HashSet<(u64, u64)>,
) -> Option<rustix::fd::OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let handle = rustix::fs::open(path, flags, Mode::empty()).ok()?;
    let stat = rustix::fs::fstat(&handle).ok()?;
    let opened = (stat.st_dev, stat.st_ino);
    (opened == id && visited.insert(opened)).then_some(handle)
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
        let survey = survey(&root, MAX_ENTRIES);
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
        let survey = survey(&root, MAX_ENTRIES);
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
