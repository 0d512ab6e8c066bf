//! Matching inside one file: the pattern compiled (or taken literally when it is not a valid
//! regex), binary files skipped, matching lines collected and long lines cut around the match.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use regex::bytes::{Regex, RegexBuilder};

use crate::tools::error::ToolError;

/// The longest pattern accepted, in characters.
const MAX_PATTERN_CHARS: usize = 1000;
/// The widest matching line shown, in characters.
pub const MAX_LINE_CHARS: usize = 240;
/// How much of a file's start is checked for NUL bytes.
const BINARY_PROBE_BYTES: usize = 8192;

/// One matching line.
pub(super) struct Hit {
    /// The file, as shown.
    pub(super) path: String,
    /// Its line number, from 1.
    pub(super) line: usize,
    /// The line, cut around the match when long.
    pub(super) text: String,
}

/// Counters and results shared by the walker's threads.
#[derive(Default)]
pub(super) struct Shared {
    /// The matching lines kept.
    pub(super) hits: Mutex<Vec<Hit>>,
    /// Matches found (one past the limit proves the result was cut).
    pub(super) found: AtomicUsize,
    /// Text files searched.
    pub(super) files: AtomicUsize,
    /// Binary files skipped.
    pub(super) binary: AtomicUsize,
    /// Files skipped for their size.
    pub(super) large: AtomicUsize,
    /// Folders not entered.
    pub(super) skipped_dirs: AtomicUsize,
    /// Set once the limit is reached: every thread stops.
    pub(super) stop: AtomicBool,
}

/// The compiled pattern and whether it had to be taken literally (with the parse error).
pub(super) fn build_matcher(
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
pub(super) fn search_bytes(data: &[u8], shown: &str, re: &Regex, limit: usize, shared: &Shared) {
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
