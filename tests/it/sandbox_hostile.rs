//! A hostile model against the file sandbox: hard links, folders swapped for links while the
//! tools run, FIFOs, planted configuration and a replacement bomb. Each test is one finding of
//! the red-team run; each would fail on the code before the fix.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry, builtin_registry};
use serde_json::{Value, json};

const SECRET: &str = "OUTSIDE-SECRET-7f3a";

struct Rig {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
    registry: ToolRegistry,
}

fn rig() -> Rig {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    fs::create_dir_all(&ws).unwrap();
    fs::create_dir_all(&outside).unwrap();
    fs::write(outside.join("secret.txt"), SECRET).unwrap();
    fs::write(outside.join("outside-only.txt"), SECRET).unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(&ws).unwrap()));
    Rig {
        _dir: dir,
        ws,
        outside,
        ctx,
        registry: builtin_registry(),
    }
}

impl Rig {
    async fn call(&self, tool: &str, args: Value) -> Value {
        self.registry
            .execute(tool, &args.to_string(), &self.ctx)
            .await
    }

    async fn refused(&self, tool: &str, args: Value, words: &str) {
        let result = self.call(tool, args).await;
        assert_eq!(result["ok"], json!(false), "{tool}: {result}");
        let error = result["error"].as_str().unwrap_or_default();
        assert!(error.contains(words), "{tool}: `{error}` lacks `{words}`");
    }
}

#[tokio::test]
async fn a_hard_link_to_a_file_outside_is_neither_read_nor_written_through() {
    let r = rig();
    fs::hard_link(r.outside.join("secret.txt"), r.ws.join("planted.txt")).unwrap();
    r.refused(
        "read_text_file",
        json!({"relative_path": "planted.txt"}),
        "hard links",
    )
    .await;
    let search = r.call("search_files", json!({"pattern": "OUTSIDE"})).await;
    assert_eq!(search["match_count"], json!(0), "{search}");
    r.refused(
        "replace_text_in_file",
        json!({"relative_path": "planted.txt", "old_text": "OUTSIDE", "new_text": "PWNED"}),
        "hard links",
    )
    .await;
    r.refused(
        "append_text_file",
        json!({"relative_path": "planted.txt", "content": "PWNED"}),
        "hard links",
    )
    .await;
    r.refused(
        "write_text_file",
        json!({"relative_path": "planted.txt", "content": "PWNED"}),
        "hard links",
    )
    .await;
    assert_eq!(
        fs::read_to_string(r.outside.join("secret.txt")).unwrap(),
        SECRET
    );
}

#[tokio::test]
async fn a_write_replaces_the_file_and_never_changes_an_inode_others_share() {
    use std::os::unix::fs::MetadataExt;
    let r = rig();
    fs::write(r.ws.join("notes.md"), "old").unwrap();
    let before = fs::metadata(r.ws.join("notes.md")).unwrap().ino();
    // A reader holding the old file keeps the old content.
    let held = fs::File::open(r.ws.join("notes.md")).unwrap();
    let result = r
        .call(
            "write_text_file",
            json!({"relative_path": "notes.md", "content": "new"}),
        )
        .await;
    assert_eq!(result["ok"], json!(true), "{result}");
    assert_eq!(fs::read_to_string(r.ws.join("notes.md")).unwrap(), "new");
    assert_ne!(fs::metadata(r.ws.join("notes.md")).unwrap().ino(), before);
    assert_eq!(held.metadata().unwrap().len(), 3);
    assert_eq!(
        fs::read_dir(&r.ws).unwrap().count(),
        1,
        "no temporary file left"
    );
}

