//! MCP servers end to end: the real binary in headless mode, the scripted model on 127.0.0.1,
//! and real MCP servers (the reference servers from npm and PyPI, installed by
//! `.ci/mcp/install`, and small Python servers for what they cannot do).

use crate::headless_bin;
use crate::mcp;
use crate::support;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use headless_bin::{LiveStderr, bin, text};
use mcp::{config_home, everything_entry, observations, offered, stdio_entry};
use serde_json::{Value, json};
use support::{MockServer, SseBuilder, Until, wait};

/// `miniclaw-tui --print PROMPT` with the config folder `config` and the model at `url`.
fn run(dir: &Path, config: &Path, url: &str, env: &[(&str, &str)]) -> Output {
    command(dir, config, url, env).output().unwrap()
}

/// The command `run` runs.
fn command(dir: &Path, config: &Path, url: &str, env: &[(&str, &str)]) -> Command {
    let mut c = bin();
    c.env("XDG_CONFIG_HOME", config)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("DEEPSEEK_API_KEY", "sk-mcp-canary-0042")
        .env("DEEPSEEK_BASE_URL", url)
        .args(["--workspace", dir.join("ws").to_str().unwrap()])
        .args(["--print", "use the MCP tools"]);
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

#[test]
fn reference_servers_answer_through_the_agent() {
    let dir = tempfile::tempdir().unwrap();
    let notes = dir.path().join("notes");
    std::fs::create_dir_all(&notes).unwrap();
    std::fs::write(notes.join("hello.txt"), "hello from the filesystem server").unwrap();
    let notes_real = notes.canonicalize().unwrap();
    let notes = notes_real.to_str().unwrap();
    let config = config_home(
        dir.path(),
        &format!(
            "{}{}{}",
            everything_entry("everything", ""),
            stdio_entry("time", &mcp::time_bin(), &["--local-timezone=UTC"], ""),
            stdio_entry("files", &mcp::node(), &[&mcp::filesystem_js(), notes], ""),
        ),
    );
    let script = vec![
        SseBuilder::calls_all(&[
            ("mcp__everything__echo", json!({"message": "ping"})),
            (
                "mcp__time__get_current_time",
                json!({"timezone": "Europe/Paris"}),
            ),
            (
                "mcp__files__read_text_file",
                json!({"path": format!("{notes}/hello.txt")}),
            ),
            ("mcp__everything__get-tiny-image", json!({})),
            (
                "mcp__everything__get-structured-content",
                json!({"location": "Chicago"}),
            ),
            (
                "mcp__files__read_text_file",
                json!({"path": format!("{notes}/missing.txt")}),
            ),
        ]),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run(dir.path(), &config, &server.url(), &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let requests = server.requests();
    // Headless waits for the servers: their tools are offered from the first request on.
    let first = requests[0].json();
    let names = offered(&first);
    for tool in [
        "mcp__everything__echo",
        "mcp__time__get_current_time",
        "mcp__files__read_text_file",
    ] {
        assert!(names.contains(&tool.to_string()), "{tool} in {names:?}");
    }
    let echo = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__everything__echo")
        .unwrap();
    assert_eq!(
        echo["function"]["description"],
        "Echoes back the input string"
    );
    assert_eq!(
        echo["function"]["parameters"]["properties"]["message"]["type"],
        "string"
    );

    let seen = observations(&requests[1].json());
    assert_eq!(seen.len(), 6, "{stderr}");
    assert_eq!(
        seen[0],
        json!({"ok": true, "tool": "mcp__everything__echo", "text": "Echo: ping"})
    );
    assert_eq!(seen[1]["ok"], true, "{}", seen[1]);
    let time: Value = serde_json::from_str(seen[1]["text"].as_str().unwrap()).unwrap();
    assert_eq!(time["timezone"], "Europe/Paris", "{time}");
    assert!(
        time["datetime"].as_str().unwrap().starts_with("20"),
        "{time}"
    );
    assert_eq!(seen[2]["ok"], true, "{}", seen[2]);
    assert_eq!(seen[2]["text"], "hello from the filesystem server");
    let image_notes = seen[3]["notes"].to_string();
    assert!(image_notes.contains("image (image/png, "), "{}", seen[3]);
    assert!(
        seen[4]["structured_content"]["temperature"].is_number(),
        "{}",
        seen[4]
    );
    // `isError` from the server: the call's error, in the server's words.
    assert_eq!(seen[5]["ok"], false, "{}", seen[5]);
    let error = seen[5]["error"].as_str().unwrap();
    assert!(error.contains("missing.txt"), "{error}");
    assert!(!stderr.contains("sk-mcp-canary-0042"));
}

#[test]
fn a_servers_environment_is_the_allow_list_and_never_holds_a_key() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_home(
        dir.path(),
        &everything_entry("everything", "env = { EXTRA_SETTING = \"from-config\" }"),
    );
    let script = vec![
        SseBuilder::calls("c1", "mcp__everything__get-env", json!({})),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run(
        dir.path(),
        &config,
        &server.url(),
        &[
            ("SERPAPI_KEY", "serp-canary-0043"),
            ("SOME_OTHER_TOKEN", "other-canary-0044"),
            ("TZ", "Europe/Paris"),
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = observations(&server.requests()[1].json());
    assert_eq!(seen[0]["ok"], true, "{}", seen[0]);
    let env: Value = serde_json::from_str(seen[0]["text"].as_str().unwrap()).unwrap();
    let env = env.as_object().unwrap();
    let text = Value::Object(env.clone()).to_string();
    for canary in [
        "sk-mcp-canary-0042",
        "serp-canary-0043",
        "other-canary-0044",
    ] {
        assert!(
            !text.contains(canary),
            "{canary} reached the server: {text}"
        );
    }
    assert_eq!(env["EXTRA_SETTING"], "from-config");
    assert_eq!(env["TZ"], "Europe/Paris");
    assert!(
        env.contains_key("PATH") && env.contains_key("HOME"),
        "{text}"
    );
    let allowed = [
        "HOME",
        "PATH",
        "LANG",
        "TERM",
        "TMPDIR",
        "TZ",
        "USER",
        "EXTRA_SETTING",
    ];
    for name in env.keys() {
        assert!(
            allowed.contains(&name.as_str()),
            "`{name}` is not on the allow-list: {text}"
        );
    }
}

#[test]
fn broken_servers_are_reported_with_their_stderr_and_the_rest_keeps_working() {
    let dir = tempfile::tempdir().unwrap();
    let py = mcp::py_server(dir.path());
    let config = config_home(
        dir.path(),
        &format!(
            "{}{}{}",
            everything_entry("everything", ""),
            stdio_entry(
                "mute",
                "python3",
                &[&py, "mute"],
                "startup_timeout_sec = 1.5"
            ),
            stdio_entry("ghost", "no-such-mcp-server-program", &[], ""),
        ),
    );
    let script = vec![
        SseBuilder::calls(
            "c1",
            "mcp__everything__echo",
            json!({"message": "still here"}),
        ),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let started = Instant::now();
    let out = run(dir.path(), &config, &server.url(), &[]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the timeout bounds the wait"
    );
    assert!(
        stderr.contains("MCP server `mute` could not start: no answer within 1.5 s (startup_timeout_sec) — its stderr ended with: mute server: reading requests, answering none"),
        "{stderr}"
    );
    assert!(
        stderr.contains("MCP server `ghost` could not start: the program `no-such-mcp-server-program` was not found on PATH"),
        "{stderr}"
    );
    let seen = observations(&server.requests()[1].json());
    assert_eq!(seen[0]["text"], "Echo: still here");
    let names = offered(&server.requests()[0].json());
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mcp__mute") || n.starts_with("mcp__ghost"))
    );
}

#[test]
fn a_server_killed_mid_call_fails_that_call_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("everything.pid");
    let launch = format!(
        "echo $$ > {}; exec {} {} stdio",
        pid_file.display(),
        mcp::node(),
        mcp::everything_js()
    );
    let config = config_home(
        dir.path(),
        &stdio_entry("everything", "sh", &["-c", &launch], ""),
    );
    let script = vec![
        SseBuilder::calls(
            "c1",
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 60, "steps": 60}),
        ),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let mut child = command(dir.path(), &config, &server.url(), &[])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let trace = LiveStderr::of(&mut child);
    let pid = mcp::read_pid(&pid_file, 20);
    // The call is under way (its action is in the step trace): kill the server under it.
    trace.wait_for("[Step 1 Action] mcp__everything__trigger-long-running-operation");
    let killed_at = Instant::now();
    std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    let status = wait::until_some("MiniClaw to end the run", || child.try_wait().unwrap());
    assert!(
        killed_at.elapsed() < Duration::from_secs(8),
        "the call ended at once"
    );
    let stderr = trace.finish();
    assert!(status.success(), "{stderr}");
    let seen = observations(&server.requests()[1].json());
    assert_eq!(seen[0]["ok"], false, "{}", seen[0]);
    let error = seen[0]["error"].as_str().unwrap();
    assert!(
        error.contains("the server stopped (killed by signal 9)"),
        "{error}"
    );
}

#[test]
fn list_changed_brings_new_tools_into_the_next_step() {
    let dir = tempfile::tempdir().unwrap();
    let py = mcp::py_server(dir.path());
    let config = config_home(
        dir.path(),
        &stdio_entry("dyn", "python3", &[&py, "dynamic"], ""),
    );
    let log = dir.path().join("data/miniclaw/miniclaw.log");
    let refreshed = Until::new("the tool list refreshed (in the log)", move || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("MCP tools refreshed"))
    });
    let script = vec![
        SseBuilder::calls("c1", "mcp__dyn__add_tool", json!({})),
        // The new tool is called once the refresh has landed.
        SseBuilder::new()
            .until(refreshed)
            .role()
            .tool_call(0, "c2", "mcp__dyn__added", &json!({}), 9)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run(
        dir.path(),
        &config,
        &server.url(),
        &[("MINICLAW_LOG", "info")],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    assert_eq!(
        offered(&requests[0].json())
            .iter()
            .filter(|n| n.starts_with("mcp__dyn"))
            .count(),
        1
    );
    assert!(offered(&requests[2].json()).contains(&"mcp__dyn__added".to_string()));
    let seen = observations(&requests[2].json());
    assert_eq!(seen[0]["text"], "called add_tool");
    assert_eq!(
        seen[1],
        json!({"ok": true, "tool": "mcp__dyn__added", "text": "called added"})
    );
}

#[test]
fn a_streamable_http_server_answers_through_the_agent() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut http_server = std::process::Command::new(mcp::node())
        .args([&mcp::everything_js(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "the HTTP server did not come up");
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().unwrap();
    let config = config_home(
        dir.path(),
        &format!("[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let script = vec![
        SseBuilder::calls_all(&[
            ("mcp__web__echo", json!({"message": "over http"})),
            ("mcp__web__get-sum", json!({"a": 2, "b": 3})),
        ]),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = run(dir.path(), &config, &server.url(), &[]);
    let _ = http_server.kill();
    let _ = http_server.wait();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let seen = observations(&server.requests()[1].json());
    assert_eq!(seen[0]["text"], "Echo: over http", "{}", seen[0]);
    assert!(
        seen[1]["text"].as_str().unwrap().contains('5'),
        "{}",
        seen[1]
    );
}

#[test]
fn list_tools_waits_for_the_servers_and_reports_broken_settings() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_home(
        dir.path(),
        &format!(
            "{}{}[mcp_servers.broken]\nargs = [\"x\"]\n",
            everything_entry("everything", "disabled_tools = [\"get-env\"]"),
            stdio_entry("time", &mcp::time_bin(), &[], "enabled = false"),
        ),
    );
    let out = bin()
        .env("XDG_CONFIG_HOME", &config)
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args([
            "--workspace",
            dir.path().join("ws").to_str().unwrap(),
            "--list-tools",
        ])
        .output()
        .unwrap();
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    let echo = stdout
        .lines()
        .find(|l| l.starts_with("mcp__everything__echo "))
        .unwrap_or_default();
    assert!(
        echo.ends_with("Echoes back the input string  [mcp everything]"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("mcp__everything__get-env"),
        "disabled_tools: {stdout}"
    );
    assert!(!stdout.contains("mcp__time__"), "enabled = false: {stdout}");
    assert!(
        stdout.contains("read_text_file "),
        "the built-ins too: {stdout}"
    );
    let config_file = config.join("miniclaw/config.toml");
    assert!(
        stderr.contains(&format!(
            "warning: {}: MCP server `broken` was skipped: it needs `command`",
            config_file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_servers_progress_notifications_are_the_calls_live_output() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_home(dir.path(), &everything_entry("everything", ""));
    let script = vec![
        SseBuilder::calls_all(&[(
            "mcp__everything__trigger-long-running-operation",
            json!({"duration": 0.3, "steps": 3}),
        )]),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let out = command(dir.path(), &config, &server.url(), &[])
        .args(["--output-format", "stream-json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let live: String = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_output_delta")
        .map(|e| e["text"].as_str().unwrap_or_default().to_string())
        .collect();
    // The server sends its last progress just before its result; the client library hands
    // notifications and responses to different tasks, so that last one may land after the
    // call ended (and is then dropped). Every earlier one is shown, in order, as a clean line.
    assert!(
        live == "[1/3]\n[2/3]\n[3/3]\n" || live == "[1/3]\n[2/3]\n",
        "{}",
        text(&out.stdout)
    );
    let seen = observations(&server.requests()[1].json());
    assert!(
        seen[0]["text"]
            .as_str()
            .unwrap()
            .contains("Long running operation completed"),
        "{}",
        seen[0]
    );
}
