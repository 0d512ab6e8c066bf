//! The file work of the history: reading without following a link or blocking on a pipe,
//! replacing the snapshot atomically, opening the journal safely, moving damaged files aside.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::HistoryError;
use crate::agent::session::Session;

/// The error kind `read_plain` gives for a file that is not a plain file.
const NOT_PLAIN: io::ErrorKind = io::ErrorKind::InvalidInput;

/// Turns an I/O error on `path` into the history's error.
pub(super) fn io_err(path: &Path) -> impl FnOnce(io::Error) -> HistoryError + '_ {
    move |source| HistoryError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Options that never follow a link at the last component, never block on a pipe and never
/// make a terminal ours: a workspace could plant any of them where a history file belongs.
fn careful(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY,
    );
    options
}

/// Fails with `NOT_PLAIN` unless `file` is a plain file.
fn ensure_plain(file: &File) -> io::Result<()> {
    if file.metadata()?.is_file() {
        Ok(())
    } else {
        Err(io::Error::new(NOT_PLAIN, "not a regular file"))
    }
}

/// The most MiniClaw reads of one of its history files (the snapshot, the journal, an archived
/// session, the checkpoints' index, a checkpoint's blob): far larger than any real session
/// (tool outputs are capped, files the tools change are at most 10 MB), far below memory
/// trouble. A larger one was planted (a 2 GiB sparse file, say): it is refused by its size
/// before a byte is read, and kept aside or listed with its problem, never loaded.
pub const MAX_HISTORY_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// The error kind `read_plain` gives for a file over [`MAX_HISTORY_FILE_BYTES`].
const TOO_LARGE: io::ErrorKind = io::ErrorKind::FileTooLarge;

/// Reads a plain file of at most [`MAX_HISTORY_FILE_BYTES`], never through a link and never
/// blocking on a pipe.
pub(super) fn read_plain(path: &Path) -> io::Result<Vec<u8>> {
    use crate::capped_read::{CappedReadError as E, Links, read_capped};
    read_capped(path, MAX_HISTORY_FILE_BYTES, Links::Refuse).map_err(|e| match e {
        E::NotFound(_) => io::Error::from(io::ErrorKind::NotFound),
        E::Link(_) => io::Error::from_raw_os_error(libc::ELOOP),
        E::NotRegular(_) => io::Error::new(NOT_PLAIN, "not a regular file"),
        E::TooLarge { .. } => io::Error::new(TOO_LARGE, e.to_string()),
        E::Io { source, .. } => source,
    })
}

/// Opens a plain file of at most [`MAX_HISTORY_FILE_BYTES`] to read parts of it, never through
/// a link and never blocking on a pipe; with its size.
pub(super) fn open_plain(path: &Path) -> io::Result<(File, u64)> {
    let file = careful(OpenOptions::new().read(true)).open(path)?;
    ensure_plain(&file)?;
    let len = file.metadata()?.len();
    if len > MAX_HISTORY_FILE_BYTES {
        return Err(io::Error::new(
            TOO_LARGE,
            "larger than a history file may be",
        ));
    }
    Ok((file, len))
}

/// When `e` says the file is a link, not a plain file or too large: those words, for a notice.
pub(super) fn unusable(e: &io::Error) -> Option<&'static str> {
    if e.raw_os_error() == Some(libc::ELOOP) {
        Some("is a symbolic link")
    } else if e.kind() == NOT_PLAIN {
        Some("is not a regular file")
    } else if e.kind() == TOO_LARGE {
        Some("is larger than the 64 MiB MiniClaw reads of a history file")
    } else {
        None
    }
}

/// Renames what sits at `path` (a link itself, not its target) to a timestamped name beside it,
/// and returns that name.
pub(super) fn move_aside(path: &Path) -> Result<PathBuf, HistoryError> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".corrupt-{stamp}"));
    let aside = path.with_file_name(name);
    fs::rename(path, &aside).map_err(io_err(path))?;
    Ok(aside)
}

