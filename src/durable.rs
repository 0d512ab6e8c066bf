//! One durable write: a file replaced whole, so that a crash at any moment leaves either the
//! old content or the new one, never half of it, and the new one survives a power cut once the
//! write returns.
//!
//! The content goes to a temporary file beside the target whose name no other writer uses (the
//! target's name, the process id, a counter and a random number: two saves in the same instant
//! never share one). It is created exclusively (`O_EXCL`, which never follows a symbolic link;
//! `O_NOFOLLOW` too) with exactly mode 0600, filled by the caller, synced, renamed over the
//! target (a link at the target is replaced, not followed) and the folder is synced so the
//! rename survives as well. On any error the temporary file is removed and the target is as it
//! was. Every file MiniClaw rewrites goes through [`replace`]: the history and its archive and
//! checkpoints, the key file, the remembered choices, trust and its change record.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which write of this process a temporary file belongs to.
static WRITES: AtomicU64 = AtomicU64::new(0);

/// How often a fresh name is tried when one is taken (a stale file of an earlier process).
const NAME_ATTEMPTS: usize = 8;

/// Why a durable write failed, and the file it failed on (the temporary file, the target or
/// its folder). The target is as it was.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct DurableError {
    /// The file the step failed on.
    pub path: PathBuf,
    /// What the system said.
    pub source: io::Error,
}

impl From<DurableError> for io::Error {
    /// The system's error alone: the callers that speak `io::Error` name the file themselves.
    fn from(e: DurableError) -> Self {
        e.source
    }
}

/// Replaces the file at `path` by what `fill` writes into a fresh temporary file (see the
/// module doc); returns the new file's size. Missing folders on the way are created. `fill`
/// may stream through a buffer; it must flush it before returning.
pub fn replace<E>(path: &Path, fill: impl FnOnce(&mut File) -> Result<(), E>) -> Result<u64, E>
where
    E: From<DurableError>,
{
    let failed = |path: &Path| {
        let path = path.to_path_buf();
        move |source| DurableError { path, source }
    };
    let dir = folder(path);
    fs::create_dir_all(dir).map_err(failed(dir))?;
    let (tmp, mut file) = create_temporary(path).map_err(failed(path))?;
    let written = (|| -> Result<u64, E> {
        fill(&mut file)?;
        file.sync_all().map_err(failed(&tmp))?;
        let size = file.metadata().map_err(failed(&tmp))?.len();
        drop(file);
        fs::rename(&tmp, path).map_err(failed(path))?;
        Ok(size)
    })();
    match written {
        Ok(size) => {
            sync_folder(dir);
            Ok(size)
        }
        Err(e) => {
            // Gone whatever happened: nothing half-written is left beside the target.
            let _ = fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Creates the temporary file for `path`: exclusively, never through a link, exactly 0600.
fn create_temporary(path: &Path) -> io::Result<(PathBuf, File)> {
    let name = path
        .file_name()
        .map_or_else(|| "file".to_string(), |n| n.to_string_lossy().into_owned());
    let mut last = io::Error::from(io::ErrorKind::AlreadyExists);
    for _ in 0..NAME_ATTEMPTS {
        // `<name>.tmp-…` keeps the target's name first: the tools hide `history.json.*` and
        // `.env*`, so a temporary copy of either is hidden as well.
        let tmp = path.with_file_name(format!(
            "{name}.tmp-{}-{}-{:08x}",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed),
            rand::random::<u32>()
        ));
        let opened = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&tmp);
        match opened {
            Ok(file) => {
                // The umask can only take bits away; this sets exactly 0600 whatever it is.
                if let Err(e) = file.set_permissions(fs::Permissions::from_mode(0o600)) {
                    let _ = fs::remove_file(&tmp);
                    return Err(e);
                }
                return Ok((tmp, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = e,
            Err(e) => return Err(e),
        }
    }
    Err(last)
}

/// The folder holding `path`.
fn folder(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Opens (creating) a lock file, never through a link (a folder could plant one pointing at a
/// file to clobber) and never blocking on a FIFO; anything but a regular file is refused.
pub fn open_lock_file(path: &Path) -> io::Result<File> {
    let mut options = fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path)?;
    if !file.metadata().map(|m| m.is_file()).unwrap_or(false) {
        return Err(io::Error::other("the lock file is not a regular file"));
    }
    Ok(file)
}

/// Makes the rename durable. Best effort: the new file is in place by now, so failing here
/// would tell the caller the old content stayed; and some file systems refuse to sync a folder.
fn sync_folder(dir: &Path) {
    if let Err(e) = File::open(dir).and_then(|d| d.sync_all()) {
        tracing::debug!(error = %e, folder = %dir.display(), "the folder could not be synced");
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_write_replaces_the_file_whole_0600_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("deep/folder/state.json");
        let size = replace(&path, |f| f.write_all(b"first")).unwrap();
        assert_eq!(size, 5);
        fs::set_permissions(&path, fs::Permissions::from_mode(0o644)).unwrap();
        let size = replace(&path, |f| f.write_all(b"second!")).unwrap();
        assert_eq!(size, 7);
        assert_eq!(fs::read(&path).unwrap(), b"second!");
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "exactly 0600, whatever was there");
        assert_eq!(names(path.parent().unwrap()), vec!["state.json"]);
    }

    #[test]
    fn a_failing_fill_leaves_the_old_file_and_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, "old").unwrap();
        let result: io::Result<u64> = replace(&path, |f| {
            f.write_all(b"half of the new")?;
            Err(io::Error::other("the encoder gave up"))
        });
        assert_eq!(result.unwrap_err().to_string(), "the encoder gave up");
        assert_eq!(fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(names(dir.path()), vec!["state.json"]);
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let precious = dir.path().join("precious.txt");
        fs::write(&precious, "precious").unwrap();
        let path = dir.path().join("state.json");
        std::os::unix::fs::symlink(&precious, &path).unwrap();
        replace::<io::Error>(&path, |f| f.write_all(b"new")).unwrap();
        assert_eq!(fs::read_to_string(&precious).unwrap(), "precious");
        assert!(!fs::symlink_metadata(&path).unwrap().is_symlink());
        assert_eq!(fs::read_to_string(&path).unwrap(), "new");
    }

    #[test]
    fn writes_in_the_same_instant_never_share_a_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        let barrier = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for i in 0..8u8 {
                let (path, barrier) = (&path, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    replace::<io::Error>(path, |f| f.write_all(&[b'a' + i; 4096])).unwrap();
                });
            }
        });
        let kept = fs::read(&path).unwrap();
        assert_eq!(kept.len(), 4096, "one write whole, not a mix");
        assert!(kept.iter().all(|b| *b == kept[0]));
        assert_eq!(names(dir.path()), vec!["state.json"]);
    }

    #[test]
    fn a_target_in_a_missing_folder_that_cannot_be_made_fails_and_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        fs::write(&file, "").unwrap();
        let err = replace::<DurableError>(&file.join("state.json"), |_| Ok(())).unwrap_err();
        assert_eq!(err.path, file);
    }
}
