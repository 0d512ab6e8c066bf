//! `--approval` in headless mode, with the real binary: `ask` cannot ask there, so a write is
//! denied with an observation saying why, the file is untouched and the exit status is 4.

use crate::headless_bin;
use crate::pty::Launch;
use crate::support;

use headless_bin::{headless, text};
use serde_json::{Value, json};
use support::{MockServer, SseBuilder};

#[test]
fn ask_in_headless_mode_denies_changes_and_says_so_in_the_exit_status() {
    let write = SseBuilder::new()
        .role()
        .tool_call(
            0,
            "call_0",
            "write_text_file",
            &json!({"relative_path": "a.txt", "content": "x"}),
            12,
        )
        .finish("tool_calls")
        .done()
        .build();
    let (server, _rt) =
        MockServer::start_blocking(vec![write, SseBuilder::answer("could not write")]);
    let ws = tempfile::tempdir().unwrap();
    let out = headless(ws.path(), &server.url())
        .args([
            "--approval",
            "ask",
            "--output-format",
            "json",
            "-p",
            "write a.txt",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(4), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("some calls were not run"),
        "{}",
        text(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["exit_code"], 4);
    assert_eq!(report["denied"], 1);
    assert_eq!(report["answer"], "could not write");
    let error = report["steps"][0]["tool_calls"][0]["result"]["error"]
        .as_str()
        .unwrap();
    assert!(error.contains("no one to ask in headless mode"), "{error}");
    assert!(!ws.path().join("a.txt").exists());
}

/// The same denied write under every output format and in both modes that refuse it: one exit
/// status (4) for one run, whatever stdout carries.
#[test]
fn every_output_format_gives_the_same_status_for_a_denied_write() {
    for mode in ["ask", "read-only"] {
        for format in ["text", "json", "stream-json"] {
            let write = SseBuilder::new()
                .role()
                .tool_call(
                    0,
                    "call_0",
                    "write_text_file",
                    &json!({"relative_path": "a.txt", "content": "x"}),
                    12,
                )
                .finish("tool_calls")
                .done()
                .build();
            let (server, _rt) =
                MockServer::start_blocking(vec![write, SseBuilder::answer("I wrote a.txt")]);
            let ws = tempfile::tempdir().unwrap();
            let out = headless(ws.path(), &server.url())
                .args([
                    "--approval",
                    mode,
                    "--output-format",
                    format,
                    "-p",
                    "write a.txt",
                ])
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(4),
                "{mode} {format}: {}",
                text(&out.stderr)
            );
            assert!(
                text(&out.stderr).contains("some calls were not run"),
                "{mode} {format}: {}",
                text(&out.stderr)
            );
            assert!(!ws.path().join("a.txt").exists());
        }
    }
}

/// The run a person types in a terminal: text output on a terminal, the mode chosen in this
/// folder (not `--approval`). A denied write still exits 4, as in the JSON formats.
#[test]
fn a_denied_write_in_a_terminal_exits_4_with_the_folders_mode() {
    for mode in ["ask", "read-only"] {
        let write = SseBuilder::new()
            .role()
            .tool_call(
                0,
                "call_0",
                "write_text_file",
                &json!({"relative_path": "a.txt", "content": "x"}),
                12,
            )
            .finish("tool_calls")
            .done()
            .build();
        let (server, _rt) =
            MockServer::start_blocking(vec![write, SseBuilder::answer("I wrote a.txt")]);
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(data.join("miniclaw")).unwrap();
        std::fs::create_dir_all(&ws).unwrap();
        let key = ws.canonicalize().unwrap().to_string_lossy().into_owned();
        std::fs::write(
            data.join("miniclaw/folders.json"),
            json!({"folders": {key: {"approval": mode}}}).to_string(),
        )
        .unwrap();
        let mut p = Launch::new(dir.path(), dir.path())
            .args(["--workspace", ws.to_str().unwrap(), "-p", "write a.txt"])
            .env("XDG_DATA_HOME", &data)
            .env("DEEPSEEK_API_KEY", "sk-x")
            .env("DEEPSEEK_BASE_URL", server.url())
            .start();
        assert_eq!(p.wait_exit(), 4, "{mode}: {}", p.log());
        assert!(!ws.join("a.txt").exists());
    }
}
