//! An agent wired to the local model server, with probe tools, for loop and fault tests.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use futures::FutureExt;
use miniclaw::agent::{Agent, AgentEvent, AgentSettings, EventSink, Session, TurnOutcome, history};
use miniclaw::llm::{
    LlmClient, ModelEntry, Preset, Provider, Providers, RetryPolicy, Role, ToolProtocol, ToolSchema,
};
use miniclaw::tools::{Sandbox, Tool, ToolContext, ToolFuture, ToolRegistry};
use serde_json::{Map, Value, json};
use tokio::sync::{Barrier, mpsc};
use tokio_util::sync::CancellationToken;

use super::{MockServer, Reply};

/// A test tool: answers with its arguments, optionally waiting on a barrier or sleeping first.
pub struct Probe {
    pub name: &'static str,
    pub read_only: bool,
    pub barrier: Option<Arc<Barrier>>,
    pub sleep: Duration,
}

impl Probe {
    pub fn new(name: &'static str, read_only: bool) -> Self {
        Self {
            name,
            read_only,
            barrier: None,
            sleep: Duration::ZERO,
        }
    }
}

impl Tool for Probe {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: self.name.into(),
            description: "test probe".into(),
            parameters: json!({"type": "object", "properties": {"x": {"type": "string"}}, "required": ["x"]}),
        }
    }
    fn read_only(&self) -> bool {
        self.read_only
    }
    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        async move {
            ctx.output("probe running\n");
            if let Some(b) = &self.barrier {
                b.wait().await;
            }
            tokio::time::sleep(self.sleep).await;
            let mut out = Map::new();
            out.insert("echo".into(), Value::Object(args));
            Ok(out)
        }
        .boxed()
    }
}

pub struct Rig {
    pub server: MockServer,
    pub agent: Agent,
    pub dir: tempfile::TempDir,
}

pub async fn rig(script: Vec<Reply>, tools: Vec<Probe>, preset: Preset, max_steps: usize) -> Rig {
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t);
    }
    rig_with(script, registry, preset, max_steps, |c| c).await
}

/// A rig with a ready registry and a chance to adjust the client.
pub async fn rig_with(
    script: Vec<Reply>,
    registry: ToolRegistry,
    preset: Preset,
    max_steps: usize,
    adjust: impl FnOnce(LlmClient) -> LlmClient,
) -> Rig {
    let server = MockServer::start(script).await;
    let dir = tempfile::tempdir().unwrap();
    let client = LlmClient::new(&server.url(), Some("sk-test".into()))
        .unwrap()
        .with_retry(RetryPolicy {
            max_attempts: 2,
            base_delay: Duration::from_millis(5),
            max_delay: Duration::from_millis(20),
        })
        .with_idle_timeout(Duration::from_secs(5));
    let agent = Agent::new(
        adjust(client),
        Arc::new(registry),
        Arc::new(Sandbox::new(dir.path()).unwrap()),
        Session::new(),
        AgentSettings {
            preset,
            max_steps,
            history_path: Some(dir.path().join("history.json")),
        },
    );
    Rig { server, agent, dir }
}

/// A provider `local` at `url` (no key) listing `model`, which calls tools with `protocol`;
/// the catalog and that model's preset.
pub fn local_provider(url: &str, model: &str, protocol: ToolProtocol) -> (Providers, Preset) {
    let mut entry = ModelEntry::named(model);
    entry.tool_protocol = protocol;
    let providers = Providers::new(vec![Provider {
        name: "local".into(),
        base_url: url.to_string(),
        key_var: None,
        models: vec![entry],
    }]);
    let preset = providers
        .resolve(&format!("local/{model}"))
        .expect("the provider was just configured");
    (providers, preset)
}

/// A rig whose model is the provider `local`'s `model` on the scripted server, calling tools
/// with `protocol` (DeepSeek's presets go to the same server with the key `sk-test`).
pub async fn rig_local(
    script: Vec<Reply>,
    tools: Vec<Probe>,
    protocol: ToolProtocol,
    max_steps: usize,
) -> Rig {
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t);
    }
    let mut r = rig_with(script, registry, Preset::Flash, max_steps, |c| c).await;
    let (providers, preset) = local_provider(&r.server.url(), "small", protocol);
    let client = r
        .agent
        .client()
        .clone()
        .with_providers(providers, &|_| None);
    r.agent = Agent::new(
        client,
        r.agent.registry().clone(),
        Arc::new(Sandbox::new(r.dir.path()).unwrap()),
        Session::new(),
        AgentSettings {
            preset,
            max_steps,
            history_path: Some(r.dir.path().join("history.json")),
        },
    );
    r
}

/// The error messages among `events`.
pub fn errors(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Error { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

/// The observations among `events`, in order.
pub fn observations(events: &[AgentEvent]) -> Vec<Value> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolFinished { result, .. } => Some(result.value().clone()),
            _ => None,
        })
        .collect()
}

pub async fn run(agent: &mut Agent, prompt: &str) -> (TurnOutcome, Vec<AgentEvent>) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let outcome = agent
        .run_turn(prompt, &EventSink::new(tx), &CancellationToken::new())
        .await;
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    (outcome, events)
}

/// Every tool call in a saved history has exactly one result, right after its call.
pub fn assert_history_valid(path: &std::path::Path) -> Session {
    let session = history::load(path).unwrap().session;
    // As written: the snapshot, then the messages the journal appends to it.
    let mut raw: Session = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    if let Ok(journal) = std::fs::read_to_string(history::journal_path(path)) {
        for line in journal.lines() {
            let entry: serde_json::Value = serde_json::from_str(line).unwrap();
            raw.messages
                .push(serde_json::from_value(entry["message"].clone()).unwrap());
            raw.updated_at = serde_json::from_value(entry["updated_at"].clone()).unwrap();
        }
    }
    assert_eq!(session, raw, "the saved history needed no repair");
    let mut open: Vec<String> = Vec::new();
    for m in &session.messages {
        match m.role {
            Role::Tool => {
                let id = m.tool_call_id.clone().unwrap();
                assert!(open.contains(&id), "result without its call");
                open.retain(|o| *o != id);
            }
            _ => {
                assert!(open.is_empty(), "a call without its result: {open:?}");
                open = m.tool_calls.iter().map(|c| c.id.clone()).collect();
            }
        }
    }
    assert!(open.is_empty());
    session
}

/// A person who says yes to every question, counting them.
#[derive(Default)]
pub struct Yes(pub std::sync::atomic::AtomicUsize);

impl miniclaw::agent::approvals::Asker for Yes {
    fn ask<'a>(
        &'a self,
        _request: miniclaw::approval::ApprovalRequest,
        _events: &'a miniclaw::events::EventSink,
    ) -> futures::future::BoxFuture<'a, miniclaw::approval::Decision> {
        self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Box::pin(async { miniclaw::approval::Decision::Approve })
    }
}
