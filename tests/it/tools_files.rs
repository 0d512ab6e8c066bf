//! The file tools' normal behaviour, through `ToolRegistry::execute`.

use std::fs;
use std::sync::Arc;

use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry, builtin_registry};
use serde_json::{Value, json};

const CHINESE: &str = "你好，MiniClaw";

struct Env {
    dir: tempfile::TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    Env {
        dir,
        ctx,
        registry: builtin_registry(),
    }
}

impl Env {
    async fn call(&self, tool: &str, args: Value) -> Value {
        self.registry
            .execute(tool, &args.to_string(), &self.ctx)
            .await
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        let result = self.call(tool, args).await;
        assert_eq!(result["ok"], json!(true), "{result}");
        assert_eq!(result["tool"], json!(tool));
        result
    }

    async fn err(&self, tool: &str, args: Value) -> String {
        let result = self.call(tool, args).await;
        assert_eq!(result["ok"], json!(false), "{result}");
        result["error"].as_str().unwrap().to_string()
    }
}

#[test]
fn schemas_are_complete() {
    let registry = builtin_registry();
    for (name, read_only) in [
        ("list_files", true),
        ("read_text_file", true),
        ("list_directory_tree", true),
        ("search_files", true),
        ("write_text_file", false),
        ("append_text_file", false),
        ("replace_text_in_file", false),
        ("get_current_time", true),
        ("calculate_expression", true),
    ] {
        let tool = registry
            .get(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        let schema = tool.schema();
        assert_eq!(schema.name, name);
        assert!(schema.description.len() > 40, "{name} needs a description");
        assert_eq!(schema.parameters["type"], json!("object"));
        assert!(
            schema.parameters["required"].is_array(),
            "{name} lists required"
        );
        for required in schema.parameters["required"].as_array().unwrap() {
            let key = required.as_str().unwrap();
            assert!(
                schema.parameters["properties"][key].is_object(),
                "{name}.{key}"
            );
        }
        assert_eq!(tool.read_only(), read_only, "{name}");
    }
}

#[tokio::test]
async fn write_then_read_round_trips_chinese_text() {
    let env = env();
    let wrote = env
        .ok(
            "write_text_file",
            json!({"relative_path": "notes/深/hello.txt", "content": CHINESE}),
        )
        .await;
    assert_eq!(wrote["bytes_written"], json!(CHINESE.len()));
    assert_eq!(wrote["created"], json!(true));
    assert_eq!(wrote["path"], json!("notes/深/hello.txt"));
    let read = env
        .ok(
            "read_text_file",
            json!({"relative_path": "notes/深/hello.txt"}),
        )
        .await;
    assert_eq!(read["content"], json!(CHINESE));
    assert_eq!(read["truncated"], json!(false));
    assert_eq!(read["bytes"], json!(CHINESE.len()));
    // Overwriting replaces the whole content.
    let again = env
        .ok(
            "write_text_file",
            json!({"relative_path": "notes/深/hello.txt", "content": "x"}),
        )
        .await;
    assert_eq!(again["created"], json!(false));
    assert_eq!(
        fs::read_to_string(env.dir.path().join("notes/深/hello.txt")).unwrap(),
        "x"
    );
}

#[tokio::test]
async fn append_creates_then_extends() {
    let env = env();
    let first = env
        .ok(
            "append_text_file",
            json!({"relative_path": "log/a.md", "content": "一\n"}),
        )
        .await;
    assert_eq!(first["created"], json!(true));
    let second = env
        .ok(
            "append_text_file",
            json!({"relative_path": "log/a.md", "content": CHINESE}),
        )
        .await;
    assert_eq!(second["created"], json!(false));
    assert_eq!(second["bytes_appended"], json!(CHINESE.len()));
    let expected = format!("一\n{CHINESE}");
    assert_eq!(second["size"], json!(expected.len()));
    assert_eq!(
        fs::read_to_string(env.dir.path().join("log/a.md")).unwrap(),
        expected
    );
}

#[tokio::test]
async fn replace_counts_and_refusals() {
    let env = env();
    let path = env.dir.path().join("r.txt");
    fs::write(&path, "cat cat cat 猫").unwrap();
    let some = env
        .ok(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "cat", "new_text": "dog", "count": 2}),
        )
        .await;
    assert_eq!(some["replaced"], json!(2));
    assert_eq!(some["occurrences"], json!(3));
    assert_eq!(fs::read_to_string(&path).unwrap(), "dog dog cat 猫");
    let all = env
        .ok(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "猫", "new_text": "ねこ", "count": 0}),
        )
        .await;
    assert_eq!(all["replaced"], json!(1));
    let default_all = env
        .ok(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "o", "new_text": "0"}),
        )
        .await;
    assert_eq!(default_all["replaced"], json!(2));
    assert_eq!(fs::read_to_string(&path).unwrap(), "d0g d0g cat ねこ");

    let absent = env
        .err(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "bird", "new_text": "x"}),
        )
        .await;
    assert!(absent.contains("not found"), "{absent}");
    let empty = env
        .err(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "", "new_text": "x"}),
        )
        .await;
    assert!(empty.contains("must not be empty"), "{empty}");
    let missing = env
        .err(
            "replace_text_in_file",
            json!({"relative_path": "nope.txt", "old_text": "a", "new_text": "b"}),
        )
        .await;
    assert!(missing.contains("does not exist"), "{missing}");
    let no_new = env
        .err(
            "replace_text_in_file",
            json!({"relative_path": "r.txt", "old_text": "a"}),
        )
        .await;
    assert!(no_new.contains("new_text"), "{no_new}");
    assert_eq!(fs::read_to_string(&path).unwrap(), "d0g d0g cat ねこ");
}

