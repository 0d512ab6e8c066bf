//! `search_files` on a tree with more folders than the process may hold open: the walk keeps
//! only a few folders open, so nothing is silently missed. (Its own test binary: it lowers the
//! process's file-descriptor limit.)
#![allow(clippy::unwrap_used, clippy::expect_used)] // A test fails loudly at any surprise.

use std::sync::Arc;

use miniclaw::tools::{Sandbox, ToolContext, builtin_registry};
use serde_json::json;

#[tokio::test]
async fn thousands_of_folders_are_searched_under_a_low_descriptor_limit() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..1500 {
        let folder = dir.path().join(format!("d{i:04}"));
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("f.txt"), format!("file {i}\n")).unwrap();
    }
    std::fs::write(dir.path().join("d1499/f.txt"), "unique-zz\n").unwrap();
    let mut deep = dir.path().to_path_buf();
    for _ in 0..150 {
        deep.push("a");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join("deep.txt"), "unique-zz too deep\n").unwrap();
    let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
    rustix::process::setrlimit(
        rustix::process::Resource::Nofile,
        rustix::process::Rlimit {
            current: Some(256),
            maximum: limit.maximum,
        },
    )
    .unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let result = builtin_registry()
        .execute(
            "search_files",
            &json!({"pattern": "unique-zz"}).to_string(),
            &ctx,
        )
        .await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(
        result["matches"],
        json!(["d1499/f.txt:1:unique-zz"]),
        "{result}"
    );
    assert_eq!(
        result["folders_skipped"],
        json!(1),
        "the too-deep folder is counted: {result}"
    );
}
