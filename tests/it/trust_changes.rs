//! A trusted project (a plugin in `tools_plugins/`) whose code MiniClaw's own tools changed is
//! asked about again at the next start: headless refuses, naming the changed file, until
//! `--trust`; a note the tools wrote does not make it ask.

use crate::headless_bin;
use crate::support;

use std::path::Path;
use std::process::Output;

use headless_bin::{bin, text};
use serde_json::json;
use support::{MockServer, SseBuilder};

fn run_in(project: &Path, data: &Path, url: &str, extra: &[&str]) -> Output {
    bin()
        .current_dir(project)
        .env("XDG_DATA_HOME", data)
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", url)
        .args(["--workspace", ".", "--print", "go"])
        .args(extra)
        .output()
        .unwrap()
}

fn writes(path: &str) -> Vec<support::Reply> {
    vec![
        SseBuilder::calls(
            "call_0",
            "write_text_file",
            json!({"relative_path": path, "content": "import os\n"}),
        ),
        SseBuilder::answer("written"),
    ]
}

#[test]
fn a_trusted_project_whose_code_the_tools_changed_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let data = dir.path().join("data");
    std::fs::create_dir_all(project.join("tools_plugins")).unwrap();
    std::fs::write(
        project.join("tools_plugins/t.toml"),
        "[[tool]]\nname = \"greet\"\ndescription = \"d\"\ncommand = [\"python3\", \"helper.py\"]\n",
    )
    .unwrap();

    // Trusted, and the model writes a Python file beside the plugin's command.
    let (server, _rt) = MockServer::start_blocking(writes("helper.py"));
    let out = run_in(&project, &data, &server.url(), &["--trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(project.join("helper.py")).unwrap(),
        "import os\n"
    );
    let record = std::fs::read_to_string(data.join("miniclaw/changed.json")).unwrap();
    assert!(record.contains("helper.py"), "{record}");

    // The next start refuses, naming the file; nothing runs.
    let history = std::fs::read(project.join("history.json")).unwrap();
    let refused = run_in(&project, &data, "http://127.0.0.1:9", &[]);
    let stderr = text(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("MiniClaw's tools changed helper.py in this trusted folder"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read(project.join("history.json")).unwrap(),
        history,
        "nothing started"
    );

    // --trust accepts and clears the record; then a note written does not ask again.
    let (server, _rt2) = MockServer::start_blocking(writes("notes.md"));
    let out = run_in(&project, &data, &server.url(), &["--trust"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(project.join("notes.md")).unwrap(),
        "import os\n"
    );
    let (server, _rt3) = MockServer::start_blocking(vec![SseBuilder::answer("again")]);
    let again = run_in(&project, &data, &server.url(), &[]);
    assert!(again.status.success(), "{}", text(&again.stderr));
    assert_eq!(text(&again.stdout), "again\n");
}
