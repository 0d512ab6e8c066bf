//! The real binary in headless mode against the local model server: a file is written and read
//! back through the tools, the answer alone reaches stdout, and the history holds the turn.

use crate::headless_bin;
use crate::support;

use headless_bin::bin;
use serde_json::{Value, json};
use support::{MockServer, Reply, SseBuilder};

#[test]
fn headless_turn_writes_reads_and_answers() {
    let script: Vec<Reply> = vec![
        SseBuilder::new()
            .role()
            .content(&["I'll create the file."])
            .tool_call(
                0,
                "call_w",
                "write_text_file",
                &json!({"relative_path": "hello.txt", "content": "你好，MiniClaw"}),
                4,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::calls(
            "call_r",
            "read_text_file",
            json!({"relative_path": "hello.txt"}),
        ),
        SseBuilder::answer("hello.txt now says: 你好，MiniClaw"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let data = dir.path().join("data");
    let out = bin()
        .env("XDG_DATA_HOME", &data)
        .env("MINICLAW_LOG", "trace")
        .args([
            "--workspace",
            ws.to_str().unwrap(),
            "--print",
            "Create hello.txt and read it back",
        ])
        .env("DEEPSEEK_API_KEY", "sk-e2e-secret")
        .env("DEEPSEEK_BASE_URL", server.url())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(stdout, "hello.txt now says: 你好，MiniClaw\n");
    assert!(
        stderr.contains("[Step 1 Thought] I'll create the file."),
        "{stderr}"
    );
    assert!(
        stderr.contains("[Step 1 Action] write_text_file("),
        "{stderr}"
    );
    assert!(
        stderr.contains("[Step 2 Observation] {\"ok\":true"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-e2e-secret") && !stdout.contains("sk-e2e-secret"));

    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt")).unwrap(),
        "你好，MiniClaw"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    let read_obs: Value = serde_json::from_str(
        reqs[2].json()["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(read_obs["ok"], true);
    assert!(read_obs.to_string().contains("你好，MiniClaw"));

    let history_text = std::fs::read_to_string(ws.join("history.json")).unwrap();
    assert!(!history_text.contains("sk-e2e-secret"));
    let history: Value = serde_json::from_str(&history_text).unwrap();
    let messages = history["messages"].as_array().unwrap();
    let roles: Vec<&str> = messages
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    assert_eq!(messages[6]["content"], "hello.txt now says: 你好，MiniClaw");
    for m in messages {
        assert!(m["id"].is_string() && m["timestamp"].is_string());
    }

    let log = std::fs::read_to_string(data.join("miniclaw").join("miniclaw.log")).unwrap();
    assert!(
        log.contains("tool call finished"),
        "the log records the turn:\n{log}"
    );
    assert!(
        !log.contains("sk-e2e-secret"),
        "the key never reaches the log"
    );
}

#[test]
fn help_names_the_log_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .env("XDG_DATA_HOME", dir.path())
        .arg("--help")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    let expected = dir.path().join("miniclaw").join("miniclaw.log");
    assert!(
        text.contains(&format!("Log file: {}", expected.display())),
        "{text}"
    );
}

#[test]
fn list_tools_shows_every_tool_with_its_source() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["--list-tools", "--trust"])
        .env("XDG_DATA_HOME", dir.path())
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "list_files",
        "read_text_file",
        "list_directory_tree",
        "search_files",
        "write_text_file",
        "append_text_file",
        "replace_text_in_file",
        "get_current_time",
        "calculate_expression",
        "run_shell_command",
        "search_web",
        "fetch_web_page",
        "delegate_file_analysis",
    ] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(name) && l.ends_with("[built-in]")),
            "{name} in\n{text}"
        );
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("echo_text")
                && l.contains("[plugin tools_plugins/echo_text.toml]")),
        "{text}"
    );
}

#[test]
fn headless_without_a_key_says_what_to_set_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["--workspace", "ws", "--print", "hi"])
        .env_remove("DEEPSEEK_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("DEEPSEEK_API_KEY") && stderr.contains(".env"));
    assert!(out.stdout.is_empty());
}

#[test]
fn headless_reports_a_server_error_and_exits_non_zero() {
    let (server, _rt) = MockServer::start_blocking(vec![Reply::error(402, "Insufficient Balance")]);
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .args(["--workspace", dir.path().to_str().unwrap(), "-p", "hi"])
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", server.url())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Insufficient Balance") && stderr.contains("top up"),
        "{stderr}"
    );
}

