//! The path rule of `run_shell_command`: every path argument is relative, free of `..` and `~`,
//! really inside the workspace (links resolved, no hard-linked files), and neither names nor
//! leads to anything `hidden` hides.

use std::path::{Component, Path, PathBuf};

use super::refusal::Refusal;
use crate::tools::hidden;

/// Checks one path argument; returns its real location (inside the workspace).
pub fn check_path(root: &Path, cwd: &Path, path: &str) -> Result<PathBuf, Refusal> {
    if path.is_empty() {
        return Err(Refusal::EmptyPath);
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') {
        return Err(Refusal::AbsolutePath(path.to_string()));
    }
    if path.starts_with('~') {
        return Err(Refusal::HomePath(path.to_string()));
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Err(Refusal::ParentPath(path.to_string()));
    }
    // As written, from the root: `cat .env`, `cat ./sub/.ENV.local`, `history.json` at the root.
    if let Ok(from_root) = cwd.strip_prefix(root)
        && let Some(why) = hidden::path_hidden(&from_root.join(p))
    {
        return Err(Refusal::Hidden {
            path: path.to_string(),
            rule: why.rule(),
        });
    }
    let joined = cwd.join(p);
    if joined
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
        && joined.canonicalize().is_err()
    {
        return Err(Refusal::BrokenLink(path.to_string()));
    }
    let real = real_location(&joined);
    if !real.starts_with(root) {
        return Err(Refusal::LeadsOut(path.to_string()));
    }
    // Where it really is: a link to `.env`, or a folder leading into `.miniclaw/`.
    if let Some(why) = real
        .strip_prefix(root)
        .ok()
        .and_then(hidden::path_hidden)
        .or_else(|| hidden::real_hidden(&real))
    {
        return Err(Refusal::Hidden {
            path: path.to_string(),
            rule: why.rule(),
        });
    }
    // A hard link may be a file outside the workspace under a name inside it.
    if let Ok(meta) = real.metadata()
        && meta.is_file()
        && std::os::unix::fs::MetadataExt::nlink(&meta) > 1
    {
        return Err(Refusal::HardLinked(path.to_string()));
    }
    Ok(real)
}

/// The canonical location of a path that may not exist yet: its deepest existing ancestor
/// canonicalised (symbolic links resolved), with the missing rest appended.
fn real_location(path: &Path) -> PathBuf {
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(real) = current.canonicalize() {
            return missing.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (current.file_name(), current.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
