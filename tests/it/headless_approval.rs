//! `--approval` in headless mode, with the real binary: `ask` cannot ask there, so a write is
//! denied with an observation saying why, the file is untouched and the exit status is 4.

use crate::headless_bin;
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
