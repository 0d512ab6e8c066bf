//! A project's MCP servers (`.mcp.json`, `miniclaw.toml`) start only once the folder is trusted,
//! the model cannot write those files, and a signal to MiniClaw ends the servers' processes.

use crate::headless_bin;
use crate::mcp;
use crate::support;

use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

use headless_bin::{LiveStderr, bin, text};
use mcp::{config_home, observations, stdio_entry};
use serde_json::json;
use support::{MockServer, SseBuilder};

fn mcp_json(command: &str, args: &[&str]) -> String {
    json!({"mcpServers": {"everything": {"command": command, "args": args}}}).to_string()
}

/// The binary in `project` with `-C .` (the project is the workspace), the model at `url`.
fn run_in(project: &Path, data: &Path, url: &str, extra: &[&str]) -> Output {
    bin()
        .current_dir(project)
        .env("XDG_DATA_HOME", data)
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", url)
        .args(["-C", ".", "--print", "go"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn a_projects_servers_start_only_once_trusted_and_the_model_cannot_rewrite_them() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&project).unwrap();
    let node = mcp::node();
    let everything = mcp::everything_js();
    let config = mcp_json(&node, &[&everything, "stdio"]);
    std::fs::write(project.join(".mcp.json"), &config).unwrap();

    // Not trusted: headless cannot ask, so it refuses and names the server and the file.
    let refused = run_in(&project, &data, "http://127.0.0.1:9", &[]);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(".mcp.json"), "{stderr}");
    assert!(
        stderr.contains(&format!("MCP server everything: {node} {everything} stdio")),
        "{stderr}"
    );
    assert!(!project.join("history.json").exists(), "nothing started");

    // --trust starts it; the model's tools cannot write the project's MCP files.
    let script = vec![
        SseBuilder::calls_all(&[
            (
                "write_text_file",
                json!({"relative_path": ".mcp.json", "content": "{\"mcpServers\": {}}"}),
            ),
            (
                "write_text_file",
                json!({"relative_path": "miniclaw.toml", "content": "[mcp_servers.x]\ncommand = \"sh\"\n"}),
            ),
            (
                "append_text_file",
                json!({"relative_path": "sub/.mcp.json", "content": "{}"}),
            ),
            ("mcp__everything__echo", json!({"message": "trusted"})),
        ]),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run_in(&project, &data, &server.url(), &["--trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = observations(&server.requests()[1].json());
    for refused in &seen[..3] {
        assert_eq!(refused["ok"], false, "{refused}");
        assert!(
            refused["error"].as_str().unwrap().contains("configuration"),
            "{refused}"
        );
    }
    assert_eq!(seen[3]["text"], "Echo: trusted");
    assert_eq!(
        std::fs::read_to_string(project.join(".mcp.json")).unwrap(),
        config
    );
    assert!(!project.join("miniclaw.toml").exists() && !project.join("sub").exists());

    // Remembered while the files stay the same…
    let (server, _rt2) = MockServer::start_blocking(vec![SseBuilder::answer("again")]);
    let again = run_in(&project, &data, &server.url(), &[]);
    assert!(again.status.success(), "{}", text(&again.stderr));

    // …and asked again once a project settings file changes.
    std::fs::write(
        project.join("miniclaw.toml"),
        "[mcp_servers.other]\ncommand = \"true\"\n",
    )
    .unwrap();
    let changed = run_in(&project, &data, "http://127.0.0.1:9", &[]);
    let stderr = text(&changed.stderr);
    assert_eq!(changed.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("miniclaw.toml") && stderr.contains("MCP server other: true"),
        "{stderr}"
    );
}

#[test]
fn sigterm_ends_the_turn_and_the_servers_process_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("server.pid");
    let child_pid_file = dir.path().join("child.pid");
    // The server leaves a child of its own behind in its group: it must go too.
    let launch = format!(
        "sleep 300 & echo $! > {}; echo $$ > {}; exec {} {} stdio",
        child_pid_file.display(),
        pid_file.display(),
        mcp::node(),
        mcp::everything_js()
    );
    let config = config_home(
        dir.path(),
        &stdio_entry("everything", "sh", &["-c", &launch], ""),
    );
    let script = vec![SseBuilder::calls(
        "c1",
        "mcp__everything__trigger-long-running-operation",
        json!({"duration": 60, "steps": 60}),
    )];
    let (server, _rt) = MockServer::start_blocking(script);
    let mut child = bin()
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", server.url())
        .args([
            "--workspace",
            dir.path().join("ws").to_str().unwrap(),
            "--print",
            "wait",
        ])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let trace = LiveStderr::of(&mut child);
    let server_pid = mcp::read_pid(&pid_file, 20);
    let left_behind = mcp::read_pid(&child_pid_file, 20);
    // The turn is in the call (its action is in the step trace).
    trace.wait_for("[Step 1 Action] mcp__everything__trigger-long-running-operation");
    assert!(mcp::alive(server_pid) && mcp::alive(left_behind));
    std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{}", trace.finish());
    let deadline = Instant::now() + Duration::from_secs(5);
    while mcp::alive(server_pid) || mcp::alive(left_behind) {
        assert!(
            Instant::now() < deadline,
            "the server's process group outlived MiniClaw"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
