//! The workspace's files as a command found them, and what it changed: before a command every
//! file's content is kept once (`ChangeKeeper`, the session's checkpoints), named by its hash;
//! a file whose metadata has not moved since the last command keeps the hash it had, so only
//! what changed in between is read again. After the command the same walk tells which files
//! were created, changed and deleted; `/undo` puts them back from what was kept.

use std::collections::{BTreeSet, HashMap};

use sha2::{Digest, Sha256};

use crate::tools::file_edit::MAX_WRITE_BYTES;
use crate::tools::kept_changes::ChangeKeeper;
use crate::tools::sandbox::{Sandbox, is_config_name};
use crate::tools::snapshot::snapshot;

use super::survey::{FileStat, Found};

/// The most bytes read for one manifest: past it, files are listed when they change but not
/// kept (a first command in a huge workspace stays bounded).
const MAX_READ_BYTES: u64 = 512 * 1024 * 1024;

/// Metadata this recent may not show a change made in the same clock tick: such a file's hash
/// is not reused (git's "racily clean" entries).
const RACY_NS: i128 = 2_000_000_000;

/// One file as a manifest saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// Its metadata.
    pub stat: FileStat,
    /// The hash of its content, kept (`None`: not kept: a link, a left-out folder's file, one
    /// too large or unreadable).
    pub hash: Option<String>,
    /// The left-out folder holding it, if any.
    pub ignored_in: Option<String>,
}

/// The workspace's files at one moment.
#[derive(Clone, Debug, Default)]
pub struct Manifest {
    /// Every file by its path as shown.
    pub entries: HashMap<String, Entry>,
    /// The store the hashes were kept in (`None`: hashed only).
    store: Option<String>,
    /// When it was taken (nanoseconds since the epoch).
    taken: i128,
}

/// What a command changed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// Files it created, with nothing kept before them.
    pub created: Vec<String>,
    /// Files whose content it changed, with the hash of what they held before.
    pub changed: Vec<(String, Option<String>)>,
    /// Files it deleted, with the hash of what they held.
    pub deleted: Vec<(String, Option<String>)>,
    /// Folders (left out by `.gitignore`) or files whose change cannot be put back.
    pub not_kept: BTreeSet<String>,
}

impl Changes {
    /// Whether it changed nothing.
    pub fn is_empty(&self) -> bool {
        self.created.is_empty()
            && self.changed.is_empty()
            && self.deleted.is_empty()
            && self.not_kept.is_empty()
    }
}

fn now_ns() -> i128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i128)
}

impl Manifest {
    /// The manifest of the files the walk `found`, reusing the hashes of `previous` where a
    /// file's metadata has not moved, keeping every newly read content in `keeper`.
    pub fn take(
        found: Vec<Found>,
        previous: Option<&Manifest>,
        sandbox: &Sandbox,
        keeper: Option<&dyn ChangeKeeper>,
    ) -> Manifest {
        let store = keeper.map(|k| k.store_id());
        let previous = previous.filter(|p| p.store == store);
        let taken = now_ns();
        let mut budget = MAX_READ_BYTES;
        let mut entries = HashMap::with_capacity(found.len());
        for file in found {
            let reused = previous
                .and_then(|p| p.entries.get(&file.relative))
                .filter(|e| e.stat == file.stat && e.hash.is_some())
                .filter(|_| previous.is_some_and(|p| p.taken - file.stat.changed > RACY_NS))
                .and_then(|e| e.hash.clone());
            let hash = match reused {
                Some(hash) => Some(hash),
                None if file.stat.link || file.ignored_in.is_some() => None,
                None if is_config_name(file.relative.rsplit('/').next().unwrap_or_default()) => {
                    None
                }
                None if file.stat.size > budget => None,
                None => {
                    let hash = read_and_keep(sandbox, &file.relative, keeper);
                    budget = budget.saturating_sub(file.stat.size);
                    hash
                }
            };
            entries.insert(
                file.relative,
                Entry {
                    stat: file.stat,
                    hash,
                    ignored_in: file.ignored_in,
                },
            );
        }
        Manifest {
            entries,
            store,
            taken,
        }
    }

