//! What the jail adds to each `run_command` call, on a 20,000-file workspace: the walk for the
//! entries to shield (before the command, and again after it for new ones), and a jailed `true`
//! end to end (the supervisor started, namespaces, mounts, Landlock and seccomp built, the
//! command run and waited for).
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use miniclaw::tools::command::{CommandSettings, exposure};
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};

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
        b.iter(|| exposure::shielded(&real));
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
