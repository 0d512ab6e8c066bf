//! The key file, `<config dir>/miniclaw/.env`: reading `DEEPSEEK_API_KEY` from it without
//! touching the process environment, noticing that it changed, and saving a key into it.
//!
//! A save never leaves a half-written file: the new content goes through `durable::replace` (a
//! temporary file created with exactly mode 0600 in the same folder, synced, renamed over the
//! old one). Every other line of an existing file is kept.

use std::fs::{self, DirBuilder, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::Secret;

/// The variable the key file holds the model key in.
pub const KEY_VAR: &str = "DEEPSEEK_API_KEY";

/// Larger files are not read or rewritten: a key file is a few lines.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// The longest key accepted.
pub const MAX_KEY_CHARS: usize = 512;

/// Why the key file could not be read or written (the message never holds the key).
#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    /// Reading failed.
    #[error("could not read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// What the system said.
        source: io::Error,
    },
    /// Writing failed; the file is as it was.
    #[error("could not write {path}: {source}")]
    Write {
        /// The file.
        path: String,
        /// What the system said.
        source: io::Error,
    },
    /// The file is too large to be a key file; it was left alone.
    #[error("{path} is larger than 1 MB, so it was left alone")]
    TooLarge {
        /// The file.
        path: String,
    },
    /// The key has a character that would need quoting in a `.env` file (or is empty).
    #[error(
        "a key is 1 to {MAX_KEY_CHARS} letters, digits and - _ . ~ + / = : , @ % (no spaces, quotes, $, # or \\)"
    )]
    BadKey,
}

/// Where the key file is, when the system has a config folder.
pub fn path() -> Option<PathBuf> {
    crate::paths::config_dir().map(|d| d.join(".env"))
}

/// Whether `c` may be part of a key: the characters a `.env` value keeps as they are without
/// quotes (no whitespace, quotes, `$`, `#` or `\`).
pub fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "-_.~+/=:,@%".contains(c)
}

/// Whether `key` can be saved and sent as it is.
pub fn is_valid_key(key: &str) -> bool {
    !key.is_empty() && key.chars().count() <= MAX_KEY_CHARS && key.chars().all(is_key_char)
}

/// What identifies one version of a file: a save renames a new file in (a new inode), an edit
/// changes its time or size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fingerprint {
    modified: Option<SystemTime>,
    len: u64,
    inode: u64,
    device: u64,
}

/// The fingerprint of the file at `path` (through links), or `None` when there is none.
pub fn fingerprint(path: &Path) -> Option<Fingerprint> {
    let meta = fs::metadata(path).ok()?;
    Some(Fingerprint {
        modified: meta.modified().ok(),
        len: meta.len(),
        inode: meta.ino(),
        device: meta.dev(),
    })
}

/// The key in the file at `path`: its first `DEEPSEEK_API_KEY` line, trimmed. `None` when the
/// file or the line is missing or the value is empty. Other lines that do not parse are skipped.
pub fn read_key(path: &Path) -> Result<Option<Secret>, KeyFileError> {
    let read_error = |source| KeyFileError::Read {
        path: path.display().to_string(),
        source,
    };
    use crate::capped_read::{CappedReadError, Links, read_capped_string};
    // One careful read: a pipe or a device there would block the key holder, and a swap
    // between a check and the read must not matter.
    let text = match read_capped_string(path, MAX_FILE_BYTES, Links::Follow) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(None),
        Err(CappedReadError::TooLarge { .. }) => {
            return Err(KeyFileError::TooLarge {
                path: path.display().to_string(),
            });
        }
        Err(CappedReadError::Io { source, .. }) => return Err(read_error(source)),
        Err(e) => return Err(read_error(io::Error::other(e.to_string()))),
    };
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            // The first one counts, as when the file is loaded at start.
            Ok((name, value)) if name == KEY_VAR => {
                let value = value.trim();
                return Ok((!value.is_empty()).then(|| Secret::new(value)));
            }
            Ok(_) | Err(dotenvy::Error::LineParse(..)) => {}
            Err(dotenvy::Error::Io(e)) => return Err(read_error(e)),
            Err(e) => return Err(read_error(io::Error::other(e.to_string()))),
        }
    }
    Ok(None)
}

/// Saves `key` as the file's `DEEPSEEK_API_KEY` line: the first such line is replaced (later
/// ones dropped, as they would be ignored) or one is added; every other line stays. The folder
/// is created with mode 0700 if missing; the file ends with mode 0600. A link is written through
/// to its target.
pub fn save_key(path: &Path, key: &Secret) -> Result<(), KeyFileError> {
    if !is_valid_key(key.expose()) {
        return Err(KeyFileError::BadKey);
    }
    let write_error = |source| KeyFileError::Write {
        path: path.display().to_string(),
        source,
    };
    let target = match fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => fs::canonicalize(path).map_err(write_error)?,
        _ => path.to_path_buf(),
    };
    let folder = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(folder)
        .map_err(write_error)?;
    let old = read_existing(&target)?;
    let new = with_key(&old, key.expose());
    // Exactly 0600 and never through a link at the temporary name (`durable::replace`).
    crate::durable::replace(&target, |file| file.write_all(new.as_bytes()))
        .map(|_| ())
        .map_err(write_error)
}

/// The file's text, empty when it does not exist.
fn read_existing(path: &Path) -> Result<String, KeyFileError> {
    let read_error = |source| KeyFileError::Read {
        path: path.display().to_string(),
        source,
    };
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(String::new()),
        Err(e) => return Err(read_error(e)),
    };
    let mut bytes = Vec::new();
    Read::by_ref(&mut file)
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(read_error)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(KeyFileError::TooLarge {
            path: path.display().to_string(),
        });
    }
    // Rewriting a file that is not text could damage it; it is left as it is.
    String::from_utf8(bytes).map_err(|e| read_error(io::Error::new(io::ErrorKind::InvalidData, e)))
}

/// Whether `line` assigns the key (`DEEPSEEK_API_KEY=…`, maybe after `export`).
fn is_key_line(line: &str) -> bool {
    let line = line.trim_start();
    let line = line
        .strip_prefix("export")
        .filter(|rest| rest.starts_with(char::is_whitespace))
        .map_or(line, str::trim_start);
    line.strip_prefix(KEY_VAR)
        .is_some_and(|rest| rest.trim_start().starts_with('='))
}

/// `text` with its key line set to `key`.
fn with_key(text: &str, key: &str) -> String {
    let line = format!("{KEY_VAR}={key}");
    let mut out = Vec::new();
    let mut replaced = false;
    for old in text.lines() {
        if !is_key_line(old) {
            out.push(old.to_string());
        } else if !replaced {
            out.push(line.clone());
            replaced = true;
        }
    }
    if !replaced {
        out.push(line);
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests;
