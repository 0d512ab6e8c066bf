//! `search_files`: a regex search over the workspace's text files, using a parallel walker.
//!
//! What is searched: every regular file under the folder, hidden ones included. Files that the
//! workspace's own `.gitignore`/`.ignore` files exclude are skipped (so `target/` or
//! `node_modules/` do not drown the results) unless `include_ignored` is true; ignore files above
//! the searched folder and the global git excludes are never read. The `.git` folder is never
//! searched, symbolic links are not followed, and binary files (a NUL byte in their first 8 KB)
//! are skipped. The walk opens every folder and file from its parent's handle, so a folder
//! swapped for a link mid-walk cannot lead it out of the workspace.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use cap_std::fs::Dir;
use ignore::gitignore::{Gitignore, GitignoreBuilder};
use regex::bytes::{Regex, RegexBuilder};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::error::io_failed;
use super::registry::{
    Tool, ToolContext, ToolError, ToolFuture, ToolRegistry, arg_opt_bool, arg_opt_str, arg_opt_u64,
    arg_str,
};
use super::sandbox::Sandbox;
use super::support::{blocking, fields};
use super::workspace_io::{open_child_dir, open_dir, open_file, read_child_file};
use crate::llm::ToolSchema;

/// Matches returned when the call does not say.
const DEFAULT_MAX_MATCHES: u64 = 50;
/// The most matches one call may ask for.
pub const MAX_MATCHES: u64 = 500;
/// The longest pattern accepted, in characters.
const MAX_PATTERN_CHARS: usize = 1000;
/// The widest matching line shown, in characters.
pub const MAX_LINE_CHARS: usize = 240;
/// Files larger than this are skipped.
const MAX_FILE_BYTES: u64 = 20 * 1024 * 1024;
/// The largest ignore file read.
const MAX_IGNORE_BYTES: u64 = 1024 * 1024;
/// How much of a file's start is checked for NUL bytes.
const BINARY_PROBE_BYTES: usize = 8192;

/// Adds this family's tools.
pub fn register(registry: &mut ToolRegistry) {
    registry.register(SearchFiles);
}

/// One matching line.
struct Hit {
    path: String,
    line: usize,
    text: String,
}

/// Counters and results shared by the walker's threads.
#[derive(Default)]
struct Shared {
    hits: Mutex<Vec<Hit>>,
    found: AtomicUsize,
    files: AtomicUsize,
    binary: AtomicUsize,
    large: AtomicUsize,
    skipped_dirs: AtomicUsize,
    stop: AtomicBool,
}

/// The compiled pattern and whether it had to be taken literally (with the parse error).
fn build_matcher(
    pattern: &str,
    case_sensitive: bool,
) -> Result<(Regex, Option<String>), ToolError> {
    if pattern.is_empty() {
        return Err(ToolError::InvalidArguments(
            "`pattern` must not be empty".into(),
        ));
    }
    if pattern.chars().count() > MAX_PATTERN_CHARS {
        return Err(ToolError::InvalidArguments(format!(
            "`pattern` is longer than {MAX_PATTERN_CHARS} characters"
        )));
    }
    let build = |p: &str| {
        RegexBuilder::new(p)
            .case_insensitive(!case_sensitive)
            .size_limit(16 * 1024 * 1024)
            .build()
    };
    match build(pattern) {
        Ok(re) => Ok((re, None)),
        Err(e) => {
            let literal = build(&regex::escape(pattern))
                .map_err(|e| ToolError::InvalidArguments(format!("unusable pattern: {e}")))?;
            let why = e
                .to_string()
                .lines()
                .last()
                .unwrap_or_default()
                .trim()
                .to_string();
            Ok((literal, Some(why)))
        }
    }
}

/// The line, cut to `MAX_LINE_CHARS` around the first match when it is long.
fn shown_line(line: &[u8], re: &Regex) -> String {
    let text = String::from_utf8_lossy(line);
    let text = text.trim_end();
    if text.chars().count() <= MAX_LINE_CHARS {
        return text.to_string();
    }
    let at = re.find(text.as_bytes()).map_or(0, |m| m.start());
    let mut start = at.saturating_sub(MAX_LINE_CHARS / 4);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let window: String = text[start..].chars().take(MAX_LINE_CHARS).collect();
    let before = if start > 0 { "…" } else { "" };
    let after = if start + window.len() < text.len() {
        "…"
    } else {
        ""
    };
    format!("{before}{window}{after}")
}

