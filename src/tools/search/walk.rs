//! The walk of a search: every folder opened from its parent's handle (no link followed), the
//! files found searched on a few threads.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use cap_std::fs::Dir;
use regex::bytes::Regex;
use tokio_util::sync::CancellationToken;

use super::ignores::Ignores;
use super::matcher::{Shared, search_bytes};
use crate::tools::error::{ToolError, io_failed};
use crate::tools::hidden;
use crate::tools::sandbox::Sandbox;
use crate::tools::workspace_io::{open_child_dir, open_dir, open_file, read_child_file};

/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;

/// A file found by the walk: its folder (relative to the searched one), its name there, and its
/// path as shown. Folders are not kept open: a tree of thousands of folders must not use up the
/// process's file descriptors.
pub(super) struct Job {
    parent: PathBuf,
    name: OsString,
    shown: String,
}

/// The folders deepest in the tree that are searched (each level holds one descriptor while the
/// walk is below it).
const MAX_DEPTH: usize = 100;

/// A listing's share of a walk: the paths found, handed out in batches as the walk goes, so
/// the first ones can be shown before the walk ends.
pub(super) struct Listing<'a> {
    /// Found and not handed out yet.
    pub(super) pending: Vec<String>,
    /// How many paths go in one batch.
    pub(super) batch: usize,
    /// Files still to take before the walk stops.
    pub(super) room: usize,
    /// Takes each batch.
    pub(super) each: &'a mut dyn FnMut(Vec<String>),
}

/// What the walk is looking for and has found.
pub(super) struct Walk<'a> {
    pub(super) ignores: Ignores,
    /// Files to search (none are kept for a listing).
    pub(super) jobs: Vec<Job>,
    /// Set for a listing: the paths go there instead of `jobs`.
    pub(super) listing: Option<Listing<'a>>,
    /// Folders not entered: too deep, or they could not be opened.
    pub(super) skipped_dirs: usize,
    pub(super) shared: &'a Shared,
    pub(super) cancel: &'a CancellationToken,
    /// Whether the searched folder is the workspace root, where MiniClaw's own files lie.
    pub(super) from_root: bool,
    /// MiniClaw's own folders beneath the searched folder, relative to it (`hidden`).
    pub(super) own_below: Vec<PathBuf>,
}

impl Walk<'_> {
    /// Collects the files under `dir` (at `rel` from the search folder, shown under `shown`),
    /// opening each child folder from its parent's handle without following links.
    pub(super) fn collect(&mut self, dir: &Dir, rel: &Path, shown: &str, depth: usize) {
        if self.cancel.is_cancelled() || self.shared.stop.load(Ordering::Relaxed) {
            return;
        }
        self.ignores.enter(dir, rel, depth);
        let Ok(entries) = dir.entries() else {
            return;
        };
        let mut children: Vec<(OsString, bool)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let kind = e.file_type().ok()?;
                (kind.is_dir() || kind.is_file()).then(|| (e.file_name(), kind.is_dir()))
            })
            .collect();
        children.sort();
        let at_root = self.from_root && rel.as_os_str().is_empty();
        for (name, is_dir) in children {
            // Links are never walked, so a name is all that can make an entry hidden here.
            if name == ".git"
                || hidden::name_hidden(&name, at_root).is_some()
                || self.own_below.iter().any(|f| *f == rel.join(&name))
            {
                continue;
            }
            let child_rel = rel.join(&name);
            if self.ignores.ignored(&child_rel, is_dir) {
                continue;
            }
            let child_shown = join_shown(shown, &name);
            if is_dir {
                match open_child_dir(dir, &name) {
                    Ok(child) if depth < MAX_DEPTH => {
                        self.collect(&child, &child_rel, &child_shown, depth + 1);
                        self.ignores.leave(depth);
                    }
                    _ => self.skipped_dirs += 1,
                }
            } else if let Some(listing) = &mut self.listing {
                listing.take(child_shown, self.shared);
            } else {
                self.jobs.push(Job {
                    parent: rel.to_path_buf(),
                    name,
                    shown: child_shown,
                });
            }
        }
    }
}

impl Listing<'_> {
    /// Keeps one path, handing out a full batch; stops the walk once there is no more room.
    fn take(&mut self, shown: String, shared: &Shared) {
        if self.room == 0 {
            shared.stop.store(true, Ordering::Relaxed);
            return;
        }
        self.room -= 1;
        self.pending.push(shown);
        if self.pending.len() >= self.batch {
            self.flush();
        }
    }

    /// Hands out what is pending, if anything.
    pub(super) fn flush(&mut self) {
        if !self.pending.is_empty() {
            (self.each)(std::mem::take(&mut self.pending));
        }
    }
}

