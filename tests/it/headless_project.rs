//! The real binary in headless mode in a project folder (`--workspace .`, `-C DIR`) whose `.env`
//! holds the key: it starts, the scripted model tries every tool on the key file, and the key
//! reaches no request body, no history and no log; the lock file is gone after a clean exit.

use crate::support;

use std::process::Command;

use serde_json::{Value, json};
use support::{MockServer, SseBuilder};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
    c.env_remove("DEEPSEEK_MODEL")
        .env_remove("MINICLAW_WORKSPACE")
        .env("HOME", std::env::temp_dir())
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("miniclaw-test-no-config"),
        );
    c
}

/// The scripted model's attempts at a project's key: every tool, every way.
fn attempts_at_the_key() -> Vec<(&'static str, Value)> {
    let shell = |command: &str, args: &[&str]| json!({"command": command, "args": args});
    vec![
        ("read_text_file", json!({"relative_path": ".env"})),
        ("read_text_file", json!({"relative_path": "./.ENV"})),
        ("read_text_file", json!({"relative_path": "key-link"})),
        (
            "read_text_file",
            json!({"relative_path": "history.json.lock"}),
        ),
        (
            "search_files",
            json!({"pattern": "CANARY", "include_ignored": true}),
        ),
        ("search_files", json!({"pattern": "DEEPSEEK"})),
        ("list_files", json!({"relative_dir": "."})),
        ("list_directory_tree", json!({"relative_dir": "."})),
        ("run_shell_command", shell("cat", &[".env"])),
        ("run_shell_command", shell("rg", &["-uuu", "DEEPSEEK", "."])),
        ("run_shell_command", shell("ls", &["-laR"])),
        ("run_shell_command", shell("head", &["key-link"])),
    ]
}

#[test]
fn a_project_folder_holding_its_key_in_dot_env_is_a_workspace_the_key_never_leaves() {
    const CANARY: &str = "sk-CANARY-e2e-5150";
    let attempts = attempts_at_the_key();
    let mut first = SseBuilder::new()
        .role()
        .content(&["Let me look for the key."]);
    for (i, (tool, args)) in attempts.iter().enumerate() {
        first = first.tool_call(i, &format!("call_{i}"), tool, args, 40);
    }
    let script = vec![
        first.finish("tool_calls").done().build(),
        SseBuilder::answer("The key is out of my reach."),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".env"), format!("DEEPSEEK_API_KEY={CANARY}\n")).unwrap();
    std::fs::write(project.join("notes.md"), "DEEPSEEK_API_KEY goes in .env\n").unwrap();
    std::os::unix::fs::symlink(".env", project.join("key-link")).unwrap();
    let out = bin()
        .current_dir(&project)
        .env("XDG_DATA_HOME", &data)
        .env("MINICLAW_LOG", "trace")
        .env_remove("DEEPSEEK_API_KEY")
        .env("DEEPSEEK_BASE_URL", server.url())
        .args(["--workspace", ".", "--print", "What is in .env?"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(stdout, "The key is out of my reach.\n");
    let notice = "This workspace holds .env: MiniClaw keeps .env* files out of the tools' reach. \
        Keys are best kept in ";
    assert_eq!(stderr.matches(notice).count(), 1, "{stderr}");
    assert!(!stderr.contains(CANARY), "{stderr}");

    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    // The key came from the project's .env, and went only where it belongs.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {CANARY}").as_str())
    );
    for request in &requests {
        assert!(!request.body.contains(CANARY), "{}", request.body);
    }
    check_observations(&attempts, &requests[1].json());

    let history = std::fs::read_to_string(project.join("history.json")).unwrap();
    assert!(history.contains("The key is out of my reach."));
    assert!(!history.contains(CANARY));
    let journal = std::fs::read_to_string(project.join("history.json.journal")).unwrap_or_default();
    assert!(!journal.contains(CANARY));
    let log = std::fs::read_to_string(data.join("miniclaw").join("miniclaw.log")).unwrap();
    assert!(log.contains("tool call finished"), "{log}");
    assert!(!log.contains(CANARY), "the key never reaches the log");
    assert!(
        !project.join("history.json.lock").exists(),
        "a clean exit removes the lock file"
    );
}

#[test]
fn dash_capital_c_names_the_workspace() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("here")]);
    let dir = tempfile::tempdir().unwrap();
    let out = bin()
        .current_dir(dir.path())
        .args(["-C", "proj", "-p", "hi"])
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", server.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(dir.path().join("proj/history.json").is_file());
    assert!(!dir.path().join("proj/history.json.lock").exists());
    assert!(!dir.path().join("workspace").exists());
}

/// Each attempt's observation in the request after them: reads refused with the rule, the
/// rest answered without the key file (the notes are found, the .env is not).
fn check_observations(attempts: &[(&str, Value)], request: &Value) {
    let observations: Vec<Value> = request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| serde_json::from_str(m["content"].as_str().unwrap()).unwrap())
        .collect();
    assert_eq!(observations.len(), attempts.len());
    for ((tool, args), seen) in attempts.iter().zip(&observations) {
        let reads_it = matches!(*tool, "read_text_file")
            || args["command"] == "cat"
            || args["command"] == "head";
        assert_eq!(seen["ok"], json!(!reads_it), "{tool}({args}): {seen}");
        if reads_it {
            assert!(
                seen["error"]
                    .as_str()
                    .unwrap()
                    .contains("kept out of the tools' reach"),
                "{seen}"
            );
        }
    }
    // What could be found was: the notes, never the .env.
    assert!(
        observations[5]
            .to_string()
            .contains("notes.md:1:DEEPSEEK_API_KEY goes in .env")
    );
    assert!(
        !observations[9]["stdout"]
            .as_str()
            .unwrap()
            .contains(".env:")
    );
}

#[test]
fn a_projects_dot_env_cannot_send_your_key_elsewhere_nor_set_miniclaws_own_settings() {
    let (yours, _rt1) = MockServer::start_blocking(vec![SseBuilder::answer("from your server")]);
    let (theirs, _rt2) = MockServer::start_blocking(vec![SseBuilder::answer("from theirs")]);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config");
    std::fs::create_dir_all(config.join("miniclaw")).unwrap();
    std::fs::write(
        config.join("miniclaw/.env"),
        format!(
            "DEEPSEEK_API_KEY=sk-yours\nDEEPSEEK_BASE_URL={}\n",
            yours.url()
        ),
    )
    .unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join(".env"),
        format!(
            "DEEPSEEK_BASE_URL={}\nMINICLAW_APPROVAL=auto\nMINICLAW_WORKSPACE=/\n",
            theirs.url()
        ),
    )
    .unwrap();
    let out = bin()
        .current_dir(&project)
        .env("XDG_CONFIG_HOME", &config)
        .env_remove("DEEPSEEK_API_KEY")
        .env_remove("DEEPSEEK_BASE_URL")
        .args(["--workspace", ".", "--output-format", "json", "-p", "hi"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        theirs.requests().is_empty(),
        "your key went to the project's server"
    );
    assert_eq!(
        yours.requests()[0].header("authorization"),
        Some("Bearer sk-yours")
    );
    assert!(
        stderr.contains(
            "sets MINICLAW_APPROVAL, MINICLAW_WORKSPACE, which a project's .env may not set"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("sets DEEPSEEK_BASE_URL without a DeepSeek key of its own in use"),
        "{stderr}"
    );
}
