//! run_command through the real binary: a model (the local server) fixes a failing test —
//! runs it, reads the failure, edits, runs it again and sees it pass — with no key in any
//! request body or the log, and a background job ended when MiniClaw exits.

use crate::headless_bin::bin;
use crate::support::{self, MockServer, Reply, SseBuilder, wait};
use serde_json::json;

const KEY: &str = "sk-e2e-jail-secret";

fn last_tool_message(request: &support::RecordedRequest) -> String {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_failing_test_is_run_fixed_and_run_again_with_no_key_anywhere() {
    let script: Vec<Reply> = vec![
        SseBuilder::calls(
            "c1",
            "run_command",
            json!({"command": "python3 -m unittest 2>&1"}),
        ),
        SseBuilder::calls(
            "c2",
            "replace_text_in_file",
            json!({"relative_path": "calc.py", "old_text": "a - b", "new_text": "a + b  # fixed"}),
        ),
        SseBuilder::calls(
            "c3",
            "run_command",
            json!({"command": "python3 -m unittest 2>&1"}),
        ),
        SseBuilder::calls(
            "c4",
            "run_command",
            json!({"command": "env; cat /proc/self/environ; cat /proc/$PPID/environ; cat /proc/1/environ; echo end"}),
        ),
        SseBuilder::answer("The test passes now."),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let data = dir.path().join("data");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    std::fs::write(
        ws.join("test_calc.py"),
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    )
    .unwrap();
    let out = bin()
        .env("XDG_DATA_HOME", &data)
        .env("MINICLAW_LOG", "trace")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .args([
            "--workspace",
            ws.to_str().unwrap(),
            "--print",
            "Fix the failing test",
        ])
        .env("DEEPSEEK_API_KEY", KEY)
        .env("DEEPSEEK_BASE_URL", server.url())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "stderr: {stderr}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "The test passes now.\n"
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 5, "{stderr}");
    let first = last_tool_message(&reqs[1]);
    assert!(
        first.contains("AssertionError: -1 != 5") && first.contains("\"exit_code\":1"),
        "{first}"
    );
    let second = last_tool_message(&reqs[3]);
    assert!(
        second.contains("\"exit_code\":0") && second.contains("OK"),
        "{second}"
    );
    let env = last_tool_message(&reqs[4]);
    assert!(env.contains("end"), "{env}");
    for (i, request) in reqs.iter().enumerate() {
        assert!(!request.body.contains(KEY), "request {i} carries the key");
    }
    assert!(!stderr.contains(KEY));
    let log = std::fs::read_to_string(data.join("miniclaw/miniclaw.log")).unwrap_or_default();
    assert!(!log.contains(KEY), "the log holds the key");
    assert_eq!(
        std::fs::read_to_string(ws.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a + b  # fixed\n"
    );
}

#[test]
fn a_background_job_ends_when_miniclaw_exits() {
    let script: Vec<Reply> = vec![
        SseBuilder::calls(
            "c1",
            "run_command",
            json!({"command": "echo serving; sleep 615.5; echo never", "background": true}),
        ),
        SseBuilder::answer("Started."),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    let out = bin()
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args([
            "--workspace",
            ws.to_str().unwrap(),
            "--print",
            "Start the server",
        ])
        .env("DEEPSEEK_API_KEY", KEY)
        .env("DEEPSEEK_BASE_URL", server.url())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reqs = server.requests();
    let started = last_tool_message(&reqs[1]);
    assert!(
        started.contains("\"job\":1") && started.contains("serving"),
        "{started}"
    );
    wait::until("the job to end with MiniClaw", || {
        crate::command_jail::processes_with("sleep 615.5").is_empty()
    });
}

#[test]
fn where_the_jail_cannot_be_built_run_command_is_not_offered_and_the_reason_is_said() {
    // A supervisor that is not MiniClaw's jail: the check sees no jailed command run.
    let out = bin()
        .env("MINICLAW_JAIL_BIN", "/bin/true")
        .arg("--list-tools")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stdout.contains("run_command"), "{stdout}");
    assert!(stdout.contains("run_shell_command"), "{stdout}");
    assert!(
        stderr.contains("run_command is not offered: a jailed test command did not run"),
        "{stderr}"
    );
    let real = bin().arg("--list-tools").output().unwrap();
    let listed = String::from_utf8_lossy(&real.stdout);
    for tool in ["run_command", "command_output", "stop_command"] {
        assert!(listed.contains(tool), "{tool} missing: {listed}");
    }
}
