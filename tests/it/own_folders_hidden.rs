//! MiniClaw's own config and data folders inside the workspace (`--workspace ~`): the real
//! binary, a scripted model trying every tool on `config.toml` (which holds a server token), and
//! the token reaches no request body. A workspace inside the config folder is refused at start.

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{MockServer, SseBuilder};

const TOKEN: &str = "MCPTOK-secret-991";

fn bin(home: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
    c.env_remove("DEEPSEEK_MODEL")
        .env_remove("MINICLAW_WORKSPACE")
        .env_remove("MINICLAW_PROVIDER")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("XDG_DATA_HOME", home.join(".local/share"));
    c
}

fn attempts() -> Vec<(&'static str, Value)> {
    let shell = |command: &str, args: &[&str]| json!({"command": command, "args": args});
    let cfg = ".config/miniclaw/config.toml";
    vec![
        ("read_text_file", json!({"relative_path": cfg})),
        ("read_text_file", json!({"relative_path": "cfg-link"})),
        (
            "read_text_file",
            json!({"relative_path": "dir-link/config.toml"}),
        ),
        (
            "search_files",
            json!({"pattern": "MCPTOK", "include_ignored": true}),
        ),
        (
            "search_files",
            json!({"pattern": "MCPTOK", "relative_dir": ".config", "include_ignored": true}),
        ),
        ("list_files", json!({"relative_dir": ".config/miniclaw"})),
        ("list_directory_tree", json!({"relative_dir": "."})),
        ("run_shell_command", shell("cat", &[cfg])),
        ("run_shell_command", shell("cat", &["cfg-link"])),
        ("run_shell_command", shell("rg", &["-uuu", "MCPTOK", "."])),
        ("run_shell_command", shell("rg", &["-uuu", "MCPTOK"])),
        (
            "run_shell_command",
            shell("rg", &["-uuu", "MCPTOK", ".config"]),
        ),
        ("run_shell_command", shell("ls", &["-laR", ".config"])),
        ("run_shell_command", shell("grep", &["-r", "MCPTOK", "."])),
        (
            "run_shell_command",
            shell("head", &[".local/share/miniclaw/trusted.json"]),
        ),
    ]
}

#[test]
fn the_config_folder_inside_the_workspace_is_out_of_every_tools_reach() {
    let attempts = attempts();
    let mut first = SseBuilder::new().role().content(&["Looking for tokens."]);
    for (i, (tool, args)) in attempts.iter().enumerate() {
        first = first.tool_call(i, &format!("call_{i}"), tool, args, 40);
    }
    let script = vec![
        first.finish("tool_calls").done().build(),
        SseBuilder::answer("Nothing found."),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let config = home.join(".config/miniclaw");
    let data = home.join(".local/share/miniclaw");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!("# server token: {TOKEN}\n"),
    )
    .unwrap();
    std::fs::write(
        data.join("trusted.json"),
        format!("{{\"note\": \"{TOKEN}\"}}"),
    )
    .unwrap();
    std::fs::write(home.join("notes.md"), "MCPTOK is how tokens start\n").unwrap();
    std::os::unix::fs::symlink(".config/miniclaw/config.toml", home.join("cfg-link")).unwrap();
    std::os::unix::fs::symlink(".config/miniclaw", home.join("dir-link")).unwrap();
    let out = bin(&home)
        .current_dir(&home)
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", server.url())
        .args(["--workspace", ".", "--print", "Find the token"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{stderr}");
    let body = requests[1].body.clone();
    assert!(
        body.contains("notes.md"),
        "the tools did run and see the rest: {body}"
    );
    for r in &requests {
        assert!(!r.body.contains(TOKEN), "leaked: {}", r.body);
    }
}

#[test]
fn a_workspace_inside_the_config_folder_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let config = home.join(".config/miniclaw");
    std::fs::create_dir_all(config.join("sub")).unwrap();
    for ws in [config.clone(), config.join("sub")] {
        let out = bin(&home)
            .current_dir(&home)
            .env("DEEPSEEK_API_KEY", "sk-x")
            .env("DEEPSEEK_BASE_URL", "http://127.0.0.1:9")
            .args(["--workspace", ws.to_str().unwrap(), "--print", "hi"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{stderr}");
        assert!(
            stderr.contains("MiniClaw's own config or data folder"),
            "{stderr}"
        );
    }
}
