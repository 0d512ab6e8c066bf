//! The workspace's files by path, for the `@` mention popup: the same walk as `search_files`
//! (`.gitignore` respected, `.git`, `.env*` and MiniClaw's own files left out, no link
//! followed), handed out in batches as it goes.

use std::path::Path;

use tokio_util::sync::CancellationToken;

use super::ignores::Ignores;
use super::matcher::Shared;
use super::walk::{Listing, Walk};
use crate::tools::error::ToolError;
use crate::tools::sandbox::Sandbox;
use crate::tools::workspace_io::open_dir;

/// Walks the whole workspace and hands its files' paths (relative, `/`-separated, in walk
/// order: each folder's entries sorted by name, depth first) to `each`, `batch` at a time; at
/// most `max` paths. Returns how many were listed; a cancelled walk stops where it is.
pub fn workspace_files(
    sandbox: &Sandbox,
    cancel: &CancellationToken,
    batch: usize,
    max: usize,
    each: &mut dyn FnMut(Vec<String>),
) -> Result<usize, ToolError> {
    let dir = open_dir(sandbox, ".", ".")?;
    let shared = Shared::default();
    let mut walk = Walk {
        ignores: Ignores::new(true),
        jobs: Vec::new(),
        listing: Some(Listing {
            pending: Vec::new(),
            batch: batch.max(1),
            room: max,
            each,
        }),
        skipped_dirs: 0,
        shared: &shared,
        cancel,
        from_root: true,
        own_below: super::walk::own_below(sandbox, "."),
    };
    walk.collect(&dir, Path::new(""), ".", 0);
    let Some(mut listing) = walk.listing.take() else {
        return Ok(0);
    };
    listing.flush();
    Ok(max - listing.room)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listing_leaves_out_what_search_leaves_out_and_comes_in_batches() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for (path, text) in [
            ("a.txt", "a"),
            ("src/lib.rs", "b"),
            ("src/deep/mod.rs", "c"),
            ("target/debug/out.bin", "ignored"),
            (".env", "KEY=1"),
            ("sub/.env.local", "KEY=2"),
            ("history.json", "{}"),
            (".miniclaw/sessions/x.json", "{}"),
            (".git/config", "[core]"),
            (".gitignore", "target/\n"),
        ] {
            let file = root.join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(file, text).unwrap();
        }
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        let sandbox = Sandbox::new(root).unwrap();
        let mut batches = Vec::new();
        let n = workspace_files(&sandbox, &CancellationToken::new(), 2, 100, &mut |b| {
            batches.push(b)
        })
        .unwrap();
        assert_eq!(n, 4);
        assert_eq!(
            batches,
            vec![
                vec![".gitignore".to_string(), "a.txt".into()],
                vec!["src/deep/mod.rs".to_string(), "src/lib.rs".into()],
            ]
        );
        let mut all = Vec::new();
        let n = workspace_files(&sandbox, &CancellationToken::new(), 10, 3, &mut |b| {
            all.extend(b)
        })
        .unwrap();
        assert_eq!((n, all.len()), (3, 3), "stops at the most asked for");
    }
}
