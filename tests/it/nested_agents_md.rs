//! A subfolder's AGENTS.md against the local model server: reading a file in `src/parser/`
//! brings `src/AGENTS.md` and `src/parser/AGENTS.md` into that call's observation (outermost
//! first), once a turn; the system prompt stays as it was (the cached prefix); a file that links
//! out, a FIFO and a huge file are held to the root file's read rules.

use crate::support;

use std::path::Path;

use miniclaw::agent::{AgentEvent, TurnOutcome};
use miniclaw::llm::Preset;
use serde_json::{Value, json};
use support::rig::{Rig, observations, rig_with, run};
use support::{Reply, SseBuilder};

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

async fn rig(script: Vec<Reply>) -> Rig {
    rig_with(
        script,
        miniclaw::tools::builtin_registry(),
        Preset::Flash,
        6,
        |c| c,
    )
    .await
}

fn read(id: &str, path: &str) -> Reply {
    SseBuilder::calls(id, "read_text_file", json!({"relative_path": path}))
}

fn instructions_read(events: &[AgentEvent]) -> Vec<(String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::InstructionsRead { id, file, .. } => Some((id.clone(), file.clone())),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn reading_in_a_subfolder_brings_its_agents_md_and_its_parents_once_a_turn() {
    let mut rig = rig(vec![
        read("c1", "src/parser/lexer.rs"),
        read("c2", "src/parser/grammar.rs"),
        SseBuilder::answer("Read both."),
        read("c3", "src/parser/lexer.rs"),
        SseBuilder::answer("Again."),
    ])
    .await;
    let ws = rig.dir.path().to_path_buf();
    write(&ws, "AGENTS.md", "Root rules: run the tests.");
    write(&ws, "src/AGENTS.md", "In src: four-space indents.");
    write(&ws, "src/parser/AGENTS.md", "In the parser: no unwrap.");
    write(&ws, "src/parser/lexer.rs", "fn lex() {}");
    write(&ws, "src/parser/grammar.rs", "fn parse() {}");
    write(&ws, "docs/AGENTS.md", "Docs: never read here.");
    rig.agent.load_project_instructions();

    let (outcome, events) = run(&mut rig.agent, "look at the parser").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert_eq!(
        instructions_read(&events),
        [
            ("c1".to_string(), "src/AGENTS.md".to_string()),
            ("c1".to_string(), "src/parser/AGENTS.md".to_string())
        ]
    );
    let seen = observations(&events);
    let files = seen[0]["instructions"]["files"].as_array().unwrap();
    assert_eq!(files[0]["file"], "src/AGENTS.md");
    assert_eq!(files[0]["text"], "In src: four-space indents.");
    assert_eq!(files[1]["applies_to"], "src/parser/");
    assert_eq!(files[1]["text"], "In the parser: no unwrap.");
    assert!(
        seen[1].get("instructions").is_none(),
        "once a turn: {}",
        seen[1]
    );
    let requests = rig.server.requests();
    // The model reads them with the call; the system prompt did not change under it.
    let second: Value = requests[1].json();
    assert!(
        second["messages"]
            .to_string()
            .contains("In the parser: no unwrap.")
    );
    assert_eq!(requests[0].json()["messages"][0], second["messages"][0]);
    let system = second["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("Root rules") && !system.contains("no unwrap"));
    assert!(
        !second["messages"]
            .to_string()
            .contains("Docs: never read here.")
    );

    // A new turn working there reads them again.
    let (_, events) = run(&mut rig.agent, "once more").await;
    assert_eq!(instructions_read(&events).len(), 2);
}

#[tokio::test]
async fn a_subfolder_agents_md_is_held_to_the_root_files_read_rules() {
    let mut rig = rig(vec![
        read("c1", "linked/a.txt"),
        read("c2", "fifo/a.txt"),
        read("c3", "big/a.txt"),
        SseBuilder::answer("Done."),
    ])
    .await;
    let ws = rig.dir.path().to_path_buf();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.md", "OUTSIDE SECRET");
    for folder in ["linked", "fifo", "big"] {
        write(&ws, &format!("{folder}/a.txt"), "text");
    }
    std::os::unix::fs::symlink(
        outside.path().join("secret.md"),
        ws.join("linked/AGENTS.md"),
    )
    .unwrap();
    let fifo =
        std::ffi::CString::new(ws.join("fifo/AGENTS.md").as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    write(&ws, "big/AGENTS.md", &"x".repeat(1024 * 1024));

    let (outcome, events) = run(&mut rig.agent, "read them").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let seen = observations(&events);
    assert!(seen[0].get("instructions").is_none(), "{}", seen[0]);
    assert!(seen[1].get("instructions").is_none(), "{}", seen[1]);
    let big = &seen[2]["instructions"]["files"][0];
    assert_eq!(big["truncated"], true);
    assert_eq!(big["text"].as_str().unwrap().len(), 32 * 1024);
    let said: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice(n) => Some(n.clone()),
            _ => None,
        })
        .collect();
    assert!(
        said.iter()
            .any(|n| n.starts_with("linked/AGENTS.md was not read")),
        "{said:?}"
    );
    assert!(
        said.iter()
            .any(|n| n.starts_with("fifo/AGENTS.md was not read")),
        "{said:?}"
    );
    let all = rig.server.requests().last().unwrap().body.clone();
    assert!(!all.contains("OUTSIDE SECRET"));
}

#[test]
fn in_the_real_binary_a_planted_subfolder_agents_md_is_read_only_by_the_rules_and_said_clean() {
    use crate::headless_bin::{headless, text};
    use crate::support::MockServer;
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls_all(&[
            ("read_text_file", json!({"relative_path": "linked/a.txt"})),
            (
                "read_text_file",
                json!({"relative_path": "esc\u{1b}]0;pwn\u{7}/a.txt"}),
            ),
        ]),
        SseBuilder::answer("done"),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    write(dir.path(), "outside/secret.md", "OUTSIDE SECRET");
    write(&ws, "linked/a.txt", "text");
    std::os::unix::fs::symlink(
        dir.path().join("outside/secret.md"),
        ws.join("linked/AGENTS.md"),
    )
    .unwrap();
    let odd = "esc\u{1b}]0;pwn\u{7}";
    write(&ws, &format!("{odd}/a.txt"), "text");
    write(
        &ws,
        &format!("{odd}/AGENTS.md"),
        "Odd folder rules \u{1b}[2J here.",
    );
    let out = headless(&ws, &server.url())
        .args(["-p", "read them", "--output-format", "stream-json"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let sent = server.requests()[1].body.clone();
    assert!(!sent.contains("OUTSIDE SECRET"), "a link out was followed");
    assert!(stderr.contains("linked/AGENTS.md was not read"), "{stderr}");
    // The odd folder's file is read, and nothing of its name or text reaches the terminal raw.
    assert!(sent.contains("Odd folder rules"), "{sent}");
    assert!(stderr.contains("[instructions] esc"), "{stderr}");
    assert!(
        !stderr.contains('\u{1b}') && !stderr.contains('\u{7}'),
        "{stderr:?}"
    );
    assert!(
        !text(&out.stdout).contains('\u{1b}'),
        "stream-json escapes control characters"
    );
}
