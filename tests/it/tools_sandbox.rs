//! Hostile paths against every file tool, run through the registry, plus sandbox properties.
#![cfg(unix)]

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use miniclaw::tools::{Sandbox, SandboxError, ToolContext, builtin_registry};
use proptest::prelude::*;
use serde_json::{Value, json};

const SECRET: &str = "TOP SECRET outside the workspace";
const HISTORY: &str = "{\"messages\": []}";

/// A temp folder holding `outside/` (a secret) and `ws/` (the workspace) with hostile links.
struct Fixture {
    _dir: tempfile::TempDir,
    outside: PathBuf,
    ws: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    let ws = dir.path().join("ws");
    fs::create_dir_all(&outside).unwrap();
    fs::create_dir_all(ws.join("a")).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(ws.join("history.json"), HISTORY).unwrap();
    fs::write(ws.join("a/inside.txt"), "inside").unwrap();
    symlink(outside.join("secret.txt"), ws.join("link_file")).unwrap();
    symlink(&outside, ws.join("link_dir")).unwrap();
    symlink("../outside", ws.join("rel_link_dir")).unwrap();
    symlink(outside.join("missing.txt"), ws.join("dangling")).unwrap();
    symlink("../outside/missing-dir", ws.join("dangling_dir")).unwrap();
    Fixture {
        _dir: dir,
        outside,
        ws,
    }
}

/// Every file in `dir` with its content, to prove nothing changed.
fn snapshot(dir: &Path) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let content = fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), content)
        })
        .collect();
    out.sort();
    out
}

/// (path, words the error must contain, refused for writes only)
fn hostile_paths(outside: &Path) -> Vec<(String, &'static str, bool)> {
    vec![
        ("../outside/secret.txt".into(), "`..` is not allowed", false),
        (
            "a/../../outside/secret.txt".into(),
            "`..` is not allowed",
            false,
        ),
        ("..".into(), "`..` is not allowed", false),
        (
            "..\\outside\\secret.txt".into(),
            "`..` is not allowed",
            false,
        ),
        (
            "/etc/passwd".into(),
            "absolute paths are not allowed",
            false,
        ),
        (
            outside.join("secret.txt").to_string_lossy().into_owned(),
            "absolute paths are not allowed",
            false,
        ),
        ("C:\\Windows\\win.ini".into(), "Windows drive", false),
        (
            "\\\\server\\share\\x".into(),
            "absolute paths are not allowed",
            false,
        ),
        ("link_file".into(), "through a symbolic link", false),
        ("link_dir".into(), "through a symbolic link", false),
        (
            "link_dir/secret.txt".into(),
            "through a symbolic link",
            false,
        ),
        (
            "rel_link_dir/new.txt".into(),
            "through a symbolic link",
            false,
        ),
        ("dangling".into(), "through a symbolic link", false),
        (
            "dangling_dir/new.txt".into(),
            "through a symbolic link",
            false,
        ),
        ("a\0b".into(), "NUL bytes are not allowed", false),
        ("x/".repeat(2100), "longer than 4096 bytes", false),
        (
            "history.json".into(),
            "history file is managed by MiniClaw",
            true,
        ),
        (
            "./history.json".into(),
            "history file is managed by MiniClaw",
            true,
        ),
        (
            "history.json.tmp-42".into(),
            "history file is managed by MiniClaw",
            true,
        ),
        (
            "History.JSON".into(),
            "history file is managed by MiniClaw",
            true,
        ),
    ]
}

/// The arguments of `tool` aimed at `path`.
fn args_for(tool: &str, path: &str) -> Value {
    match tool {
        "list_files" | "list_directory_tree" => json!({"relative_dir": path}),
        "search_files" => json!({"relative_dir": path, "pattern": "SECRET"}),
        "read_text_file" => json!({"relative_path": path}),
        "write_text_file" | "append_text_file" => {
            json!({"relative_path": path, "content": "PWNED"})
        }
        "replace_text_in_file" => {
            json!({"relative_path": path, "old_text": "SECRET", "new_text": "PWNED"})
        }
        other => panic!("no arguments for {other}"),
    }
}

const READ_TOOLS: [&str; 4] = [
    "list_files",
    "read_text_file",
    "list_directory_tree",
    "search_files",
];
const WRITE_TOOLS: [&str; 3] = [
    "write_text_file",
    "append_text_file",
    "replace_text_in_file",
];