#[tokio::test]
async fn list_files_marks_folders_and_sorts() {
    let env = env();
    let root = env.dir.path();
    fs::create_dir_all(root.join("zeta")).unwrap();
    fs::create_dir_all(root.join("alpha")).unwrap();
    fs::write(root.join("b.txt"), "12345").unwrap();
    fs::write(root.join("a.txt"), CHINESE).unwrap();
    fs::write(root.join("alpha/inner.txt"), "").unwrap();
    let listed = env.ok("list_files", json!({"relative_dir": "."})).await;
    assert_eq!(listed["listing"], json!("alpha/\nzeta/\na.txt\nb.txt"));
    assert_eq!(listed["count"], json!(4));
    assert_eq!(listed["truncated"], json!(false));
    assert_eq!(
        listed["entries"][3],
        json!({"name": "b.txt", "type": "file", "size": 5})
    );
    assert_eq!(
        listed["entries"][0],
        json!({"name": "alpha", "type": "dir"})
    );
    // No argument and "" also mean the root.
    let default = env.ok("list_files", json!({})).await;
    assert_eq!(default["listing"], listed["listing"]);
    let empty = env.ok("list_files", json!({"relative_dir": ""})).await;
    assert_eq!(empty["listing"], listed["listing"]);
    let inner = env.ok("list_files", json!({"relative_dir": "alpha"})).await;
    assert_eq!(inner["listing"], json!("inner.txt"));
    let on_file = env
        .err("list_files", json!({"relative_dir": "a.txt"}))
        .await;
    assert!(on_file.contains("not a folder"), "{on_file}");
    let missing = env
        .err("list_files", json!({"relative_dir": "ghost"}))
        .await;
    assert!(missing.contains("does not exist"), "{missing}");
}

#[tokio::test]
async fn read_refuses_binary_and_non_utf8_and_folders() {
    let env = env();
    let root = env.dir.path();
    fs::write(root.join("bin.dat"), [0x89, b'P', b'N', b'G', 0, 0, 1]).unwrap();
    fs::write(root.join("latin1.txt"), [b'c', b'a', b'f', 0xE9]).unwrap();
    fs::create_dir_all(root.join("d")).unwrap();
    let binary = env
        .err("read_text_file", json!({"relative_path": "bin.dat"}))
        .await;
    assert!(binary.contains("binary"), "{binary}");
    let latin = env
        .err("read_text_file", json!({"relative_path": "latin1.txt"}))
        .await;
    assert!(latin.contains("not UTF-8"), "{latin}");
    let folder = env
        .err("read_text_file", json!({"relative_path": "d"}))
        .await;
    assert!(folder.contains("folder"), "{folder}");
    let missing = env.err("read_text_file", json!({})).await;
    assert!(missing.contains("relative_path"), "{missing}");
}

#[tokio::test]
async fn read_caps_large_files_without_splitting_characters() {
    let env = env();
    // 3-byte characters so the 200 KB cut falls inside one.
    let big = "好".repeat(100_000);
    fs::write(env.dir.path().join("big.txt"), &big).unwrap();
    let read = env
        .ok("read_text_file", json!({"relative_path": "big.txt"}))
        .await;
    assert_eq!(read["truncated"], json!(true));
    assert_eq!(read["bytes"], json!(big.len()));
    let content = read["content"].as_str().unwrap();
    assert!(content.len() <= 200 * 1024 && content.len() > 200 * 1024 - 3);
    assert!(content.chars().all(|c| c == '好'));
    assert!(read["note"].as_str().unwrap().contains("first"));
}