    /// What changed from `self` (before a command) to `after`, sorted by path.
    pub fn changes_to(&self, after: &Manifest) -> Changes {
        let mut changes = Changes::default();
        let mut paths: Vec<&String> = self.entries.keys().chain(after.entries.keys()).collect();
        paths.sort();
        paths.dedup();
        for path in paths {
            let (was, now) = (self.entries.get(path), after.entries.get(path));
            let unkept = |e: &Entry| e.hash.is_none();
            match (was, now) {
                (Some(a), Some(b)) if a.stat == b.stat && a.hash == b.hash => continue,
                (Some(a), Some(b)) if a.hash.is_some() && a.hash == b.hash => continue,
                _ => {}
            }
            let not_kept_as = |e: &Entry| {
                e.ignored_in
                    .as_ref()
                    .map_or_else(|| path.clone(), |folder| format!("{folder}/"))
            };
            match (was, now) {
                (None, Some(b)) if b.ignored_in.is_some() => {
                    changes.not_kept.insert(not_kept_as(b));
                }
                // A link, or a file that could not be kept (one no tool may write, a `*.pth`,
                // or one too large): /undo leaves it.
                (None, Some(b)) if b.stat.link || b.hash.is_none() => {
                    changes.not_kept.insert(path.clone());
                }
                (None, Some(_)) => changes.created.push(path.clone()),
                (Some(a), _) if unkept(a) => {
                    changes.not_kept.insert(not_kept_as(a));
                }
                (Some(a), Some(_)) => changes.changed.push((path.clone(), a.hash.clone())),
                (Some(a), None) => changes.deleted.push((path.clone(), a.hash.clone())),
                (None, None) => {}
            }
        }
        changes
    }
}

/// Reads the file at `relative` through the workspace's rules (no link followed, nothing
/// hidden) and keeps it; its hash (`None`: it could not be read or kept).
fn read_and_keep(
    sandbox: &Sandbox,
    relative: &str,
    keeper: Option<&dyn ChangeKeeper>,
) -> Option<String> {
    let bytes = snapshot(sandbox, relative).ok()?.bytes?;
    if bytes.len() > MAX_WRITE_BYTES {
        return None;
    }
    match keeper {
        Some(keeper) => keeper
            .keep(&bytes)
            .map_err(|e| tracing::warn!(path = relative, error = %e, "not kept for undo"))
            .ok(),
        None => Some(
            Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::command::survey::survey;

    fn manifest(sandbox: &Sandbox, previous: Option<&Manifest>) -> Manifest {
        Manifest::take(
            survey(sandbox.root(), crate::tools::command::survey::MAX_ENTRIES).files,
            previous,
            sandbox,
            None,
        )
    }

    #[test]
    fn created_changed_deleted_and_left_out_files_are_told_apart() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("a.txt"), "a\n").unwrap();
        std::fs::write(root.join("b.txt"), "b\n").unwrap();
        std::fs::write(root.join("same.txt"), "same\n").unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join("target/old"), "o").unwrap();
        let sandbox = Sandbox::new(root).unwrap();
        let before = manifest(&sandbox, None);
        std::fs::write(root.join("a.txt"), "A\n").unwrap();
        std::fs::remove_file(root.join("b.txt")).unwrap();
        std::fs::write(root.join("c.txt"), "c\n").unwrap();
        std::fs::write(root.join("target/new"), "n").unwrap();
        std::fs::create_dir_all(root.join("__pycache__")).unwrap();
        std::fs::write(root.join("__pycache__/a.pyc"), "p").unwrap();
        std::fs::write(root.join("x.pth"), "import os").unwrap();
        // Rewritten with the same content: not a change.
        std::fs::write(root.join("same.txt"), "same\n").unwrap();
        let after = manifest(&sandbox, Some(&before));
        let changes = before.changes_to(&after);
        let hash_of = |p: &str| before.entries[p].hash.clone();
        assert_eq!(changes.created, ["c.txt"]);
        assert_eq!(changes.changed, [("a.txt".to_string(), hash_of("a.txt"))]);
        assert_eq!(changes.deleted, [("b.txt".to_string(), hash_of("b.txt"))]);
        assert_eq!(
            changes.not_kept.iter().collect::<Vec<_>>(),
            ["__pycache__/", "target/", "x.pth"]
        );
        // Nothing changed since: nothing to tell.
        assert!(
            after
                .changes_to(&manifest(&sandbox, Some(&after)))
                .is_empty()
        );
    }

    #[test]
    fn a_hash_is_reused_only_while_the_metadata_is_settled() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "one\n").unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        let mut old = manifest(&sandbox, None);
        // Taken long after the file's last change: its hash is trusted without reading.
        old.taken += 10 * RACY_NS;
        let planted = old.entries.get_mut("a.txt").unwrap();
        planted.hash = Some("planted".into());
        let settled = manifest(&sandbox, Some(&old));
        assert_eq!(settled.entries["a.txt"].hash.as_deref(), Some("planted"));
        // Taken just after it: read again.
        old.taken -= 10 * RACY_NS;
        let racy = manifest(&sandbox, Some(&old));
        assert_ne!(racy.entries["a.txt"].hash.as_deref(), Some("planted"));
    }
}