#[test]
fn env_file_in_the_current_folder_is_read_and_real_env_wins() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("from env file")]);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join(".env"),
        format!(
            "DEEPSEEK_API_KEY=sk-file\nnot a setting sk-broken-line\nDEEPSEEK_BASE_URL={}\nDEEPSEEK_MODEL=deepseek-v4-flash\n",
            server.url()
        ),
    )
    .unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["-p", "hi"])
        .env_remove("DEEPSEEK_API_KEY")
        .env_remove("DEEPSEEK_BASE_URL")
        .env("DEEPSEEK_MODEL", "deepseek-v4-pro")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Without -C the folder it starts in is the workspace: no ./workspace is made, and the
    // history goes to the data dir rather than into the person's folder.
    assert!(
        !dir.path().join("workspace").exists(),
        "no ./workspace made"
    );
    assert!(!dir.path().join("history.json").exists());
    // A broken line is reported by file and number (never its text) and the rest still counts.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(".env: line 2 is not NAME=value and was skipped"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-broken-line"), "{stderr}");
    let req = &server.requests()[0];
    assert_eq!(req.header("authorization"), Some("Bearer sk-file"));
    assert_eq!(
        req.json()["model"],
        "deepseek-v4-pro",
        "the real environment wins over .env"
    );
}

/// A project folder whose plugin tool reports what it can see of MiniClaw's environment.
fn project_with_a_peeking_plugin(dir: &std::path::Path) {
    let plugins = dir.join("tools_plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(
        plugins.join("peek.py"),
        "import json, os, sys\njson.load(sys.stdin)\n\
         parent = open('/proc/%d/environ' % os.getppid(), 'rb').read()\n\
         own = open('/proc/self/environ', 'rb').read()\n\
         print(json.dumps({'parent_has_key': b'sk-canary' in parent, 'own_has_key': b'sk-canary' in own, 'parent_bytes': len(parent)}))\n",
    )
    .unwrap();
    std::fs::write(
        plugins.join("peek.toml"),
        "[[tool]]\nname = \"peek\"\ndescription = \"d\"\ncommand = [\"python3\", \"peek.py\"]\n",
    )
    .unwrap();
}

#[test]
fn a_projects_plugins_run_only_once_trusted_and_never_see_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let data = dir.path().join("data");
    project_with_a_peeking_plugin(&project);
    let run = |extra: &[&str], url: &str| {
        let mut args = vec!["--workspace", "ws", "--print", "peek please"];
        args.extend_from_slice(extra);
        bin()
            .current_dir(&project)
            .env("XDG_DATA_HOME", &data)
            .env("DEEPSEEK_API_KEY", "sk-canary-0042")
            .env("DEEPSEEK_BASE_URL", url)
            .args(args)
            .output()
            .unwrap()
    };
    // Not trusted: headless cannot ask, so it refuses and names the command.
    let refused = run(&[], "http://127.0.0.1:9");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("peek: python3 -I") && stderr.contains("--trust"),
        "{stderr}"
    );
    assert!(!project.join("ws").exists(), "nothing started");

    // --trust runs it, and the plugin finds no key in MiniClaw's environment or its own.
    let script = vec![
        SseBuilder::calls("c1", "peek", json!({})),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run(&["--trust"], &server.url());
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let observation = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let seen: Value = serde_json::from_str(&observation).unwrap();
    assert_eq!(seen["ok"], json!(true), "{seen}");
    assert!(seen["parent_bytes"].as_u64().unwrap() > 0, "{seen}");
    assert_eq!(seen["parent_has_key"], json!(false), "{seen}");
    assert_eq!(seen["own_has_key"], json!(false), "{seen}");

    // Remembered for the same content…
    let (server, _rt2) = MockServer::start_blocking(vec![SseBuilder::answer("again")]);
    let again = run(&[], &server.url());
    assert!(
        again.status.success(),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    // …and asked again once a file changes.
    std::fs::write(project.join("tools_plugins/peek.py"), "print('{}')\n").unwrap();
    let changed = run(&[], "http://127.0.0.1:9");
    assert_eq!(changed.status.code(), Some(2));
}