/// Swaps `ws/sub` between a real folder and a link to the outside folder as fast as it can,
/// until `stop` is set (atomic exchanges, so `sub` always exists as one or the other).
fn swapper(ws: &Path, outside: &Path, stop: Arc<AtomicBool>) -> std::thread::JoinHandle<u64> {
    let sub = ws.join("sub");
    let spare = ws.join("spare");
    fs::create_dir_all(&sub).unwrap();
    fs::write(sub.join("secret.txt"), "inside").unwrap();
    symlink(outside, &spare).unwrap();
    std::thread::spawn(move || {
        let mut swaps = 0u64;
        while !stop.load(Ordering::Relaxed) {
            rustix::fs::renameat_with(
                rustix::fs::CWD,
                &sub,
                rustix::fs::CWD,
                &spare,
                rustix::fs::RenameFlags::EXCHANGE,
            )
            .unwrap();
            swaps += 1;
        }
        swaps
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_link_mid_call_never_leads_out() {
    let r = rig();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(&r.ws, &r.outside, Arc::clone(&stop));
    let mut seen_inside = 0;
    for i in 0..300 {
        let read = r
            .call("read_text_file", json!({"relative_path": "sub/secret.txt"}))
            .await;
        assert!(
            !read.to_string().contains(SECRET),
            "read {i} went out: {read}"
        );
        seen_inside += usize::from(read["content"] == json!("inside"));
        if i % 3 == 0 {
            // Only the outside folder holds `outside-only.txt`: a listing naming it went out.
            let tree = r
                .call(
                    "list_directory_tree",
                    json!({"relative_dir": ".", "max_depth": 3}),
                )
                .await;
            assert!(
                !tree.to_string().contains("outside-only"),
                "tree went out: {tree}"
            );
            let listing = r.call("list_files", json!({"relative_dir": "sub"})).await;
            assert!(
                !listing.to_string().contains("outside-only"),
                "a listing went out: {listing}"
            );
            let search = r.call("search_files", json!({"pattern": "SECRET"})).await;
            assert!(
                !search.to_string().contains(SECRET),
                "search went out: {search}"
            );
        }
        if i % 2 == 0 {
            let _ = r
                .call(
                    "write_text_file",
                    json!({"relative_path": format!("sub/new-{i}.txt"), "content": "PWNED"}),
                )
                .await;
        }
    }
    stop.store(true, Ordering::Relaxed);
    let swaps = swaps.join().unwrap();
    assert!(swaps > 100, "the swapper barely ran ({swaps} swaps)");
    assert!(seen_inside > 0, "no read ever saw the real folder");
    let written_out: Vec<_> = fs::read_dir(&r.outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "secret.txt" && n != "outside-only.txt")
        .collect();
    assert!(written_out.is_empty(), "writes went out: {written_out:?}");
}

fn make_fifo(path: &Path) {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
}

#[tokio::test]
async fn fifos_are_refused_at_once_for_every_file_tool() {
    let r = rig();
    make_fifo(&r.ws.join("pipe"));
    let started = Instant::now();
    for (tool, args) in [
        ("read_text_file", json!({"relative_path": "pipe"})),
        (
            "write_text_file",
            json!({"relative_path": "pipe", "content": "x"}),
        ),
        (
            "append_text_file",
            json!({"relative_path": "pipe", "content": "x"}),
        ),
        (
            "replace_text_in_file",
            json!({"relative_path": "pipe", "old_text": "a", "new_text": "b"}),
        ),
    ] {
        r.refused(tool, args, "not a regular file").await;
    }
    let search = r.call("search_files", json!({"pattern": "x"})).await;
    assert_eq!(search["ok"], json!(true), "{search}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "a FIFO blocked a tool"
    );
}

#[tokio::test]
async fn configuration_cannot_be_planted_anywhere_in_the_workspace() {
    let r = rig();
    for path in [
        "sub/.env",
        "sub/.env.local",
        ".envrc",
        "sub/tools_plugins/helper.toml",
        "deep/er/Tools_Plugins/x.toml",
        "sub/miniclaw.toml",
        "sub/.mcp.json",
        ".miniclaw/sessions/x.json",
        ".git/hooks/pre-commit",
        "sub/.git/config",
        ".agents/skills/x/SKILL.md",
        "sub/.Agents/commands/x.md",
    ] {
        for tool in ["write_text_file", "append_text_file"] {
            r.refused(
                tool,
                json!({"relative_path": path, "content": "DEEPSEEK_BASE_URL=http://attacker"}),
                "configuration",
            )
            .await;
        }
    }
    let leftovers: Vec<_> = walk(&r.ws);
    assert!(leftovers.is_empty(), "something was created: {leftovers:?}");
    let ok = r
        .call(
            "write_text_file",
            json!({"relative_path": "sub/environment.md", "content": "fine"}),
        )
        .await;
    assert_eq!(ok["ok"], json!(true), "{ok}");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[tokio::test]
async fn a_replacement_bomb_is_refused_before_it_is_built() {
    let r = rig();
    let original = "a".repeat(100_000);
    fs::write(r.ws.join("bomb.txt"), &original).unwrap();
    let started = Instant::now();
    let result = r
        .call(
            "replace_text_in_file",
            json!({"relative_path": "bomb.txt", "old_text": "a", "new_text": "B".repeat(50_000)}),
        )
        .await;
    assert_eq!(result["ok"], json!(false), "{result}");
    let error = result["error"].as_str().unwrap();
    assert!(
        error.contains("5000000000 bytes") && error.contains("limit"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(fs::read_to_string(r.ws.join("bomb.txt")).unwrap(), original);
    // The same cap holds for appends that would grow a file past it.
    let big = "x".repeat(6 * 1024 * 1024);
    fs::write(r.ws.join("big.txt"), &big).unwrap();
    let append = r
        .call(
            "append_text_file",
            json!({"relative_path": "big.txt", "content": big}),
        )
        .await;
    assert_eq!(append["ok"], json!(false), "{append}");
}

#[tokio::test]
async fn a_confined_shell_command_cannot_open_anything_outside_the_workspace() {
    use miniclaw::tools::confine::Confinement;
    let r = rig();
    let cat = Path::new("/bin/cat");
    let confinement = Confinement::read_only(r.ctx.sandbox.root(), cat).expect(
        "Landlock is needed for this test: a Linux kernel of 5.13 or newer with Landlock enabled",
    );
    let mut cmd = tokio::process::Command::new(cat);
    confinement.apply(&mut cmd).unwrap();
    let out = cmd
        .arg(r.outside.join("secret.txt"))
        .arg(r.ws.join("inside.txt"))
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains(SECRET), "{stdout}");
    assert!(stderr.contains("Permission denied"), "{stderr}");
    // Writing is refused even inside the workspace.
    let mut touch = tokio::process::Command::new("/usr/bin/touch");
    Confinement::read_only(r.ctx.sandbox.root(), Path::new("/usr/bin/touch"))
        .unwrap()
        .apply(&mut touch)
        .unwrap();
    let status = touch.arg(r.ws.join("made.txt")).status().await.unwrap();
    assert!(!status.success() && !r.ws.join("made.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shell_commands_racing_a_swapped_folder_never_read_outside() {
    let mut r = rig();
    miniclaw::tools::shell::register(&mut r.registry, Default::default());
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = swapper(&r.ws, &r.outside, Arc::clone(&stop));
    let mut inside = 0;
    for i in 0..150 {
        let cat = r
            .call(
                "run_shell_command",
                json!({"command": "cat", "args": ["sub/secret.txt"]}),
            )
            .await;
        assert!(!cat.to_string().contains(SECRET), "cat {i} went out: {cat}");
        inside += usize::from(cat["stdout"] == json!("inside"));
        if i % 5 == 0 {
            let rg = r
                .call(
                    "run_shell_command",
                    json!({"command": "rg", "args": ["-l", "SECRET", "."]}),
                )
                .await;
            assert_eq!(rg["command"], json!("rg -l SECRET ."), "{rg}");
            assert!(
                !rg.to_string().contains("outside-only"),
                "rg went out: {rg}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    assert!(swaps.join().unwrap() > 100);
    assert!(inside > 0, "no command ever read the real folder");
}

#[tokio::test]
async fn a_git_repository_cannot_be_assembled_from_plain_writes() {
    let r = rig();
    for (first, second) in [("HEAD", "config"), ("config", "HEAD")] {
        let dir = format!("vendor-{first}");
        let made = r
            .call(
                "write_text_file",
                json!({"relative_path": format!("{dir}/{first}"), "content": "ref: refs/heads/main\n"}),
            )
            .await;
        assert_eq!(made["ok"], json!(true), "{made}");
        r.refused(
            "write_text_file",
            json!({"relative_path": format!("{dir}/{second}"), "content": "[core]\n\tfsmonitor = \"touch PWNED\"\n"}),
            "git repository",
        )
        .await;
    }
    // Either name alone is an ordinary file.
    let ok = r
        .call(
            "write_text_file",
            json!({"relative_path": "app/config", "content": "port = 80"}),
        )
        .await;
    assert_eq!(ok["ok"], json!(true), "{ok}");
}

#[tokio::test]
async fn the_shell_refuses_hard_linked_files_too() {
    let mut r = rig();
    miniclaw::tools::shell::register(&mut r.registry, Default::default());
    fs::hard_link(r.outside.join("secret.txt"), r.ws.join("hl.txt")).unwrap();
    r.refused(
        "run_shell_command",
        json!({"command": "cat", "args": ["hl.txt"]}),
        "hard links",
    )
    .await;
}

#[tokio::test]
async fn read_only_files_stay_unchanged_and_long_names_can_be_written() {
    use std::os::unix::fs::PermissionsExt;
    let r = rig();
    fs::write(r.ws.join("locked.txt"), "keep").unwrap();
    fs::set_permissions(r.ws.join("locked.txt"), fs::Permissions::from_mode(0o444)).unwrap();
    r.refused(
        "write_text_file",
        json!({"relative_path": "locked.txt", "content": "changed"}),
        "read-only",
    )
    .await;
    assert_eq!(fs::read_to_string(r.ws.join("locked.txt")).unwrap(), "keep");
    let long = format!("{}.txt", "n".repeat(246));
    let result = r
        .call(
            "write_text_file",
            json!({"relative_path": long, "content": "x"}),
        )
        .await;
    assert_eq!(result["ok"], json!(true), "{result}");
}

/// Interpreter environments and dependency folders, at several depths and letter cases, through
/// every writing tool: all refused by the one configuration rule, nothing written, reads allowed.
#[tokio::test]
async fn interpreter_environments_and_dependency_folders_cannot_be_written() {
    let r = rig();
    fs::create_dir_all(r.ws.join("node_modules/dep")).unwrap();
    fs::write(
        r.ws.join("node_modules/dep/index.js"),
        "module.exports = 1;",
    )
    .unwrap();
    let mut paths = Vec::new();
    for name in [
        ".venv",
        "venv",
        "node_modules",
        "site-packages",
        "__pycache__",
    ] {
        let upper = name.to_ascii_uppercase();
        for prefix in ["", "sub/", "a/b/c/"] {
            paths.push(format!("{prefix}{name}/x.py"));
            paths.push(format!("{prefix}{upper}/lib/python3.11/x.js"));
        }
    }
    for p in [
        "evil.pth",
        "EVIL.PTH",
        "lib/python3.11/site-packages/evil.pth",
        ".venv/lib/python3.11/site-packages/evil.pth",
        "x/y/z/Hook.Pth",
    ] {
        paths.push(p.to_string());
    }
    let before = walk(&r.ws);
    for path in &paths {
        for tool in ["write_text_file", "append_text_file"] {
            r.refused(
                tool,
                json!({"relative_path": path, "content": "import os; os.system('id')"}),
                "interpreter",
            )
            .await;
        }
    }
    r.refused(
        "replace_text_in_file",
        json!({"relative_path": "node_modules/dep/index.js", "old_text": "1", "new_text": "2"}),
        "node_modules/",
    )
    .await;
    assert_eq!(walk(&r.ws), before, "something was created");
    assert_eq!(
        fs::read_to_string(r.ws.join("node_modules/dep/index.js")).unwrap(),
        "module.exports = 1;"
    );
    let read = r
        .call(
            "read_text_file",
            json!({"relative_path": "node_modules/dep/index.js"}),
        )
        .await;
    assert_eq!(read["ok"], json!(true), "reads stay allowed: {read}");
    for fine in ["venvs.md", "sub/my_venv/notes.txt", "path.txt"] {
        let ok = r
            .call(
                "write_text_file",
                json!({"relative_path": fine, "content": "ok"}),
            )
            .await;
        assert_eq!(ok["ok"], json!(true), "{fine}: {ok}");
    }
}
