//! run_shell_command: hostile inputs refused with their reason, normal runs, bounds.

use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use crate::support::wait;
use miniclaw::agent::{AgentEvent, EventSink};
use miniclaw::tools::process::Limits;
use miniclaw::tools::shell::{ShellSettings, ShellTool};
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry};
use serde_json::{Value, json};

struct Fixture {
    _dir: tempfile::TempDir,
    sandbox: Arc<Sandbox>,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(
        ws.join("notes.txt"),
        "你好，世界\nsecond line\nthird line\n",
    )
    .unwrap();
    std::fs::write(ws.join("src/a.rs"), "fn main() { println!(\"hello\"); }\n").unwrap();
    std::fs::write(dir.path().join("secret.txt"), "top secret\n").unwrap();
    std::os::unix::fs::symlink("/etc", ws.join("escape")).unwrap();
    std::os::unix::fs::symlink("/etc/passwd", ws.join("passwd_link")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.txt"), ws.join("src/secret_link")).unwrap();
    std::os::unix::fs::symlink("/nonexistent/file", ws.join("dangling")).unwrap();
    std::os::unix::fs::symlink("notes.txt", ws.join("inner_link")).unwrap();
    Fixture {
        sandbox: Arc::new(Sandbox::new(&ws).unwrap()),
        _dir: dir,
    }
}

fn registry(settings: ShellSettings) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(ShellTool::new(settings));
    r
}

async fn run_with(
    f: &Fixture,
    settings: ShellSettings,
    command: &str,
    args: &[&str],
    working_dir: Option<&str>,
) -> Value {
    let mut a = json!({"command": command, "args": args});
    if let Some(wd) = working_dir {
        a["working_dir"] = json!(wd);
    }
    let ctx = ToolContext::standalone(f.sandbox.clone());
    registry(settings)
        .execute("run_shell_command", &a.to_string(), &ctx)
        .await
}

async fn run(f: &Fixture, command: &str, args: &[&str]) -> Value {
    run_with(f, ShellSettings::default(), command, args, None).await
}

fn rg_installed() -> bool {
    std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
        .any(|d| d.join("rg").is_file())
}

