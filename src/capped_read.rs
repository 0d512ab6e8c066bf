//! Reading a file MiniClaw loads itself (its history, sessions, checkpoints' index, AGENTS.md,
//! trust and choices files, plugin manifests, settings): a workspace or a cloned repository may
//! have planted any of them, so the read never blocks on a special file (a FIFO, a device),
//! optionally never follows a link at the last component, and never reads past a size cap. A
//! 2 GiB sparse file is refused by its size before one byte is read. A leaf: it imports nothing
//! of MiniClaw.

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// Whether a link at the last component of the path may be followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    /// A link is refused (`CappedReadError::Link`): MiniClaw's own files are never links.
    Refuse,
    /// A link is followed (a user's settings file may be a link into a dotfiles repository).
    Follow,
}

/// Why a capped read gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum CappedReadError {
    /// There is no such file.
    #[error("{} does not exist", .0.display())]
    NotFound(PathBuf),
    /// It is a symbolic link, and links are refused.
    #[error("{} is a symbolic link", .0.display())]
    Link(PathBuf),
    /// It is a FIFO, a socket, a device or a folder.
    #[error("{} is not a regular file", .0.display())]
    NotRegular(PathBuf),
    /// It is larger than the cap.
    #[error("{} is {} bytes, over the {} bytes MiniClaw reads of it", .path.display(), .size, .cap)]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size (at least; a file growing while read reports the cap plus one).
        size: u64,
        /// The cap.
        cap: u64,
    },
    /// Any other error of the file system.
    #[error("{} could not be read: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: io::Error,
    },
}

impl CappedReadError {
    /// Whether the file is simply missing (usually not worth a word).
    pub fn is_not_found(&self) -> bool {
        matches!(self, CappedReadError::NotFound(_))
    }
}

/// Opens `path` for reading without blocking on a FIFO and without making a terminal ours, and
/// checks on the opened handle that it is a regular file of at most `cap` bytes.
pub fn open_capped(path: &Path, cap: u64, links: Links) -> Result<File, CappedReadError> {
    let mut options = OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        if links == Links::Refuse {
            flags |= libc::O_NOFOLLOW;
        }
        std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, flags);
    }
    let file = options.open(path).map_err(|e| classify(path, e))?;
    let meta = file.metadata().map_err(|e| classify(path, e))?;
    if !meta.is_file() {
        return Err(CappedReadError::NotRegular(path.to_path_buf()));
    }
    if meta.len() > cap {
        return Err(CappedReadError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            cap,
        });
    }
    Ok(file)
}

/// The bytes of `path`, at most `cap` of them (see the module doc).
pub fn read_capped(path: &Path, cap: u64, links: Links) -> Result<Vec<u8>, CappedReadError> {
    let file = open_capped(path, cap, links)?;
    // Sized to the file at once: a long history is megabytes, and growing to it copies them.
    let size = file.metadata().map_or(0, |m| m.len()).min(cap);
    let mut bytes = Vec::with_capacity(usize::try_from(size).unwrap_or(0).saturating_add(1));
    // A file that grows after the size check still stops at the cap.
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| classify(path, e))?;
    if bytes.len() as u64 > cap {
        return Err(CappedReadError::TooLarge {
            path: path.to_path_buf(),
            size: cap.saturating_add(1),
            cap,
        });
    }
    Ok(bytes)
}

/// The text of `path` (invalid UTF-8 replaced), at most `cap` bytes of it.
pub fn read_capped_string(path: &Path, cap: u64, links: Links) -> Result<String, CappedReadError> {
    let bytes = read_capped(path, cap, links)?;
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

fn classify(path: &Path, e: io::Error) -> CappedReadError {
    match e.kind() {
        io::ErrorKind::NotFound => CappedReadError::NotFound(path.to_path_buf()),
        _ if e.raw_os_error() == Some(libc::ELOOP) => CappedReadError::Link(path.to_path_buf()),
        _ => CappedReadError::Io {
            path: path.to_path_buf(),
            source: e,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sparse_giant_is_refused_by_its_size_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.json");
        let file = File::create(&path).unwrap();
        file.set_len(2 << 30).unwrap();
        let err = read_capped(&path, 1 << 20, Links::Refuse).unwrap_err();
        assert!(
            matches!(err, CappedReadError::TooLarge { size, .. } if size == 2 << 30),
            "{err}"
        );
        assert!(err.to_string().contains("over the 1048576 bytes"), "{err}");
    }

    #[test]
    fn links_fifos_and_folders_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::write(&real, "x").unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        assert!(matches!(
            read_capped(&link, 10, Links::Refuse),
            Err(CappedReadError::Link(_))
        ));
        assert_eq!(read_capped(&link, 10, Links::Follow).unwrap(), b"x");
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_capped(&fifo, 10, Links::Follow),
            Err(CappedReadError::NotRegular(_))
        ));
        assert!(matches!(
            read_capped(dir.path(), 10, Links::Follow),
            Err(CappedReadError::NotRegular(_))
        ));
        assert!(
            read_capped(&dir.path().join("none"), 10, Links::Follow)
                .unwrap_err()
                .is_not_found()
        );
    }

    #[test]
    fn a_file_at_the_cap_is_read_and_one_past_it_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "abcd").unwrap();
        assert_eq!(read_capped_string(&path, 4, Links::Refuse).unwrap(), "abcd");
        assert!(read_capped(&path, 3, Links::Refuse).is_err());
    }
}