/// Searches one file's bytes, adding its matching lines until `limit` matches exist in all.
fn search_bytes(data: &[u8], shown: &str, re: &Regex, limit: usize, shared: &Shared) {
    if data[..data.len().min(BINARY_PROBE_BYTES)].contains(&0) {
        shared.binary.fetch_add(1, Ordering::Relaxed);
        return;
    }
    shared.files.fetch_add(1, Ordering::Relaxed);
    // One pass over the whole file first: most files do not match at all.
    if !re.is_match(data) {
        return;
    }
    let mut local = Vec::new();
    for (i, line) in data.split(|b| *b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !re.is_match(line) {
            continue;
        }
        if shared.found.fetch_add(1, Ordering::Relaxed) >= limit {
            // One past the limit proves the result was cut.
            shared.stop.store(true, Ordering::Relaxed);
            break;
        }
        local.push(Hit {
            path: shown.to_string(),
            line: i + 1,
            text: shown_line(line, re),
        });
    }
    if let Ok(mut hits) = shared.hits.lock() {
        hits.extend(local);
    }
}

/// A file found by the walk: its folder (relative to the searched one), its name there, and its
/// path as shown. Folders are not kept open: a tree of thousands of folders must not use up the
/// process's file descriptors.
struct Job {
    parent: PathBuf,
    name: OsString,
    shown: String,
}

/// The folders deepest in the tree that are searched (each level holds one descriptor while the
/// walk is below it).
const MAX_DEPTH: usize = 100;

/// The ignore rules in force while walking: one matcher per folder that has rules, deepest
/// last. Paths are matched as `/`-rooted paths relative to the search folder.
struct Ignores {
    respect: bool,
    stack: Vec<(usize, Gitignore)>,
}