#[tokio::test]
async fn hostile_commands_are_refused_with_their_reason() {
    let f = fixture();
    // (command, args, working_dir, a piece of the reason)
    let cases: Vec<(&str, Vec<&str>, Option<&str>, &str)> = vec![
        ("rg", vec!["--pre", "cat", "x", "."], None, "runs a program"),
        ("rg", vec!["--pre=cat", "x"], None, "runs a program"),
        (
            "rg",
            vec!["-e", "(", "-f=/etc/passwd", "a.txt"],
            None,
            "not `-f=/etc/passwd`",
        ),
        (
            "rg",
            vec!["-f=../secret", "a.txt"],
            None,
            "not `-f=../secret`",
        ),
        ("head", vec!["-n=5", "a.txt"], None, "not `-n=5`"),
        ("rg", vec!["-j", "1000000", "x"], None, "at most 16 threads"),
        ("rg", vec!["--threads=999", "x"], None, "at most 16 threads"),
        ("rg", vec!["--pre-glob", "*.gz", "x"], None, "--pre"),
        ("rg", vec!["-z", "x"], None, "decompression"),
        ("rg", vec!["--search-zip", "x"], None, "decompression"),
        ("rg", vec!["-L", "x"], None, "symbolic links"),
        ("rg", vec!["--follow", "x"], None, "symbolic links"),
        ("rg", vec!["-iL", "x"], None, "symbolic links"),
        ("rg", vec!["x", "/etc"], None, "absolute path"),
        ("rg", vec!["-e", "x", "/etc"], None, "absolute path"),
        ("rg", vec!["--file=/etc/passwd", "."], None, "absolute path"),
        ("rg", vec!["--ignore-file", "../x", "y"], None, "`..`"),
        ("rg", vec!["x", "escape"], None, "outside the workspace"),
        ("rg", vec!["-e", "x", "--", "../x"], None, "`..`"),
        (
            "rg",
            vec!["--type-add", "x:*.x", "y"],
            None,
            "not allowed for `rg`",
        ),
        ("rg", vec!["a|b"], None, "`|`"),
        (
            "rg",
            vec!["--hostname-bin=id", "x"],
            None,
            "not allowed for `rg`",
        ),
        ("rg", vec!["-iz", "x"], None, "decompression"),
        (
            "tail",
            vec!["--fol", "notes.txt"],
            None,
            "not allowed for `tail`",
        ),
        ("tail", vec!["-f", "notes.txt"], None, "forever"),
        ("tail", vec!["-F", "notes.txt"], None, "forever"),
        ("tail", vec!["--follow=name", "notes.txt"], None, "forever"),
        ("tail", vec!["-qf", "notes.txt"], None, "forever"),
        ("tail", vec!["--pid=1", "notes.txt"], None, "forever"),
        ("cat", vec!["/etc/passwd"], None, "absolute path"),
        ("cat", vec!["../x"], None, "`..`"),
        ("cat", vec!["src/../../secret.txt"], None, "`..`"),
        ("cat", vec!["passwd_link"], None, "outside the workspace"),
        (
            "cat",
            vec!["src/secret_link"],
            None,
            "outside the workspace",
        ),
        ("cat", vec!["escape/passwd"], None, "outside the workspace"),
        ("cat", vec!["dangling"], None, "broken symbolic link"),
        ("cat", vec!["--", "/etc/passwd"], None, "absolute path"),
        ("cat", vec!["~/.ssh/id_rsa"], None, "home folder"),
        ("cat", vec!["`whoami`"], None, "backquote"),
        ("cat", vec!["notes.txt;", "rm", "-rf", "."], None, "`;`"),
        ("cat", vec!["notes.txt\nrm -rf ."], None, "newline"),
        ("cat", vec!["a && b"], None, "`&`"),
        ("cat", vec!["notes.txt", ">", "out"], None, "`>`"),
        ("cat", vec!["<", "notes.txt"], None, "`<`"),
        ("cat", vec!["$(id)"], None, "`$`"),
        ("cat", vec!["--unknown"], None, "not allowed for `cat`"),
        ("ls", vec!["$HOME"], None, "`$`"),
        ("ls", vec!["escape"], None, "outside the workspace"),
        ("ls", vec!["-L", "."], None, "symbolic links"),
        ("ls", vec!["/"], None, "absolute path"),
        ("ls", vec![".."], None, "`..`"),
        ("ls", vec![], Some("/"), "absolute path"),
        ("ls", vec![], Some(".."), "`..`"),
        ("ls", vec![], Some("escape"), "outside the workspace"),
        ("ls", vec![], Some("src/../.."), "`..`"),
        ("head", vec!["-n", "abc", "notes.txt"], None, "whole number"),
        (
            "head",
            vec!["-c", "5", "/proc/self/environ"],
            None,
            "absolute path",
        ),
        (
            "wc",
            vec!["--files0-from=list", "notes.txt"],
            None,
            "file names from a file",
        ),
        ("pwd", vec!["extra"], None, "takes no arguments"),
        ("sh", vec!["-c", "id"], None, "not an allowed command"),
        ("bash", vec!["-c", "id"], None, "not an allowed command"),
        ("env", vec![], None, "not an allowed command"),
        (
            "find",
            vec![".", "-exec", "id", "{}"],
            None,
            "not an allowed command",
        ),
        ("rm", vec!["-rf", "."], None, "not an allowed command"),
        (
            "python3",
            vec!["-c", "print(1)"],
            None,
            "not an allowed command",
        ),
        ("/bin/ls", vec![], None, "not an allowed command"),
        ("ls -la", vec![], None, "not an allowed command"),
        ("xargs", vec!["cat"], None, "not an allowed command"),
        ("ls|id", vec![], None, "`|`"),
    ];
    assert!(cases.len() >= 30);
    for (command, args, wd, reason) in cases {
        let obs = run_with(&f, ShellSettings::default(), command, &args, wd).await;
        assert_eq!(
            obs["ok"], false,
            "{command} {args:?} {wd:?} should be refused: {obs}"
        );
        let error = obs["error"].as_str().unwrap();
        assert!(
            error.starts_with("refused: "),
            "{command} {args:?}: {error}"
        );
        assert!(
            error.contains(reason),
            "{command} {args:?} {wd:?}: expected `{reason}` in `{error}`"
        );
    }
}

