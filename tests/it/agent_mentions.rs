//! `@path` mentions end to end against the local model server: the file's content goes with
//! the prompt (and with every later request), what cannot be attached is noted, and the
//! history keeps the prompt as typed beside what was sent.

use crate::support;

use miniclaw::agent::replay::replay;
use miniclaw::agent::{AgentEvent, TurnOutcome, history};
use miniclaw::llm::{Preset, Role};
use serde_json::Value;
use support::SseBuilder;
use support::rig::{assert_history_valid, rig, run};

/// The user messages of a request, in order.
fn prompts(request: &Value) -> Vec<String> {
    request["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_mentioned_file_goes_with_the_prompt_and_stays_in_the_conversation() {
    let script = vec![
        SseBuilder::answer("It says to buy milk."),
        SseBuilder::answer("Still milk."),
    ];
    let mut r = rig(script, vec![], Preset::Flash, 4).await;
    let ws = r.dir.path();
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/todo.md"), "- buy milk\n- call Ana\n").unwrap();
    std::fs::write(ws.join(".env"), "DEEPSEEK_API_KEY=sk-mention-canary\n").unwrap();
    let prompt = "What does @docs/todo.md say? Also @.env and @nowhere.txt.";
    let (outcome, events) = run(&mut r.agent, prompt).await;
    assert_eq!(outcome, TurnOutcome::Answered);

    assert_eq!(
        events[0],
        AgentEvent::TurnStarted {
            prompt: prompt.into()
        },
        "the turn shows the prompt as typed"
    );
    assert!(events.contains(&AgentEvent::FilesAttached(vec!["docs/todo.md".into()])));
    let notices: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Notice(text) => Some(text),
            _ => None,
        })
        .collect();
    assert_eq!(notices.len(), 2, "{notices:?}");
    assert!(notices[0].starts_with("@.env was not attached: ") && notices[0].contains("keys"));
    assert!(notices[1].starts_with("@nowhere.txt was not attached: "));
    assert!(notices[1].contains("does not exist"), "{}", notices[1]);

    // The model reads the file without a tool call, and again in the next request.
    run(&mut r.agent, "and now?").await;
    let requests = r.server.requests();
    for request in &requests {
        let sent = prompts(&request.json());
        assert!(sent[0].starts_with(prompt), "{}", sent[0]);
        assert!(
            sent[0].contains(
                "<file path=\"docs/todo.md\" bytes=\"22\">\n- buy milk\n- call Ana\n</file>"
            ),
            "{}",
            sent[0]
        );
        assert!(sent[0].contains("<not_attached mention=\"@nowhere.txt\">"));
        assert!(!request.body.contains("sk-mention-canary"));
    }
    assert_eq!(prompts(&requests[1].json())[1], "and now?");

    // The history keeps what was sent and how it was typed; a reopened session shows the latter.
    let session = assert_history_valid(&ws.join("history.json"));
    let first = session
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .unwrap();
    assert!(first.content.contains("- buy milk"));
    let attached = first.attached.as_ref().unwrap();
    assert_eq!(
        (attached.typed.as_str(), attached.mentions.as_slice()),
        (prompt, &["docs/todo.md".to_string()][..])
    );
    assert_eq!(session.title().as_deref(), Some(prompt));
    let reloaded = history::load(&ws.join("history.json")).unwrap().session;
    let told = replay(&reloaded, 4);
    assert_eq!(
        told[..2],
        [
            AgentEvent::TurnStarted {
                prompt: prompt.into()
            },
            AgentEvent::FilesAttached(vec!["docs/todo.md".into()]),
        ]
    );
}

#[tokio::test]
async fn a_prompt_without_mentions_is_sent_and_kept_as_it_is() {
    let mut r = rig(vec![SseBuilder::answer("ok")], vec![], Preset::Flash, 4).await;
    let prompt = "write to me@example.com about `@decorators`";
    let (_, events) = run(&mut r.agent, prompt).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, AgentEvent::FilesAttached(_) | AgentEvent::Notice(_)))
    );
    assert_eq!(prompts(&r.server.requests()[0].json()), [prompt]);
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let user = session
        .messages
        .iter()
        .find(|m| m.role == Role::User)
        .unwrap();
    assert_eq!(
        (user.content.as_str(), user.attached.as_ref()),
        (prompt, None)
    );
}
