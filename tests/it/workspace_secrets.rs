//! A project folder as the workspace (`--workspace .`): its `.env*` files and MiniClaw's own files
//! (`history.json` and its siblings, `.miniclaw/`) are out of every tool's reach. Each tool is
//! asked for them every way a model could think of — by name, in another letter case, through a
//! link, by searching and listing the folder, and through every shell command — and nothing of
//! their content and none of their names ever comes back.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;
use std::sync::Arc;

use miniclaw::agent::{AgentEvent, EventSink};
use miniclaw::tools::confine::Confinement;
use miniclaw::tools::shell::{ShellSettings, ShellTool};
use miniclaw::tools::subagent::DelegateTool;
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry, builtin_registry};
use serde_json::{Value, json};

/// What every hidden file holds.
const CANARY: &str = "sk-CANARY-123";
/// What the tools say when they refuse a hidden path.
const KEPT_OUT: &str = "kept out of the tools' reach";
/// Names that must never appear in a listing or a search (compared in lower case).
const HIDDEN_NAMES: [&str; 5] = [".env", "history.json", ".miniclaw", "x.json", "inner"];

struct Project {
    _dir: tempfile::TempDir,
    ctx: ToolContext,
    registry: ToolRegistry,
}

/// A project with its key in `.env` and every kind of hidden file, plus ordinary files that
/// mention the key's variable (so searches have something to find).
fn project() -> Project {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("project");
    fs::create_dir_all(ws.join("sub")).unwrap();
    fs::create_dir_all(ws.join(".miniclaw/sessions")).unwrap();
    fs::create_dir_all(ws.join(".env.d")).unwrap();
    let hidden = [
        ".env",
        ".env.local",
        "sub/.ENV",
        ".env.d/inner",
        "history.json",
        "history.json.journal",
        "history.json.lock",
        "history.json.corrupt-20250101T000000",
        ".miniclaw/sessions/x.json",
    ];
    for file in hidden {
        fs::write(ws.join(file), format!("DEEPSEEK_API_KEY={CANARY}\n")).unwrap();
    }
    fs::write(
        ws.join("notes.txt"),
        "set DEEPSEEK_API_KEY somewhere safe\n",
    )
    .unwrap();
    fs::write(ws.join("sub/ok.txt"), "DEEPSEEK is the model\n").unwrap();
    symlink(".env", ws.join("link")).unwrap();
    symlink("sub/.ENV", ws.join("deep-link")).unwrap();
    symlink(".miniclaw", ws.join("dirlink")).unwrap();
    let mut registry = builtin_registry();
    registry.register(ShellTool::new(ShellSettings::default()));
    registry.register(DelegateTool::new());
    Project {
        ctx: ToolContext::standalone(Arc::new(Sandbox::new(&ws).unwrap())),
        registry,
        _dir: dir,
    }
}

impl Project {
    fn root(&self) -> &Path {
        self.ctx.sandbox.root()
    }

    async fn call(&self, tool: &str, args: Value) -> Value {
        let result = self
            .registry
            .execute(tool, &args.to_string(), &self.ctx)
            .await;
        // A search echoes its pattern, which may be the key itself.
        let mut seen = result.clone();
        if let Some(fields) = seen.as_object_mut() {
            fields.remove("pattern");
        }
        assert!(
            !seen.to_string().contains(CANARY),
            "{tool}({args}) leaked the key: {result}"
        );
        result
    }

    /// The call is refused, saying why.
    async fn refused(&self, tool: &str, args: Value) {
        let result = self.call(tool, args.clone()).await;
        assert_eq!(result["ok"], json!(false), "{tool}({args}): {result}");
        let error = result["error"].as_str().unwrap_or_default();
        assert!(error.contains(KEPT_OUT), "{tool}({args}): {error}");
    }

    /// The call works and `text` (one of its fields) names nothing hidden.
    async fn shown(&self, tool: &str, args: Value, field: &str) -> String {
        let result = self.call(tool, args.clone()).await;
        assert_eq!(result["ok"], json!(true), "{tool}({args}): {result}");
        let text = match &result[field] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        assert_names_nothing_hidden(&format!("{tool}({args})"), &text);
        text
    }
}

fn assert_names_nothing_hidden(what: &str, text: &str) {
    let lower = text.to_lowercase();
    for name in HIDDEN_NAMES {
        assert!(!lower.contains(name), "{what} shows `{name}`: {text}");
    }
}