#[tokio::test]
async fn normal_commands_run_and_report_their_output() {
    let f = fixture();
    let ls = run(&f, "ls", &[]).await;
    assert_eq!(ls["ok"], true, "{ls}");
    assert_eq!(ls["exit_code"], 0);
    assert!(ls["stdout"].as_str().unwrap().contains("notes.txt"));
    assert_eq!(ls["truncated"], false);

    let cat = run(&f, "cat", &["notes.txt"]).await;
    assert_eq!(cat["stdout"], "你好，世界\nsecond line\nthird line\n");

    let inner = run(&f, "cat", &["inner_link"]).await;
    assert_eq!(
        inner["ok"], true,
        "a link inside the workspace is fine: {inner}"
    );

    let wc = run(&f, "wc", &["-l", "notes.txt"]).await;
    assert_eq!(wc["stdout"].as_str().unwrap().trim(), "3 notes.txt");

    for args in [
        vec!["-n", "2", "notes.txt"],
        vec!["-n2", "notes.txt"],
        vec!["--lines=2", "notes.txt"],
    ] {
        let head = run(&f, "head", &args).await;
        assert_eq!(
            head["stdout"], "你好，世界\nsecond line\n",
            "{args:?}: {head}"
        );
    }
    let tail = run(&f, "tail", &["-n", "1", "notes.txt"]).await;
    assert_eq!(tail["stdout"], "third line\n");

    let src = run_with(&f, ShellSettings::default(), "ls", &[], Some("src")).await;
    assert!(src["stdout"].as_str().unwrap().contains("a.rs"), "{src}");
    assert_eq!(src["working_dir"], "src");

    let missing = run(&f, "cat", &["missing.txt"]).await;
    assert_eq!(missing["ok"], true);
    assert_eq!(missing["exit_code"], 1);
    assert!(missing["stderr"].as_str().unwrap().contains("No such file"));

    let pwd = run(&f, "pwd", &[]).await;
    assert_eq!(
        pwd["stdout"].as_str().unwrap().trim(),
        f.sandbox.root().to_str().unwrap()
    );
}

#[tokio::test]
async fn rg_searches_with_the_first_positional_as_the_pattern() {
    if !rg_installed() {
        eprintln!("skipped: rg is not installed (apt-get install ripgrep)");
        return;
    }
    let f = fixture();
    let hit = run(&f, "rg", &["-n", "世界", "."]).await;
    assert_eq!(hit["ok"], true, "{hit}");
    assert_eq!(hit["exit_code"], 0);
    assert!(
        hit["stdout"]
            .as_str()
            .unwrap()
            .contains("notes.txt:1:你好，世界"),
        "{hit}"
    );

    let glued = run(&f, "rg", &["-n", "-e", "hello", "-gsrc/*.rs"]).await;
    assert!(
        glued["stdout"].as_str().unwrap().contains("a.rs"),
        "{glued}"
    );

    let none = run(&f, "rg", &["no-such-text-anywhere"]).await;
    assert_eq!(none["ok"], true);
    assert_eq!(
        none["exit_code"], 1,
        "rg exits 1 when nothing matches: {none}"
    );

    // The pattern `..` is a pattern, not a path.
    let dots = run(&f, "rg", &["-c", "..", "notes.txt"]).await;
    assert_eq!(dots["ok"], true, "{dots}");
}

#[tokio::test]
async fn a_missing_rg_names_the_package_to_install() {
    let f = fixture();
    let empty = tempfile::tempdir().unwrap();
    let settings = ShellSettings {
        search_path: Some(empty.path().to_string_lossy().into_owned()),
        ..ShellSettings::default()
    };
    let obs = run_with(&f, settings, "rg", &["x"], None).await;
    assert_eq!(obs["ok"], false);
    assert!(obs["error"].as_str().unwrap().contains("ripgrep"), "{obs}");
}

fn make_fifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn a_command_that_blocks_times_out_and_is_killed() {
    let f = fixture();
    make_fifo(&f.sandbox.root().join("pipe"));
    let settings = ShellSettings {
        limits: Limits {
            timeout: Duration::from_millis(800),
            ..Limits::default()
        },
        search_path: None,
    };
    let started = std::time::Instant::now();
    let obs = run_with(&f, settings, "cat", &["pipe"], None).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(obs["ok"], false);
    assert!(
        obs["error"].as_str().unwrap().contains("timed out"),
        "{obs}"
    );
}

#[tokio::test]
async fn cancelling_stops_a_running_command() {
    let f = fixture();
    make_fifo(&f.sandbox.root().join("pipe"));
    let ctx = ToolContext::standalone(f.sandbox.clone());
    let cancel = ctx.cancel.clone();
    let pipe = f.sandbox.root().join("pipe");
    // Once `cat` has the pipe open for reading (a writer that does not wait can open it only
    // then), it is running: cancel it. The writer stays open, so `cat` does not end by itself.
    let canceller = tokio::spawn(async move {
        let mut writer = None;
        wait::until_async("`cat` to open the pipe", || {
            writer = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&pipe)
                .ok();
            writer.is_some()
        })
        .await;
        cancel.cancel();
        writer
    });
    let started = std::time::Instant::now();
    let obs = registry(ShellSettings::default())
        .execute(
            "run_shell_command",
            r#"{"command":"cat","args":["pipe"]}"#,
            &ctx,
        )
        .await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(
        obs["error"],
        miniclaw::tools::registry::INTERRUPTED_SILENT,
        "{obs}"
    );
    drop(canceller.await.unwrap());
}

