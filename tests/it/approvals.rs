//! The approval modes through the real agent loop and the scripted model server: `ask` waits
//! for a person (here a scripted one) and shows the diff a write would make; a no keeps the file
//! and tells the model why; `read-only` refuses the shell; with no one to ask, calls are denied.

use crate::support;

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use miniclaw::agent::approvals::Asker;
use miniclaw::agent::{Agent, EventSink};
use miniclaw::approval::{ApprovalMode, ApprovalRequest, Decision};
use miniclaw::llm::Preset;
use serde_json::{Value, json};
use support::rig::{observations, rig_with, run};
use support::{Reply, SseBuilder};

/// A person who answers from a list and remembers what was asked.
#[derive(Default)]
struct Scripted {
    answers: Mutex<Vec<Decision>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Asker for Scripted {
    fn ask<'a>(&'a self, request: ApprovalRequest, _: &'a EventSink) -> BoxFuture<'a, Decision> {
        self.asked.lock().unwrap().push(request);
        let answer = self.answers.lock().unwrap().remove(0);
        Box::pin(async move { answer })
    }
}

fn calls(calls: &[(&str, Value)]) -> Reply {
    let mut reply = SseBuilder::new().role();
    for (i, (tool, args)) in calls.iter().enumerate() {
        reply = reply.tool_call(i, &format!("call_{i}"), tool, args, 20);
    }
    reply.finish("tool_calls").done().build()
}

async fn agent(
    script: Vec<Reply>,
    mode: ApprovalMode,
    asker: Option<Arc<Scripted>>,
) -> support::rig::Rig {
    let config = miniclaw::tools::toolbox::ToolboxConfig::from_env(false);
    let (registry, _) = miniclaw::tools::toolbox::full_registry(&config);
    let mut rig = rig_with(script, registry, Preset::Flash, 6, |c| c).await;
    let asker = asker.map(|a| a as Arc<dyn Asker>);
    rig.agent = std::mem::replace(&mut rig.agent, placeholder()).with_approvals(mode, asker);
    rig
}

fn placeholder() -> Agent {
    Agent::new(
        miniclaw::llm::LlmClient::new("http://127.0.0.1:9", None).unwrap(),
        Arc::new(miniclaw::tools::ToolRegistry::new()),
        Arc::new(miniclaw::tools::Sandbox::new(&std::env::temp_dir()).unwrap()),
        miniclaw::agent::Session::new(),
        miniclaw::agent::AgentSettings {
            preset: Preset::Flash,
            max_steps: 1,
            history_path: None,
        },
    )
}

#[tokio::test]
async fn ask_shows_the_diff_a_no_keeps_the_file_and_its_reason_reaches_the_model() {
    let write = |content: &str| {
        (
            "write_text_file",
            json!({"relative_path": "hello.txt", "content": content}),
        )
    };
    let script = vec![
        calls(&[
            write("new text\n"),
            ("read_text_file", json!({"relative_path": "hello.txt"})),
        ]),
        SseBuilder::answer("ok, left it."),
        calls(&[write("approved text\n")]),
        SseBuilder::answer("written."),
    ];
    let person = Arc::new(Scripted::default());
    *person.answers.lock().unwrap() =
        vec![Decision::Deny("keep my file".into()), Decision::Approve];
    let mut rig = agent(script, ApprovalMode::Ask, Some(person.clone())).await;
    let file = rig.dir.path().join("hello.txt");
    std::fs::write(&file, "old text\n").unwrap();

    let (_, events) = run(&mut rig.agent, "overwrite hello.txt").await;
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "old text\n",
        "denied: unchanged"
    );
    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "the read-only read did not ask");
    let diff = asked[0].diff.as_deref().unwrap();
    assert!(diff.contains("-old text\n+new text\n"), "{diff}");
    assert_eq!((asked[0].position, asked[0].of), (1, 1));
    let seen = observations(&events);
    assert_eq!(seen[0]["error"], "denied by the user: keep my file");
    assert_eq!(seen[0]["denied"], true);
    assert_eq!(seen[1]["ok"], true, "the read ran: {}", seen[1]);
    let sent = rig.server.requests()[1].body.clone();
    assert!(sent.contains("denied by the user: keep my file"), "{sent}");

    let (_, events) = run(&mut rig.agent, "now do write it").await;
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "approved text\n");
    assert_eq!(observations(&events)[0]["approved_by_user"], true);
    let history = std::fs::read_to_string(rig.dir.path().join("history.json")).unwrap_or_default()
        + &std::fs::read_to_string(rig.dir.path().join("history.json.journal")).unwrap_or_default();
    assert!(history.contains("approved_by_user") && history.contains("keep my file"));
}

#[tokio::test]
async fn yes_to_the_tool_stops_asking_and_several_calls_queue_as_k_of_n() {
    let write = |name: &str| {
        (
            "write_text_file",
            json!({"relative_path": name, "content": "x"}),
        )
    };
    let script = vec![
        calls(&[write("a.txt"), write("b.txt"), write("c.txt")]),
        SseBuilder::answer("done"),
    ];
    let person = Arc::new(Scripted::default());
    *person.answers.lock().unwrap() = vec![Decision::Deny(String::new()), Decision::ApproveTool];
    let mut rig = agent(script, ApprovalMode::Ask, Some(person.clone())).await;
    let (_, events) = run(&mut rig.agent, "write three").await;
    let asked: Vec<(usize, usize)> = person
        .asked
        .lock()
        .unwrap()
        .iter()
        .map(|r| (r.position, r.of))
        .collect();
    assert_eq!(
        asked,
        [(1, 3), (2, 3)],
        "the third was let through by the yes to the tool"
    );
    let seen = observations(&events);
    assert_eq!(seen[0]["error"], "denied by the user");
    assert!(!rig.dir.path().join("a.txt").exists());
    assert!(rig.dir.path().join("b.txt").exists() && rig.dir.path().join("c.txt").exists());
}

#[tokio::test]
async fn read_only_refuses_the_shell_and_writes_and_no_one_to_ask_means_no() {
    let script = vec![
        calls(&[
            ("run_shell_command", json!({"command": "ls", "args": []})),
            (
                "write_text_file",
                json!({"relative_path": "w.txt", "content": "x"}),
            ),
            ("list_files", json!({"relative_dir": "."})),
        ]),
        SseBuilder::answer("refused"),
    ];
    let mut rig = agent(script, ApprovalMode::ReadOnly, None).await;
    let (_, events) = run(&mut rig.agent, "try").await;
    let seen = observations(&events);
    for refused in &seen[..2] {
        assert_eq!(refused["denied"], true, "{refused}");
        assert!(
            refused["error"]
                .as_str()
                .unwrap()
                .contains("read-only mode"),
            "{refused}"
        );
    }
    assert_eq!(seen[2]["ok"], true, "reading still works: {}", seen[2]);
    assert!(!rig.dir.path().join("w.txt").exists());

    let script = vec![
        calls(&[(
            "write_text_file",
            json!({"relative_path": "w.txt", "content": "x"}),
        )]),
        SseBuilder::answer("could not"),
    ];
    let mut rig = agent(script, ApprovalMode::Ask, None).await;
    let (_, events) = run(&mut rig.agent, "try").await;
    let error = observations(&events)[0]["error"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(error.contains("no one to ask in headless mode"), "{error}");
    assert!(!rig.dir.path().join("w.txt").exists());
}
