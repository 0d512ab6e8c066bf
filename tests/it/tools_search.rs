//! `search_files` through the registry: regex, literal fallback, binary skipping, big trees.

use std::fs;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use miniclaw::tools::{Sandbox, ToolContext, builtin_registry};
use serde_json::{Value, json};

async fn search(root: &Path, args: Value) -> Value {
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(root).unwrap()));
    let result = builtin_registry()
        .execute("search_files", &args.to_string(), &ctx)
        .await;
    assert_eq!(result["tool"], json!("search_files"));
    result
}

fn matches(result: &Value) -> Vec<String> {
    result["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn finds_lines_as_path_line_text_and_skips_binaries() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("src/deep")).unwrap();
    fs::write(root.join("src/main.rs"), "fn main() {\n    hello();\n}\n").unwrap();
    fs::write(
        root.join("src/deep/lib.rs"),
        "// Hello again\r\nfn hello() {}\n",
    )
    .unwrap();
    fs::write(root.join("notes.md"), "问候：你好，MiniClaw\n").unwrap();
    let mut binary = b"hello\0\x01\x02".to_vec();
    binary.extend_from_slice(b"hello hello");
    fs::write(root.join("image.bin"), binary).unwrap();

    let result = search(root, json!({"pattern": "hel+o\\b"})).await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(
        matches(&result),
        vec![
            "src/deep/lib.rs:1:// Hello again",
            "src/deep/lib.rs:2:fn hello() {}",
            "src/main.rs:2:    hello();",
        ]
    );
    assert_eq!(result["binary_files_skipped"], json!(1));
    assert_eq!(result["truncated"], json!(false));
    assert_eq!(result["literal"], json!(false));

    let sensitive = search(root, json!({"pattern": "Hello", "case_sensitive": true})).await;
    assert_eq!(
        matches(&sensitive),
        vec!["src/deep/lib.rs:1:// Hello again"]
    );

    let chinese = search(root, json!({"pattern": "你好"})).await;
    assert_eq!(matches(&chinese), vec!["notes.md:1:问候：你好，MiniClaw"]);

    let scoped = search(
        root,
        json!({"pattern": "hello", "relative_dir": "src/deep"}),
    )
    .await;
    assert_eq!(matches(&scoped).len(), 2);
    let one_file = search(
        root,
        json!({"pattern": "hello", "relative_dir": "src/main.rs"}),
    )
    .await;
    assert_eq!(matches(&one_file), vec!["src/main.rs:2:    hello();"]);
}

#[tokio::test]
async fn an_invalid_regex_is_searched_literally_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "call foo(bar\nfoo bar\n").unwrap();
    let result = search(dir.path(), json!({"pattern": "foo(bar"})).await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["literal"], json!(true));
    assert!(
        result["note"].as_str().unwrap().contains("literal"),
        "{result}"
    );
    assert_eq!(matches(&result), vec!["a.txt:1:call foo(bar"]);
}

#[tokio::test]
async fn max_matches_cuts_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..100).map(|i| format!("needle {i}\n")).collect();
    fs::write(dir.path().join("n.txt"), text).unwrap();
    let default = search(dir.path(), json!({"pattern": "needle"})).await;
    assert_eq!(default["match_count"], json!(50));
    assert_eq!(default["truncated"], json!(true));
    assert!(
        default["note"]
            .as_str()
            .unwrap()
            .contains("stopped after 50")
    );
    let three = search(dir.path(), json!({"pattern": "needle", "max_matches": 3})).await;
    assert_eq!(
        matches(&three),
        vec!["n.txt:1:needle 0", "n.txt:2:needle 1", "n.txt:3:needle 2"]
    );
    let exact = search(
        dir.path(),
        json!({"pattern": "needle 9\\d", "max_matches": 10}),
    )
    .await;
    assert_eq!(exact["match_count"], json!(10));
    assert_eq!(exact["truncated"], json!(false));
    let huge = search(
        dir.path(),
        json!({"pattern": "needle", "max_matches": 100000}),
    )
    .await;
    assert_eq!(huge["match_count"], json!(100));
}

#[tokio::test]
async fn long_lines_are_cut_around_the_match() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("{}TARGET{}", "中".repeat(5000), "x".repeat(5000));
    fs::write(dir.path().join("min.js"), &line).unwrap();
    let result = search(dir.path(), json!({"pattern": "TARGET"})).await;
    let found = &matches(&result)[0];
    assert!(found.starts_with("min.js:1:…"), "{found}");
    assert!(found.contains("TARGET"), "{found}");
    assert!(found.chars().count() < 260, "{}", found.chars().count());
}

#[tokio::test]
async fn gitignored_files_are_skipped_unless_asked_and_git_never_searched() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("target")).unwrap();
    fs::create_dir_all(root.join(".git")).unwrap();
    fs::write(root.join(".gitignore"), "target/\n").unwrap();
    fs::write(root.join("target/out.txt"), "marker\n").unwrap();
    fs::write(root.join(".git/config"), "marker\n").unwrap();
    fs::write(root.join(".hidden.txt"), "marker\n").unwrap();
    let normal = search(root, json!({"pattern": "marker"})).await;
    assert_eq!(matches(&normal), vec![".hidden.txt:1:marker"]);
    let all = search(root, json!({"pattern": "marker", "include_ignored": true})).await;
    assert_eq!(
        matches(&all),
        vec![".hidden.txt:1:marker", "target/out.txt:1:marker"]
    );
}

#[tokio::test]
async fn bad_inputs_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let empty = search(dir.path(), json!({"pattern": ""})).await;
    assert_eq!(empty["ok"], json!(false));
    let missing = search(dir.path(), json!({"relative_dir": "."})).await;
    assert!(missing["error"].as_str().unwrap().contains("pattern"));
    let long = search(dir.path(), json!({"pattern": "a".repeat(1001)})).await;
    assert!(long["error"].as_str().unwrap().contains("longer than"));
    let ghost = search(dir.path(), json!({"pattern": "x", "relative_dir": "ghost"})).await;
    assert!(
        ghost["error"].as_str().unwrap().contains("does not exist"),
        "{ghost}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tree_of_thousands_of_files_is_searched_quickly() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let filler = "lorem ipsum dolor sit amet\n".repeat(40);
    for d in 0..40 {
        let sub = root.join(format!("dir{d:02}/nested"));
        fs::create_dir_all(&sub).unwrap();
        for f in 0..100 {
            let body = if (d * 100 + f) % 500 == 7 {
                format!("{filler}the rare_token_42 is here\n")
            } else {
                filler.clone()
            };
            fs::write(sub.join(format!("file{f:03}.txt")), body).unwrap();
        }
    }
    let started = Instant::now();
    let result = search(root, json!({"pattern": "rare_token_\\d+"})).await;
    let took = started.elapsed();
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(result["files_searched"], json!(4000));
    assert_eq!(
        matches(&result),
        vec![
            "dir00/nested/file007.txt:41:the rare_token_42 is here",
            "dir05/nested/file007.txt:41:the rare_token_42 is here",
            "dir10/nested/file007.txt:41:the rare_token_42 is here",
            "dir15/nested/file007.txt:41:the rare_token_42 is here",
            "dir20/nested/file007.txt:41:the rare_token_42 is here",
            "dir25/nested/file007.txt:41:the rare_token_42 is here",
            "dir30/nested/file007.txt:41:the rare_token_42 is here",
            "dir35/nested/file007.txt:41:the rare_token_42 is here",
        ]
    );
    // Generous: a debug build on a shared 2-core machine.
    assert!(took < Duration::from_secs(20), "took {took:?}");
}