#[tokio::test]
async fn tree_is_indented_bounded_and_capped() {
    let env = env();
    let root = env.dir.path();
    fs::create_dir_all(root.join("a/b/c/d/e")).unwrap();
    fs::write(root.join("a/b/file.rs"), "").unwrap();
    fs::write(root.join("top.txt"), "").unwrap();
    let tree = env
        .ok("list_directory_tree", json!({"relative_dir": "."}))
        .await;
    assert_eq!(
        tree["tree"],
        json!("./\n  a/\n    b/\n      c/\n      file.rs\n  top.txt")
    );
    assert_eq!(tree["max_depth"], json!(3));
    assert_eq!(tree["truncated"], json!(false));
    let shallow = env.ok("list_directory_tree", json!({"max_depth": 1})).await;
    assert_eq!(shallow["tree"], json!("./\n  a/\n  top.txt"));
    let clamped = env
        .ok("list_directory_tree", json!({"max_depth": 99}))
        .await;
    assert_eq!(clamped["max_depth"], json!(10));
    assert!(clamped["tree"].as_str().unwrap().contains("          e/"));
    let sub = env
        .ok(
            "list_directory_tree",
            json!({"relative_dir": "a/b", "max_depth": 1}),
        )
        .await;
    assert_eq!(sub["tree"], json!("a/b/\n  c/\n  file.rs"));

    for i in 0..700 {
        fs::write(root.join(format!("many_{i:04}.txt")), "").unwrap();
    }
    let capped = env.ok("list_directory_tree", json!({})).await;
    assert_eq!(capped["truncated"], json!(true));
    let lines = capped["tree"].as_str().unwrap().lines().count();
    assert!(lines <= 502, "{lines} lines");
    assert!(
        capped["tree"]
            .as_str()
            .unwrap()
            .ends_with("(cut at 500 entries)")
    );
}

#[tokio::test]
async fn bad_argument_types_are_reported() {
    let env = env();
    let err = env.err("read_text_file", json!({"relative_path": 5})).await;
    assert!(err.contains("must be a string"), "{err}");
    let raw = env
        .registry
        .execute("list_files", "not json", &env.ctx)
        .await;
    assert_eq!(raw["ok"], json!(false));
}

#[cfg(unix)]
#[tokio::test]
async fn a_named_pipe_is_refused_instead_of_blocking_the_read() {
    let e = env();
    let fifo = e.dir.path().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let error = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        e.err("read_text_file", json!({"relative_path": "pipe"})),
    )
    .await
    .expect("reading a pipe must not block");
    assert!(error.contains("not a regular file"), "{error}");
}

#[tokio::test]
async fn the_largest_counts_a_model_can_write_are_clamped_not_overflowed() {
    let env = env();
    let path = env.dir.path().join("many.txt");
    fs::write(&path, "a a a").unwrap();
    let max = u64::MAX;
    let replaced = env
        .ok(
            "replace_text_in_file",
            json!({"relative_path": "many.txt", "old_text": "a", "new_text": "bb", "count": max}),
        )
        .await;
    assert_eq!(replaced["replaced"], json!(3));
    assert_eq!(fs::read_to_string(&path).unwrap(), "bb bb bb");
    let quoted = env
        .ok(
            "replace_text_in_file",
            json!({"relative_path": "many.txt", "old_text": "bb", "new_text": "c", "count": max.to_string()}),
        )
        .await;
    assert_eq!(quoted["replaced"], json!(3));

    fs::create_dir_all(env.dir.path().join("d/e")).unwrap();
    let tree = env
        .ok(
            "list_directory_tree",
            json!({"relative_dir": "d", "max_depth": max}),
        )
        .await;
    assert_eq!(
        tree["max_depth"],
        json!(10),
        "clamped to the most levels allowed"
    );
    let shallow = env
        .ok(
            "list_directory_tree",
            json!({"relative_dir": "d", "max_depth": 0}),
        )
        .await;
    assert_eq!(shallow["max_depth"], json!(1), "at least one level");
    let past_u64 = env
        .err(
            "list_directory_tree",
            json!({"max_depth": "18446744073709551616"}),
        )
        .await;
    assert!(
        past_u64.contains("`max_depth` must be a non-negative whole number"),
        "{past_u64}"
    );
}