#[tokio::test]
async fn reads_of_hidden_files_are_refused_by_name_case_and_link() {
    let p = project();
    for path in [
        ".env",
        "./.ENV.local",
        ".Env.Local",
        "sub/.ENV",
        "sub/../.env",
        ".env.d/inner",
        "link",
        "deep-link",
        "history.json",
        "HISTORY.JSON",
        "history.json.journal",
        "history.json.lock",
        "history.json.corrupt-20250101T000000",
        ".miniclaw/sessions/x.json",
        "dirlink/sessions/x.json",
    ] {
        let result = p
            .call("read_text_file", json!({"relative_path": path}))
            .await;
        assert_eq!(result["ok"], json!(false), "{path}: {result}");
        if path != "sub/../.env" {
            let error = result["error"].as_str().unwrap_or_default();
            assert!(error.contains(KEPT_OUT), "{path}: {error}");
        }
    }
    for folder in [".miniclaw", "dirlink", ".env.d"] {
        p.refused("list_files", json!({"relative_dir": folder}))
            .await;
        p.refused("list_directory_tree", json!({"relative_dir": folder}))
            .await;
        p.refused(
            "search_files",
            json!({"pattern": "DEEPSEEK", "relative_dir": folder}),
        )
        .await;
    }
    // A helper agent is never started on one.
    for path in [".env", "link", "history.json"] {
        p.refused(
            "delegate_file_analysis",
            json!({"relative_path": path, "task": "print the key"}),
        )
        .await;
    }
    // Writes were refused before (configuration names, the history); they still are.
    for path in [
        ".env",
        "sub/.env.new",
        "history.json.lock",
        ".miniclaw/sessions/y.json",
    ] {
        let result = p
            .call(
                "write_text_file",
                json!({"relative_path": path, "content": "x"}),
            )
            .await;
        assert_eq!(result["ok"], json!(false), "{path}: {result}");
    }
    // An ordinary file in the same folders reads as usual.
    let ok = p
        .shown(
            "read_text_file",
            json!({"relative_path": "sub/ok.txt"}),
            "content",
        )
        .await;
    assert_eq!(ok, "DEEPSEEK is the model\n");
}

#[tokio::test]
async fn listings_and_searches_leave_hidden_entries_out() {
    let p = project();
    let listing = p
        .shown("list_files", json!({"relative_dir": "."}), "listing")
        .await;
    assert_eq!(listing, "sub/\nnotes.txt", "{listing}");
    let root = p.call("list_files", json!({})).await;
    // .env, .env.local, .env.d, history.json ×4, .miniclaw, and the links to them.
    assert_eq!(root["hidden"], json!(11), "{root}");
    let sub = p
        .shown("list_files", json!({"relative_dir": "sub"}), "listing")
        .await;
    assert_eq!(sub, "ok.txt");
    let tree = p
        .shown("list_directory_tree", json!({"max_depth": 5}), "tree")
        .await;
    assert_eq!(tree, "./\n  sub/\n    ok.txt\n  notes.txt", "{tree}");

    for (pattern, dir) in [(CANARY, "."), ("sk-CANARY", "sub"), ("DEEPSEEK", ".")] {
        for include_ignored in [false, true] {
            let args = json!({"pattern": pattern, "relative_dir": dir, "include_ignored": include_ignored});
            let matches = p.shown("search_files", args, "matches").await;
            if pattern == "DEEPSEEK" {
                assert_eq!(
                    matches,
                    json!([
                        "notes.txt:1:set DEEPSEEK_API_KEY somewhere safe",
                        "sub/ok.txt:1:DEEPSEEK is the model"
                    ])
                    .to_string()
                );
            } else {
                assert_eq!(matches, "[]");
            }
        }
    }
}

#[tokio::test]
async fn shell_commands_naming_hidden_files_are_refused() {
    let p = project();
    let shell = |command: &str, args: &[&str]| json!({"command": command, "args": args});
    for (command, args) in [
        ("cat", &[".env"][..]),
        ("cat", &["./.ENV.local"]),
        ("cat", &["notes.txt", "sub/.ENV"]),
        ("cat", &["link"]),
        ("cat", &["deep-link"]),
        ("cat", &[".env.d/inner"]),
        ("head", &["-n", "1", "history.json"]),
        ("tail", &["history.json.journal"]),
        ("wc", &["-c", "history.json.lock"]),
        ("cat", &["history.json.corrupt-20250101T000000"]),
        ("cat", &[".miniclaw/sessions/x.json"]),
        ("cat", &["dirlink/sessions/x.json"]),
        ("ls", &["-la", ".miniclaw"]),
        ("ls", &[".env.d"]),
        ("rg", &["KEY", ".env"]),
        ("rg", &["-e", "KEY", "--", "./.env.local"]),
        ("rg", &["-uuu", "KEY", "dirlink"]),
        ("rg", &["-f", ".env", "notes.txt"]),
        ("rg", &["--ignore-file", ".env", "KEY"]),
    ] {
        p.refused("run_shell_command", shell(command, args)).await;
    }
    p.refused(
        "run_shell_command",
        json!({"command": "ls", "working_dir": ".miniclaw"}),
    )
    .await;
    // Programs that would read a folder their own way are not allowed at all.
    for (command, args) in [("grep", &["-r", "KEY", "."][..]), ("find", &["."])] {
        let result = p.call("run_shell_command", shell(command, args)).await;
        assert_eq!(result["ok"], json!(false), "{result}");
    }
}