#[tokio::test]
async fn every_file_tool_refuses_every_hostile_path() {
    let fx = fixture();
    let before_outside = snapshot(&fx.outside);
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(&fx.ws).unwrap()));
    let registry = builtin_registry();
    let mut checked = 0;
    for tool in READ_TOOLS.iter().chain(WRITE_TOOLS.iter()) {
        assert!(registry.get(tool).is_some(), "{tool} is registered");
        let is_write = WRITE_TOOLS.contains(tool);
        for (path, rule, write_only) in hostile_paths(&fx.outside) {
            if write_only && !is_write {
                continue;
            }
            let raw = args_for(tool, &path).to_string();
            let result = registry.execute(tool, &raw, &ctx).await;
            let shown: String = path.chars().take(40).collect();
            assert_eq!(result["ok"], json!(false), "{tool} {shown:?}: {result}");
            assert_eq!(result["tool"], json!(tool));
            let error = result["error"].as_str().unwrap();
            assert!(error.contains(rule), "{tool} {shown:?}: {error}");
            assert!(!result.to_string().contains("TOP SECRET"), "{tool} leaked");
            checked += 1;
        }
    }
    assert!(checked > 100);
    assert_eq!(snapshot(&fx.outside), before_outside, "outside changed");
    assert_eq!(
        fs::read_to_string(fx.ws.join("history.json")).unwrap(),
        HISTORY
    );
    assert!(!fx.outside.join("missing.txt").exists());
    assert!(!fx.outside.join("new.txt").exists());
    assert!(!fx.outside.join("missing-dir").exists());
}

#[tokio::test]
async fn the_history_file_is_out_of_the_tools_reach_even_for_reading() {
    let fx = fixture();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(&fx.ws).unwrap()));
    let registry = builtin_registry();
    let read = registry
        .execute(
            "read_text_file",
            r#"{"relative_path":"history.json"}"#,
            &ctx,
        )
        .await;
    assert_eq!(read["ok"], json!(false), "{read}");
    assert!(
        read["error"]
            .as_str()
            .is_some_and(|e| e.contains("MiniClaw's own files")),
        "{read}"
    );
    assert!(!read.to_string().contains(HISTORY));
}

#[tokio::test]
async fn walking_tools_do_not_follow_links_out_of_the_workspace() {
    let fx = fixture();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(&fx.ws).unwrap()));
    let registry = builtin_registry();
    let search = registry
        .execute("search_files", r#"{"pattern":"TOP SECRET"}"#, &ctx)
        .await;
    assert_eq!(search["ok"], json!(true), "{search}");
    assert_eq!(search["match_count"], json!(0), "{search}");
    let tree = registry
        .execute("list_directory_tree", r#"{"max_depth":5}"#, &ctx)
        .await;
    let text = tree["tree"].as_str().unwrap();
    assert!(text.contains("link_dir@"), "{text}");
    assert!(!text.contains("secret.txt"), "{text}");
    let list = registry.execute("list_files", "{}", &ctx).await;
    let entries = list["entries"].as_array().unwrap();
    let link = entries.iter().find(|e| e["name"] == "link_file").unwrap();
    assert_eq!(link["type"], json!("symlink"));
    assert!(link.get("size").is_none(), "no size leaks through a link");
}

#[test]
fn links_inside_the_workspace_resolve_to_their_real_paths() {
    let fx = fixture();
    symlink("a", fx.ws.join("to_a")).unwrap();
    symlink("history.json", fx.ws.join("h")).unwrap();
    let sandbox = Sandbox::new(&fx.ws).unwrap();
    let root = sandbox.root().to_path_buf();
    assert_eq!(
        sandbox.resolve_read("to_a/inside.txt").unwrap(),
        root.join("a/inside.txt")
    );
    // Writes follow no link, even one that stays inside: what is checked is what is written.
    let through_link = sandbox.resolve_write("to_a/new/deep.txt").unwrap_err();
    assert!(
        through_link
            .to_string()
            .contains("writes take the real path")
    );
    assert_eq!(
        sandbox.resolve_write("a/new/deep.txt").unwrap(),
        root.join("a/new/deep.txt")
    );
    // A link to the history file is still the history file.
    let refused = sandbox.resolve_write("h").unwrap_err();
    assert!(matches!(refused, SandboxError::Refused { ref rule, .. } if rule.contains("history")));
    assert_eq!(sandbox.resolve_read("").unwrap(), root);
    assert_eq!(sandbox.resolve_read(".").unwrap(), root);
    assert_eq!(
        sandbox.resolve_read("./a//inside.txt").unwrap(),
        root.join("a/inside.txt")
    );
    assert!(sandbox.resolve_write(".").is_err());
    assert!(sandbox.resolve_write("").is_err());
    assert_eq!(
        sandbox.display_relative(&root.join("a/inside.txt")),
        "a/inside.txt"
    );
    assert_eq!(sandbox.display_relative(&root), ".");
    // Names that merely look special are fine.
    assert!(sandbox.resolve_write("..foo").is_ok());
    assert!(sandbox.resolve_write("history.jsonl").is_ok());
    assert!(sandbox.resolve_write("a/history.json").is_ok());
}

#[test]
fn refusals_name_the_path_and_the_rule() {
    let fx = fixture();
    let sandbox = Sandbox::new(&fx.ws).unwrap();
    let err = sandbox.resolve_read("../x").unwrap_err();
    assert_eq!(
        err,
        SandboxError::Refused {
            path: "../x".into(),
            rule: "`..` is not allowed".into()
        }
    );
    assert_eq!(err.to_string(), "path `../x` refused: `..` is not allowed");
}

/// Path pieces, hostile ones included.
fn segment() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec![
        "a",
        "b",
        "..",
        ".",
        "/",
        "\0",
        "\\",
        "",
        "out",
        "hist",
        "history.json",
        "c:",
        "~",
    ])
}