/// `shown/name`, or `name` under the root.
fn join_shown(shown: &str, name: &OsStr) -> String {
    let name = name.to_string_lossy();
    if shown == "." || shown.is_empty() {
        name.into_owned()
    } else {
        format!("{shown}/{name}")
    }
}

/// Opens the folder at `rel` under `base`, one name at a time without following links.
fn open_under(base: &Dir, rel: &Path) -> Option<Dir> {
    let mut current: Option<Dir> = None;
    for part in rel.components() {
        let parent = current.as_ref().unwrap_or(base);
        current = Some(open_child_dir(parent, part.as_os_str()).ok()?);
    }
    current.or_else(|| base.try_clone().ok())
}

/// Searches the files found by the walk on a few threads, each reading its file through its
/// folder's handle (no link followed, plain single-link files only). A thread keeps only the
/// folder of its last file open.
fn search_jobs(
    base: &Dir,
    jobs: &[Job],
    re: &Regex,
    limit: usize,
    shared: &Shared,
    cancel: &CancellationToken,
) {
    let next = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(1, 8);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut open: Option<(&Path, Dir)> = None;
                while !shared.stop.load(Ordering::Relaxed) && !cancel.is_cancelled() {
                    let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) else {
                        break;
                    };
                    if open
                        .as_ref()
                        .is_none_or(|(p, _)| *p != job.parent.as_path())
                    {
                        open = open_under(base, &job.parent).map(|d| (job.parent.as_path(), d));
                    }
                    let Some((_, dir)) = &open else { continue };
                    match read_child_file(dir, &job.name, MAX_FILE_BYTES) {
                        Some(data)
                            if u64::try_from(data.len()).map_or(true, |n| n > MAX_FILE_BYTES) =>
                        {
                            shared.large.fetch_add(1, Ordering::Relaxed);
                        }
                        Some(data) => search_bytes(&data, &job.shown, re, limit, shared),
                        None => {}
                    }
                }
            });
        }
    });
}

/// MiniClaw's own folders beneath the workspace folder shown as `shown`, relative to it.
pub(super) fn own_below(sandbox: &Sandbox, shown: &str) -> Vec<PathBuf> {
    let start = if shown == "." {
        sandbox.root().to_path_buf()
    } else {
        sandbox.root().join(shown)
    };
    hidden::own_folders_in(sandbox.root())
        .iter()
        .filter_map(|f| f.strip_prefix(&start).ok().map(Path::to_path_buf))
        .collect()
}

/// Walks the folder `relative` (or searches the single file it names) and collects up to
/// `limit` matches.
pub(super) fn run_search(
    sandbox: &Sandbox,
    relative: &str,
    shown: &str,
    re: &Regex,
    limit: usize,
    include_ignored: bool,
    cancel: &CancellationToken,
) -> Result<Shared, ToolError> {
    let shared = Shared::default();
    let dir = match open_dir(sandbox, relative, shown) {
        Ok(dir) => dir,
        Err(not_a_folder) => {
            // A single file: searched whatever the ignore files say.
            let Ok((file, meta)) = open_file(sandbox, relative, shown) else {
                return Err(not_a_folder);
            };
            if meta.len() > MAX_FILE_BYTES {
                shared.large.fetch_add(1, Ordering::Relaxed);
                return Ok(shared);
            }
            let mut data = Vec::new();
            file.take(MAX_FILE_BYTES)
                .read_to_end(&mut data)
                .map_err(|e| io_failed("search", shown, &e))?;
            search_bytes(&data, shown, re, limit, &shared);
            return Ok(shared);
        }
    };
    let mut walk = Walk {
        ignores: Ignores::new(!include_ignored),
        jobs: Vec::new(),
        listing: None,
        skipped_dirs: 0,
        shared: &shared,
        cancel,
        // `Sandbox::display_relative` shows the root, and only the root, as ".".
        from_root: shown == ".",
        own_below: own_below(sandbox, shown),
    };
    walk.collect(&dir, Path::new(""), shown, 0);
    let jobs = std::mem::take(&mut walk.jobs);
    shared
        .skipped_dirs
        .store(walk.skipped_dirs, Ordering::Relaxed);
    search_jobs(&dir, &jobs, re, limit, &shared, cancel);
    Ok(shared)
}