/// The folder holding `path`.
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Makes the creation, renaming or removal of a name in `path`'s folder durable. Best effort, as
/// before: a folder that cannot be synced (some file systems refuse) must not fail the save.
fn sync_folder(path: &Path) {
    if let Ok(d) = File::open(folder(path)) {
        let _ = d.sync_all();
    }
}

/// Replaces the file at `path` by `session` (pretty JSON, the schema of `history.json`),
/// durably (`durable::replace`: a crash at any moment leaves either the old file or the new
/// one, whole). Returns its size.
pub(super) fn write_snapshot(path: &Path, session: &Session) -> Result<u64, HistoryError> {
    replace_file(path, |out| {
        serde_json::to_writer_pretty(out, session).map_err(|e| {
            if e.is_io() {
                io_err(path)(e.into())
            } else {
                HistoryError::Encode(e)
            }
        })
    })
}

/// Replaces the file at `path` by `bytes`, as durably as `write_snapshot`.
pub(super) fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), HistoryError> {
    replace_file(path, |out| out.write_all(bytes).map_err(io_err(path))).map(|_| ())
}

/// Replaces the file at `path` by what `fill` writes (`durable::replace`: only the person may
/// read it, as a history or a kept file may hold what a 0600 file held). Returns its size.
fn replace_file(
    path: &Path,
    fill: impl FnOnce(&mut BufWriter<&mut File>) -> Result<(), HistoryError>,
) -> Result<u64, HistoryError> {
    crate::durable::replace(path, |file| {
        // Streamed through a buffer: a long history is never held twice in memory as text.
        let mut out = BufWriter::with_capacity(1 << 20, file);
        fill(&mut out)?;
        out.flush().map_err(io_err(path))
    })
}

/// Removes the name `path` (a link itself, never its target); a missing file is fine.
fn remove_if_there(path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Removes the name `path`, durably: once this returns, a crash does not bring it back.
pub(super) fn remove_durably(path: &Path) -> Result<(), HistoryError> {
    remove_if_there(path).map_err(io_err(path))?;
    sync_folder(path);
    Ok(())
}

/// Starts an empty journal at `path`. Whatever sat there is superseded by the snapshot (a
/// journal already folded into it, or one of a cleared conversation), or was planted: the name
/// is removed and the file created exclusively, which never follows a link. The folder is
/// synced so the new file survives a crash along with its first entries.
pub(super) fn create_journal(path: &Path) -> Result<File, HistoryError> {
    remove_if_there(path).map_err(io_err(path))?;
    let file = careful(OpenOptions::new().append(true).create_new(true))
        .open(path)
        .map_err(io_err(path))?;
    sync_folder(path);
    Ok(file)
}

/// Opens the journal at `path` to append after its first `len` bytes (the entries load found
/// whole); a torn entry after them, left by a kill, is cut off so the next entry starts on a
/// line of its own. A link or anything but a plain file is refused.
pub(super) fn open_journal(path: &Path, len: u64) -> Result<File, HistoryError> {
    let file = careful(OpenOptions::new().append(true))
        .open(path)
        .map_err(io_err(path))?;
    ensure_plain(&file).map_err(io_err(path))?;
    let actual = file.metadata().map_err(io_err(path))?.len();
    if actual < len {
        return Err(HistoryError::Damaged {
            path: path.to_path_buf(),
            reason: format!("it is shorter ({actual} bytes) than what was written ({len} bytes)"),
        });
    }
    if actual > len {
        file.set_len(len).map_err(io_err(path))?;
    }
    Ok(file)
}

/// Appends `bytes` to the journal and syncs its data: once this returns, they survive a crash.
pub(super) fn append_durably(
    file: &mut File,
    path: &Path,
    bytes: &[u8],
) -> Result<(), HistoryError> {
    file.write_all(bytes)
        .and_then(|()| file.sync_data())
        .map_err(io_err(path))
}

/// Whether anything (a file, a link, a pipe) sits at `path`.
pub(super) fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}