proptest! {
    #![proptest_config(crate::proptest_config(400))]
    #[test]
    fn random_paths_never_resolve_outside(segments in prop::collection::vec(segment(), 0..10)) {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        fs::create_dir_all(ws.join("a/b")).unwrap();
        fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        symlink(dir.path().join("elsewhere"), ws.join("out")).unwrap();
        symlink("a/b", ws.join("hist")).unwrap();
        let sandbox = Sandbox::new(&ws).unwrap();
        let root = sandbox.root().to_path_buf();
        let path = segments.join("/");
        let has_parent = path.split(['/', '\\']).any(|p| p == "..");
        for result in [sandbox.resolve_read(&path), sandbox.resolve_write(&path)] {
            match result {
                Ok(resolved) => {
                    prop_assert!(resolved.starts_with(&root), "{path:?} -> {resolved:?}");
                    prop_assert!(!has_parent && !path.contains('\0'), "{path:?} accepted");
                    // The deepest existing ancestor's real path is inside too.
                    let mut probe = resolved.clone();
                    while !probe.exists() {
                        prop_assert!(probe.pop());
                    }
                    prop_assert!(probe.canonicalize().unwrap().starts_with(&root));
                }
                Err(SandboxError::Refused { rule, .. }) => prop_assert!(!rule.is_empty()),
                Err(other) => prop_assert!(false, "unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn miniclaws_own_configuration_inside_the_workspace_cannot_be_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("tools_plugins")).unwrap();
    let sandbox = miniclaw::tools::Sandbox::new(root)
        .unwrap()
        .with_protected_config([
            root.join(".env"),
            root.join("tools_plugins"),
            root.join("cfg").join("miniclaw"),
        ]);
    for path in [
        ".env",
        ".ENV",
        "./.env",
        "tools_plugins/x.toml",
        "tools_plugins",
        "cfg/miniclaw/.env",
    ] {
        let err = sandbox.resolve_write(path).unwrap_err().to_string();
        assert!(err.contains("configuration"), "{path}: {err}");
    }
    assert!(sandbox.resolve_write("notes.md").is_ok());
    assert!(sandbox.resolve_write("env/notes.md").is_ok());
    assert!(sandbox.resolve_write(".environment-notes.md").is_err());
    // Reading a key file is refused too now; an ordinary file next to it is not.
    let err = sandbox.resolve_read(".env").unwrap_err().to_string();
    assert!(err.contains("may hold keys"), "{err}");
    assert!(sandbox.resolve_read("notes.md").is_ok());
}