#[tokio::test]
async fn an_interrupted_command_tells_the_model_what_it_had_printed() {
    let f = fixture();
    make_fifo(&f.sandbox.root().join("pipe"));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        events: EventSink::new(tx),
        ..ToolContext::standalone(f.sandbox.clone())
    };
    let cancel = ctx.cancel.clone();
    let pipe = f.sandbox.root().join("pipe");
    // `cat` prints two lines, then waits for more; once they were shown live, interrupt it.
    let canceller = tokio::spawn(async move {
        let mut writer = None;
        wait::until_async("`cat` to open the pipe", || {
            writer = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&pipe)
                .ok();
            writer.is_some()
        })
        .await;
        let mut writer = writer.unwrap();
        std::io::Write::write_all(&mut writer, b"compiling one\ncompiling two\n").unwrap();
        let mut seen = String::new();
        while !seen.contains("compiling two") {
            match rx.recv().await {
                Some(AgentEvent::ToolOutputDelta { text, .. }) => seen.push_str(&text),
                Some(_) => {}
                None => break,
            }
        }
        cancel.cancel();
        writer
    });
    let obs = registry(ShellSettings::default())
        .execute(
            "run_shell_command",
            r#"{"command":"cat","args":["pipe"]}"#,
            &ctx,
        )
        .await;
    assert_eq!(obs["ok"], false);
    assert_eq!(
        obs["error"],
        miniclaw::tools::registry::INTERRUPTED_WHILE_RUNNING,
        "{obs}"
    );
    assert_eq!(
        obs["output_so_far"], "compiling one\ncompiling two\n",
        "{obs}"
    );
    drop(canceller.await.unwrap());
}

#[tokio::test]
async fn output_is_capped_and_the_cut_is_noted() {
    let f = fixture();
    let line = "0123456789abcdef".repeat(8) + "\n";
    std::fs::write(f.sandbox.root().join("big.txt"), line.repeat(2000)).unwrap();
    let settings = ShellSettings {
        limits: Limits {
            output_cap: 16 * 1024,
            ..Limits::default()
        },
        search_path: None,
    };
    let obs = run_with(&f, settings, "cat", &["big.txt"], None).await;
    assert_eq!(obs["ok"], true);
    assert_eq!(obs["truncated"], true);
    assert_eq!(obs["stdout"].as_str().unwrap().len(), 16 * 1024);
    assert_eq!(
        obs["exit_code"], 0,
        "the rest is drained, so cat ends normally"
    );
    assert!(obs["note"].as_str().unwrap().contains("cut"));
}

#[tokio::test]
async fn output_streams_line_by_line_as_tool_output_events() {
    let f = fixture();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ToolContext {
        events: EventSink::new(tx),
        call_id: "c1".into(),
        ..ToolContext::standalone(f.sandbox.clone())
    };
    let obs = registry(ShellSettings::default())
        .execute(
            "run_shell_command",
            r#"{"command":"cat","args":["notes.txt"]}"#,
            &ctx,
        )
        .await;
    assert_eq!(obs["ok"], true);
    let mut lines = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let AgentEvent::ToolOutputDelta { id, text } = ev {
            assert_eq!(id, "c1");
            lines.push(text);
        }
    }
    assert_eq!(lines, ["你好，世界\n", "second line\n", "third line\n"]);
}

#[tokio::test]
async fn the_environment_is_minimal() {
    let f = fixture();
    // A stand-in `ls` that prints its environment, found through a test-only search path.
    let bin = tempfile::tempdir().unwrap();
    let fake = bin.path().join("ls");
    std::fs::write(&fake, "#!/bin/sh\n/usr/bin/env\n").unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let settings = ShellSettings {
        search_path: Some(bin.path().to_string_lossy().into_owned()),
        ..ShellSettings::default()
    };
    let obs = run_with(&f, settings, "ls", &[], None).await;
    let stdout = obs["stdout"].as_str().unwrap();
    let names: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, _)| k)
        .collect();
    assert!(
        names.contains(&"PATH") && stdout.contains("LANG=C.UTF-8"),
        "{stdout}"
    );
    for name in names {
        assert!(
            ["PATH", "LANG", "PWD", "SHLVL", "_", "OLDPWD"].contains(&name),
            "unexpected variable {name} inherited: {stdout}"
        );
    }
}

#[test]
fn the_tool_is_read_only_and_lists_the_commands() {
    let r = registry(ShellSettings::default());
    assert!(r.is_read_only("run_shell_command"));
    let schema = &r.schemas()[0];
    assert_eq!(
        schema.parameters["properties"]["command"]["enum"]
            .as_array()
            .unwrap()
            .len(),
        7
    );
}
