//! Opt-in: the agent against a real model on an OpenAI-compatible server on this machine, calling
//! the real built-in tools through the text-tag protocol. It runs only when
//! `MINICLAW_REAL_MODEL_URL` names the server (`http://127.0.0.1:PORT/v1`; `scripts/real-model.sh`
//! starts SmolLM2-135M on the CPU); without it, it says so on stderr and checks nothing.
//! `MINICLAW_REAL_MODEL_NAME` (default `smollm2`) and `MINICLAW_REAL_MODEL_PROTOCOL` (`text`,
//! the default, or `native`) describe the model. Whatever the quality of its calls, a real model
//! must get real calls parsed, run and answered.

use std::sync::Arc;

use miniclaw::agent::{Agent, AgentEvent, AgentSettings, EventSink, Session, TurnOutcome};
use miniclaw::llm::{LlmClient, ModelEntry, Provider, Providers, Role, ToolProtocol};
use miniclaw::tools::{Sandbox, builtin_registry};
use tokio_util::sync::CancellationToken;

/// The environment variable that names the server.
const URL_VAR: &str = "MINICLAW_REAL_MODEL_URL";

#[tokio::test(flavor = "multi_thread")]
async fn a_real_model_makes_real_tool_calls() {
    let Some(url) = std::env::var(URL_VAR).ok().filter(|u| !u.trim().is_empty()) else {
        eprintln!(
            "real_model: NOT RUN. Set {URL_VAR}=http://127.0.0.1:PORT/v1 to a model server on this \
             machine (scripts/real-model.sh starts one; see the README's \"A real model\") to run it."
        );
        return;
    };
    let name = std::env::var("MINICLAW_REAL_MODEL_NAME").unwrap_or_else(|_| "smollm2".into());
    let mut model = ModelEntry::named(&name);
    if std::env::var("MINICLAW_REAL_MODEL_PROTOCOL").as_deref() != Ok("native") {
        model.tool_protocol = ToolProtocol::Text;
    }
    let providers = Providers::new(vec![Provider {
        name: "real".into(),
        base_url: url.trim_end_matches('/').to_string(),
        key_var: None,
        models: vec![model],
    }]);
    let preset = providers
        .resolve(&format!("real/{name}"))
        .expect("the provider was just configured");
    let client = LlmClient::new("http://127.0.0.1:9", None)
        .unwrap()
        .with_providers(providers, &|_| None);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "Hello from the workspace.\n").unwrap();
    let registry = Arc::new(builtin_registry());
    let known: Vec<String> = registry.schemas().into_iter().map(|s| s.name).collect();
    let mut agent = Agent::new(
        client,
        registry,
        Arc::new(Sandbox::new(dir.path()).unwrap()),
        Session::new(),
        AgentSettings {
            preset,
            max_steps: 3,
            history_path: None,
        },
    );
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let prompt = "Use a tool to read the file hello.txt, then tell me what it says.";
    let outcome = agent
        .run_turn(prompt, &EventSink::new(tx), &CancellationToken::new())
        .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    report(&events);
    assert!(
        !matches!(outcome, TurnOutcome::Failed(_)),
        "the turn failed: {events:?}"
    );
    assert_ne!(outcome, TurnOutcome::Interrupted);
    let calls: Vec<&String> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { name, .. } => Some(name),
            _ => None,
        })
        .collect();
    assert!(
        calls.iter().any(|c| known.contains(c)),
        "the model made no call of a real tool: {calls:?}"
    );
    let finished = events
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolFinished { .. }))
        .count();
    assert_eq!(finished, calls.len(), "every call has its observation");
    // The history holds each call with its result, as with native calls.
    let messages = &agent.session().messages;
    let asked: usize = messages.iter().map(|m| m.tool_calls.len()).sum();
    let answered = messages.iter().filter(|m| m.role == Role::Tool).count();
    assert_eq!(asked, answered);
    assert_eq!(asked, calls.len());
}

/// The turn as a step trace on stderr, for whoever runs the test by hand.
fn report(events: &[AgentEvent]) {
    let mut text = String::new();
    for event in events {
        match event {
            AgentEvent::StepStarted { step, .. } => eprintln!("[step {step}]"),
            AgentEvent::ContentDelta(t) => text.push_str(t),
            AgentEvent::ToolCallStarted {
                name, arguments, ..
            } => {
                eprintln!("  thought: {}", std::mem::take(&mut text).trim());
                eprintln!("  action: {name}({arguments})");
            }
            AgentEvent::ToolFinished { result, .. } => eprintln!("  observation: {result}"),
            AgentEvent::Error { message } => eprintln!("  error: {message}"),
            AgentEvent::Notice(n) => eprintln!("  notice: {n}"),
            _ => {}
        }
    }
    eprintln!("  answer: {}", text.trim());
}
