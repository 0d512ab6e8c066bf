//! `search_files` against ripgrep on the same 20,000-file tree and query, side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use miniclaw::tools::{Sandbox, ToolContext, builtin_registry};
use serde_json::json;

const FILES: usize = 20_000;
const PATTERN: &str = "needle_[0-9]+_found";

/// 20,000 source-like files in 200 folders; one in 1,000 holds the needle.
fn make_tree(root: &Path) {
    let body: String = (0..40)
        .map(|i| format!("fn function_{i}(x: u32) -> u32 {{ x * {i} + 1 }} // ordinary text\n"))
        .collect();
    for d in 0..200 {
        let dir = root.join(format!("pkg{d:03}/src"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES / 200 {
            let n = d * (FILES / 200) + f;
            let mut text = body.clone();
            if n.is_multiple_of(1000) {
                text.push_str(&format!("// needle_{n}_found here\n"));
            }
            std::fs::write(dir.join(format!("file{f:03}.rs")), text).unwrap();
        }
    }
}

fn search_vs_rg(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path());
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let registry = builtin_registry();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let args = json!({"pattern": PATTERN}).to_string();
    let first = rt.block_on(registry.execute("search_files", &args, &ctx));
    assert_eq!(first["match_count"], json!(FILES / 1000), "{first}");
    let rg = Command::new("rg").arg("--version").output().is_ok();

    let mut g = c.benchmark_group("search_20000_files");
    g.sample_size(10).measurement_time(Duration::from_secs(6));
    g.bench_function("search_files", |b| {
        b.iter(|| rt.block_on(registry.execute("search_files", &args, &ctx)))
    });
    if rg {
        g.bench_function("ripgrep", |b| {
            b.iter(|| {
                let out = Command::new("rg")
                    .args(["-n", "-i", "--no-config", PATTERN])
                    .arg(dir.path())
                    .output()
                    .unwrap();
                assert!(out.status.success());
            })
        });
    } else {
        eprintln!("rg is not installed: the ripgrep side is skipped");
    }
    g.finish();
}

criterion_group!(benches, search_vs_rg);
criterion_main!(benches);