impl Ignores {
    /// Adds the rules of the folder at `rel` (depth `depth`): `.git/info/exclude` first, then
    /// `.gitignore`, then `.ignore` (later lines win, as in git).
    fn enter(&mut self, dir: &Dir, rel: &Path, depth: usize) {
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
    fn leave(&mut self, depth: usize) {
        while self.stack.last().is_some_and(|(d, _)| *d > depth) {
            self.stack.pop();
        }
    }

    /// Whether the entry at `rel` is ignored: the deepest folder with a rule about it decides.
    fn ignored(&self, rel: &Path, is_dir: bool) -> bool {
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

/// What the walk is looking for and has found.
struct Walk<'a> {
    ignores: Ignores,
    jobs: Vec<Job>,
    /// Folders not entered: too deep, or they could not be opened.
    skipped_dirs: usize,
    shared: &'a Shared,
    cancel: &'a CancellationToken,
}

impl Walk<'_> {
    /// Collects the files under `dir` (at `rel` from the search folder, shown under `shown`),
    /// opening each child folder from its parent's handle without following links.
    fn collect(&mut self, dir: &Dir, rel: &Path, shown: &str, depth: usize) {
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
        for (name, is_dir) in children {
            if name == ".git" {
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
                        Some(data) if data.len() as u64 > MAX_FILE_BYTES => {
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

/// Walks the folder `relative` (or searches the single file it names) and collects up to
/// `limit` matches.
fn run_search(
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
        ignores: Ignores {
            respect: !include_ignored,
            stack: Vec::new(),
        },
        jobs: Vec::new(),
        skipped_dirs: 0,
        shared: &shared,
        cancel,
    };
    walk.collect(&dir, Path::new(""), shown, 0);
    let jobs = std::mem::take(&mut walk.jobs);
    shared
        .skipped_dirs
        .store(walk.skipped_dirs, Ordering::Relaxed);
    search_jobs(&dir, &jobs, re, limit, &shared, cancel);
    Ok(shared)
}

/// `search_files`: regex search of file contents.
struct SearchFiles;

impl Tool for SearchFiles {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "search_files".into(),
            description: format!(
                "Search the text files under a workspace folder for a regular expression (Rust \
                 regex syntax; a pattern that is not a valid regex is searched as literal text, \
                 and the result says so). Returns matching lines as `path:line:text` (long lines \
                 cut to {MAX_LINE_CHARS} characters around the match), sorted by path and line. \
                 Binary files, the `.git` folder and files excluded by the workspace's \
                 .gitignore are skipped (set `include_ignored` to search those too). \
                 `truncated` tells when more matches existed than `max_matches`."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "pattern": {"type": "string", "description": "Regular expression to find."},
                    "relative_dir": {
                        "type": "string",
                        "description": "Folder (or single file) to search, relative to the workspace; \".\" is the root.",
                        "default": "."
                    },
                    "case_sensitive": {
                        "type": "boolean",
                        "description": "Match letter case exactly (default false).",
                        "default": false
                    },
                    "max_matches": {
                        "type": "integer",
                        "description": format!("Most matching lines to return (default {DEFAULT_MAX_MATCHES}, at most {MAX_MATCHES})."),
                        "minimum": 1,
                        "maximum": MAX_MATCHES
                    },
                    "include_ignored": {
                        "type": "boolean",
                        "description": "Also search files excluded by .gitignore/.ignore (default false).",
                        "default": false
                    }
                },
                "required": ["pattern"]
            }),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let pattern = arg_str(&args, "pattern")?;
            let relative = arg_opt_str(&args, "relative_dir")?.unwrap_or(".");
            let case_sensitive = arg_opt_bool(&args, "case_sensitive")?.unwrap_or(false);
            let include_ignored = arg_opt_bool(&args, "include_ignored")?.unwrap_or(false);
            let limit = arg_opt_u64(&args, "max_matches", MAX_MATCHES)?
                .unwrap_or(DEFAULT_MAX_MATCHES)
                .max(1) as usize;
            let (re, literal_because) = build_matcher(pattern, case_sensitive)?;
            let shown = ctx
                .sandbox
                .display_relative(&ctx.sandbox.resolve_read(relative)?);
            let sandbox = ctx.sandbox.clone();
            let cancel = ctx.cancel.clone();
            let pattern = pattern.to_string();
            let relative = relative.to_string();
            blocking(move || {
                let shared = run_search(
                    &sandbox,
                    &relative,
                    &shown,
                    &re,
                    limit,
                    include_ignored,
                    &cancel,
                )?;
                if cancel.is_cancelled() {
                    return Err(ToolError::Cancelled);
                }
                let mut hits = shared.hits.into_inner().unwrap_or_default();
                hits.sort_by(|a, b| (&a.path, a.line).cmp(&(&b.path, b.line)));
                hits.truncate(limit);
                let truncated = shared.found.load(Ordering::Relaxed) > limit;
                let matches: Vec<String> = hits
                    .iter()
                    .map(|h| format!("{}:{}:{}", h.path, h.line, h.text))
                    .collect();
                let mut out = fields(json!({
                    "path": shown,
                    "pattern": pattern,
                    "literal": literal_because.is_some(),
                    "match_count": matches.len(),
                    "truncated": truncated,
                    "files_searched": shared.files.load(Ordering::Relaxed),
                    "binary_files_skipped": shared.binary.load(Ordering::Relaxed),
                    "matches": matches,
                }));
                let large = shared.large.load(Ordering::Relaxed);
                if large > 0 {
                    out.insert("large_files_skipped".into(), json!(large));
                }
                let skipped_dirs = shared.skipped_dirs.load(Ordering::Relaxed);
                if skipped_dirs > 0 {
                    out.insert("folders_skipped".into(), json!(skipped_dirs));
                }
                let mut notes = Vec::new();
                if let Some(why) = literal_because {
                    notes.push(format!(
                        "the pattern is not a valid regular expression ({why}); it was searched as literal text"
                    ));
                }
                if truncated {
                    notes.push(format!(
                        "stopped after {limit} matches; narrow the pattern or folder, or raise max_matches"
                    ));
                }
                if !notes.is_empty() {
                    out.insert("note".into(), json!(notes.join("; ")));
                }
                Ok(out)
            })
            .await
        })
    }
}