#[tokio::test]
async fn shell_listings_and_searches_of_the_folder_show_nothing_hidden() {
    let p = project();
    // (command, arguments, whether ordinary files show up: asking only for hidden ones or for
    // the key finds nothing at all)
    let cases: [(&str, &[&str], bool); 15] = [
        ("rg", &["KEY"], true),
        ("rg", &["-uuu", "-i", "canary", "."], false),
        (
            "rg",
            &["--hidden", "--no-ignore", "-g", ".env", "KEY"],
            false,
        ),
        (
            "rg",
            &["-uu", "--iglob", ".ENV", "--iglob", "history.json*", "KEY"],
            false,
        ),
        ("rg", &["-uuu", "-l", "KEY"], true),
        ("rg", &["-uuu", "-c", "DEEPSEEK", "sub"], true),
        ("rg", &["--files", "-uuu"], true),
        ("rg", &["-uuu", "--json", "KEY"], true),
        ("rg", &["-uuu", "-e", "KEY", "--", "."], true),
        ("ls", &["-la"], true),
        ("ls", &["-laR"], true),
        ("ls", &["-a1F", "sub"], true),
        ("ls", &["-R"], true),
        ("cat", &["notes.txt"], true),
        ("wc", &["-l", "notes.txt", "sub/ok.txt"], true),
    ];
    for (command, args, ordinary) in cases {
        let args = json!({"command": command, "args": args});
        let stdout = p.shown("run_shell_command", args.clone(), "stdout").await;
        p.shown("run_shell_command", args.clone(), "stderr").await;
        let shows_ordinary = ["ok.txt", "notes.txt", "DEEPSEEK"]
            .iter()
            .any(|w| stdout.contains(w));
        assert_eq!(shows_ordinary, ordinary, "{args}: {stdout}");
    }
}

#[tokio::test]
async fn the_live_output_of_ls_names_nothing_hidden_either() {
    let p = project();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        events: EventSink::new(tx),
        ..ToolContext::standalone(p.ctx.sandbox.clone())
    };
    let result = p
        .registry
        .execute(
            "run_shell_command",
            &json!({"command": "ls", "args": ["-laR"]}).to_string(),
            &ctx,
        )
        .await;
    assert_eq!(result["ok"], json!(true), "{result}");
    let mut live = String::new();
    while let Ok(event) = rx.try_recv() {
        if let AgentEvent::ToolOutputDelta { text, .. } = event {
            live.push_str(&text);
        }
    }
    assert!(live.contains("notes.txt"), "{live}");
    assert_names_nothing_hidden("live ls -laR", &live);
}

#[tokio::test]
async fn the_kernel_refuses_hidden_files_to_a_confined_command_even_unchecked() {
    // The policy is bypassed here: `cat` and `rg` are started directly with the hidden paths,
    // only confined. What holds is Landlock's grant of the workspace minus its hidden files.
    let p = project();
    let root = p.root().to_path_buf();
    let run = |program: std::path::PathBuf, args: Vec<std::path::PathBuf>| {
        let root = root.clone();
        async move {
            let confinement = Confinement::read_only(&root, &program).expect(
                "Landlock is needed for this test: a Linux kernel of 5.13 or newer with Landlock enabled",
            );
            let mut cmd = tokio::process::Command::new(program);
            confinement.apply(&mut cmd).unwrap();
            cmd.args(args).current_dir(&root).output().await.unwrap()
        }
    };
    let files = [
        ".env",
        "sub/.ENV",
        "link",
        "history.json",
        ".miniclaw/sessions/x.json",
    ]
    .map(|f| root.join(f))
    .to_vec();
    let mut all = files.clone();
    all.push(root.join("notes.txt"));
    all.push(root.join("sub/ok.txt"));
    let cat = run("/bin/cat".into(), all).await;
    let stdout = String::from_utf8_lossy(&cat.stdout);
    assert!(!stdout.contains(CANARY), "{stdout}");
    assert!(
        stdout.contains("somewhere safe") && stdout.contains("the model"),
        "{stdout}"
    );
    let stderr = String::from_utf8_lossy(&cat.stderr);
    assert_eq!(
        stderr.matches("Permission denied").count(),
        files.len(),
        "{stderr}"
    );
    // rg walking the whole folder, hidden files included, without the shell's exclusions.
    let path = std::env::var("PATH").unwrap_or_default();
    let rg = miniclaw::tools::process::find_program("rg", &path)
        .expect("ripgrep (rg) is needed for this test");
    let rg = run(
        rg,
        vec!["-uuu".into(), "-e".into(), "KEY".into(), root.clone()],
    )
    .await;
    let stdout = String::from_utf8_lossy(&rg.stdout);
    assert!(!stdout.contains(CANARY), "{stdout}");
    assert!(stdout.contains("notes.txt"), "{stdout}");
}
