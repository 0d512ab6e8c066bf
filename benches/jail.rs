//! What the jail adds to each `run_command` call, on a 20,000-file workspace: the walk for the
//! entries to shield (before the command, and again after it for new ones), and a jailed `true`
//! end to end (the supervisor started, namespaces, mounts, Landlock and seccomp built, the
//! command run and waited for), and what watching for the files a command changed adds: the
//! manifests before and after (hashes reused where nothing moved) and their comparison, with
//! one file changed, every content kept in a store as the session's checkpoints keep it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use miniclaw::tools::command::CommandSettings;
use miniclaw::tools::command::manifest::Manifest;
use miniclaw::tools::command::survey::{self, survey};
use miniclaw::tools::{ChangeKeeper, Sandbox, ToolContext, ToolRegistry};

/// A content store in a folder, one file per hash (as the checkpoints keep blobs).
#[derive(Debug)]
struct Store(PathBuf);

impl ChangeKeeper for Store {
    fn store_id(&self) -> String {
        self.0.display().to_string()
    }
    fn keep(&self, bytes: &[u8]) -> Result<String, String> {
        use sha2::Digest;
        let hash: String = sha2::Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = self.0.join(&hash);
        if !path.exists() {
            std::fs::write(path, bytes).map_err(|e| e.to_string())?;
        }
        Ok(hash)
    }
    fn kept(&self, hash: &str) -> Option<Vec<u8>> {
        std::fs::read(self.0.join(hash)).ok()
    }
    fn changed(&self, _path: &str, _before: Option<String>) {}
    fn not_kept(&self, _folder: &str) {}
}

const FILES: usize = 20_000;

/// 20,000 files in 400 folders, a `.git`, a `.env` and an `AGENTS.md` to shield.
fn make_tree(root: &Path) {
    for d in 0..200 {
        for half in ["src", "tests"] {
            let dir = root.join(format!("pkg{d:03}/{half}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..FILES / 400 {
                std::fs::write(dir.join(format!("file{f:02}_{d}.rs")), "fn f() {}\n").unwrap();
            }
        }
    }
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    std::fs::write(root.join(".env"), "KEY=x\n").unwrap();
    std::fs::write(root.join("AGENTS.md"), "be brief\n").unwrap();
}

fn jail(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    make_tree(&ws);
    let real = ws.canonicalize().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_miniclaw-tui"));
    let tools = runtime
        .block_on(miniclaw::tools::command::prepare(
            CommandSettings::default(),
            binary,
        ))
        .expect("the jail can be built here");
    let mut registry = ToolRegistry::new();
    tools.register(&mut registry);
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(&ws).unwrap()));
    let mut group = c.benchmark_group("jail");
    group.sample_size(20);
    group.bench_function("shield_walk_20000_files", |b| {
        b.iter(|| survey::shielded(&real));
    });
    let store_dir = dir.path().join("store");
    std::fs::create_dir_all(&store_dir).unwrap();
    let store = Store(store_dir);
    let sandbox = Sandbox::new(&ws).unwrap();
    let mut last = Manifest::take(
        survey(&real, survey::MAX_ENTRIES).files,
        None,
        &sandbox,
        Some(&store),
    );
    let mut turn = 0u64;
    group.bench_function("changes_watch_20000_files_one_changed", |b| {
        // The walks are the shield walks measured above (one before, one after each command);
        // measured here is what the manifests add to them: hashes reused where nothing moved,
        // the changed file read and kept, the two compared.
        b.iter_custom(|iters| {
            let mut spent = std::time::Duration::ZERO;
            for _ in 0..iters {
                // As around a command: walk, manifest; the command; walk, manifest, compare.
                let found = survey(&real, survey::MAX_ENTRIES).files;
                let started = std::time::Instant::now();
                let before = Manifest::take(found, Some(&last), &sandbox, Some(&store));
                spent += started.elapsed();
                turn += 1;
                let changed = format!("fn f() {{ {turn} }}\n");
                std::fs::write(real.join("pkg000/src/file00_0.rs"), changed).unwrap();
                let found = survey(&real, survey::MAX_ENTRIES).files;
                let started = std::time::Instant::now();
                let after = Manifest::take(found, Some(&before), &sandbox, Some(&store));
                let changes = before.changes_to(&after);
                spent += started.elapsed();
                assert_eq!(changes.changed.len(), 1, "{changes:?}");
                last = after;
            }
            spent
        });
    });
    group.bench_function("run_command_true_20000_files", |b| {
        b.iter(|| {
            let v =
                runtime.block_on(registry.execute("run_command", r#"{"command":"true"}"#, &ctx));
            assert_eq!(v["exit_code"], 0, "{v}");
        });
    });
    group.finish();
}

criterion_group!(benches, jail);
criterion_main!(benches);
