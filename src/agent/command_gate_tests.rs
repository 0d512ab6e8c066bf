//! The `run_command` gate through the agent's dispatch, with a stand-in tool of that name (the
//! real one is built apart): the three modes, rules, the network, headless mode, and the
//! "don't ask again" prefixes.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::agent::AgentSettings;
use crate::agent::approvals::Asker;
use crate::agent::budget::RequestBudget;
use crate::agent::session::Session;
use crate::agent::turn::Agent;
use crate::approval::{ApprovalMode, ApprovalRequest, Decision};
use crate::command_rules::{CommandRule, CommandRules, RUN_COMMAND};
use crate::events::{AgentEvent, CallOutcome, EventSink};
use crate::llm::{FunctionCall, LlmClient, Preset, ToolCall, ToolSchema};
use crate::tools::{Sandbox, Tool, ToolContext, ToolFuture, ToolRegistry};

/// Stands in for the real `run_command`: it needs approval, changes things, and counts runs.
struct StandIn(Arc<AtomicUsize>);

impl Tool for StandIn {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: RUN_COMMAND.into(),
            description: "runs a shell command line".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}}),
        }
    }

    fn read_only(&self) -> bool {
        false
    }

    fn call<'a>(&'a self, _args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        self.0.fetch_add(1, Ordering::SeqCst);
        Box::pin(async { Ok(Map::new()) })
    }
}

/// Answers each question by `answer`, keeping the questions.
struct Person {
    answer: Box<dyn Fn(&ApprovalRequest) -> Decision + Send + Sync>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl Asker for Person {
    fn ask<'a>(
        &'a self,
        request: ApprovalRequest,
        _events: &'a EventSink,
    ) -> BoxFuture<'a, Decision> {
        let decision = (self.answer)(&request);
        self.asked.lock().unwrap().push(request);
        Box::pin(async move { decision })
    }
}

fn person(answer: impl Fn(&ApprovalRequest) -> Decision + Send + Sync + 'static) -> Arc<Person> {
    Arc::new(Person {
        answer: Box::new(answer),
        asked: Mutex::new(Vec::new()),
    })
}

/// An agent in `mode` with the stand-in, asking `asker` (none: headless), with `rules`.
struct Setup {
    agent: Agent,
    runs: Arc<AtomicUsize>,
    _dir: tempfile::TempDir,
}

fn setup(mode: ApprovalMode, asker: Option<Arc<Person>>, rules: &[&str]) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let runs = Arc::new(AtomicUsize::new(0));
    let mut registry = ToolRegistry::new();
    registry.register(StandIn(runs.clone()));
    let config: Vec<(String, std::path::PathBuf)> = rules
        .iter()
        .map(|r| {
            (
                r.to_string(),
                "/home/me/.config/miniclaw/config.toml".into(),
            )
        })
        .collect();
    let store = dir.path().join("data/folders.json");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let (book, warnings) = CommandRules::load(Some(store), &ws, &config);
    assert!(warnings.is_empty(), "{warnings:?}");
    let agent = Agent::new(
        LlmClient::new("http://127.0.0.1:9", None).unwrap(),
        Arc::new(registry),
        Arc::new(Sandbox::new(&ws).unwrap()),
        Session::new(),
        AgentSettings {
            preset: Preset::Flash,
            max_steps: 2,
            history_path: None,
        },
    )
    .with_approvals(mode, asker.map(|a| a as Arc<dyn Asker>))
    .with_command_rules(Arc::new(book));
    Setup {
        agent,
        runs,
        _dir: dir,
    }
}

/// Runs one `run_command` call with `arguments`: its observation and every event on the way.
fn call_events(setup: &Setup, arguments: Value) -> (super::dispatch::Observed, Vec<AgentEvent>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let calls = [ToolCall {
        id: "c1".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: RUN_COMMAND.into(),
            arguments: arguments.to_string(),
        },
    }];
    let (mut observed, _) = rt.block_on(setup.agent.run_calls(
        &calls,
        &[],
        &RequestBudget::for_turn(2),
        &EventSink::new(tx),
        &CancellationToken::new(),
    ));
    let mut events = Vec::new();
    while let Ok(event) = rx.try_recv() {
        events.push(event);
    }
    (observed.remove(0), events)
}

/// Runs one `run_command` call with `arguments`: how it ended, the notices said on the way.
fn call(setup: &Setup, arguments: Value) -> (CallOutcome, Value, Vec<String>) {
    let (o, events) = call_events(setup, arguments);
    let notices = events
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::Notice(n) => Some(n),
            _ => None,
        })
        .collect();
    (o.outcome, o.value.value().clone(), notices)
}

fn command(line: &str) -> Value {
    json!({"command": line})
}

fn ran(outcome: &CallOutcome) -> bool {
    !outcome.is_denied() && !matches!(outcome, CallOutcome::Refused { .. })
}

#[test]
fn auto_runs_commands_unasked_and_read_only_refuses_them() {
    let nobody = person(|_| Decision::Deny("no".into()));
    let auto = setup(ApprovalMode::Auto, Some(nobody.clone()), &[]);
    let (outcome, _, _) = call(&auto, command("cargo test $(curl x) | sh"));
    assert!(ran(&outcome), "{outcome:?}");
    assert_eq!(auto.runs.load(Ordering::SeqCst), 1);
    assert!(nobody.asked.lock().unwrap().is_empty());
    let read_only = setup(
        ApprovalMode::ReadOnly,
        Some(nobody.clone()),
        &["cargo test"],
    );
    let (outcome, value, _) = call(&read_only, command("cargo test"));
    assert!(!ran(&outcome));
    assert!(value["error"].as_str().unwrap().contains("read-only mode"));
    assert_eq!(read_only.runs.load(Ordering::SeqCst), 0);
    assert!(nobody.asked.lock().unwrap().is_empty());
}

#[test]
fn ask_lets_a_line_through_only_when_every_part_matches_a_rule() {
    let no = person(|_| Decision::Deny(String::new()));
    let ask = setup(
        ApprovalMode::Ask,
        Some(no.clone()),
        &["cargo test", "git status"],
    );
    for line in ["cargo test", "cargo test -q && git status > out 2>&1"] {
        let (outcome, _, _) = call(&ask, command(line));
        assert!(ran(&outcome), "{line}: {outcome:?}");
    }
    assert!(no.asked.lock().unwrap().is_empty());
    for line in [
        "cargo test; curl x",
        "cargo test && rm -rf ~",
        "cargo test $(curl x)",
        "cargo test `curl x`",
        "cargo test | sh",
        "cargo test\ncurl x",
        "cargo testx",
    ] {
        let (outcome, _, _) = call(&ask, command(line));
        assert!(!ran(&outcome), "{line} ran unasked");
    }
    assert_eq!(ask.runs.load(Ordering::SeqCst), 2);
    let asked = no.asked.lock().unwrap();
    assert_eq!(asked.len(), 7, "each of them asked");
    let prompt = asked[0].command.as_ref().unwrap();
    assert_eq!(prompt.line, "cargo test; curl x");
    assert!(prompt.jail.contains("no network"));
    assert_eq!(
        prompt.prefixes,
        Some(vec![
            CommandRule::parse("cargo test").unwrap(),
            CommandRule::parse("curl x").unwrap()
        ])
    );
    // A line that cannot be read says why and offers no prefix.
    let unreadable = asked[2].command.as_ref().unwrap();
    assert!(unreadable.unreadable.as_ref().unwrap().contains("$(...)"));
    assert_eq!(unreadable.prefixes, None);
}

#[test]
fn the_network_asks_in_every_mode_and_nothing_covers_it() {
    let yes_for_the_session = person(|_| Decision::ApproveTool);
    for mode in [ApprovalMode::Auto, ApprovalMode::Ask] {
        let s = setup(mode, Some(yes_for_the_session.clone()), &["curl"]);
        for _ in 0..2 {
            let (outcome, _, _) = call(&s, json!({"command": "curl x", "network": true}));
            assert!(ran(&outcome), "{mode:?}: {outcome:?}");
        }
    }
    let asked = yes_for_the_session.asked.lock().unwrap();
    assert_eq!(
        asked.len(),
        4,
        "asked every time, rule and session yes notwithstanding"
    );
    let prompt = asked[0].command.as_ref().unwrap();
    assert!(prompt.network);
    assert!(prompt.jail.contains("CAN REACH THE INTERNET"));
    assert_eq!(prompt.prefixes, None, "no prefix for a network command");
    drop(asked);
    // A session yes given to an ordinary command does not cover a network one either.
    let s = setup(ApprovalMode::Ask, Some(yes_for_the_session.clone()), &[]);
    call(&s, command("ls"));
    let before = yes_for_the_session.asked.lock().unwrap().len();
    call(&s, command("ls -la"));
    assert_eq!(yes_for_the_session.asked.lock().unwrap().len(), before);
    call(&s, json!({"command": "ls", "network": "yes"}));
    assert_eq!(yes_for_the_session.asked.lock().unwrap().len(), before + 1);
    // Read-only refuses it without asking.
    let s = setup(
        ApprovalMode::ReadOnly,
        Some(yes_for_the_session.clone()),
        &[],
    );
    let (outcome, _, _) = call(&s, json!({"command": "curl x", "network": true}));
    assert!(!ran(&outcome));
    assert_eq!(yes_for_the_session.asked.lock().unwrap().len(), before + 1);
}

#[test]
fn headless_runs_what_rules_cover_and_refuses_the_rest_with_the_reason() {
    let ask = setup(ApprovalMode::Ask, None, &["cargo test"]);
    let (outcome, _, _) = call(&ask, command("cargo test --all"));
    assert!(ran(&outcome), "{outcome:?}");
    let (outcome, value, _) = call(&ask, command("cargo build"));
    assert!(!ran(&outcome));
    assert!(
        value["error"]
            .as_str()
            .unwrap()
            .contains("no one to ask in headless mode")
    );
    for mode in [ApprovalMode::Auto, ApprovalMode::Ask] {
        let s = setup(mode, None, &["curl"]);
        let (outcome, value, _) = call(&s, json!({"command": "curl x", "network": true}));
        assert!(!ran(&outcome), "{mode:?}");
        let error = value["error"].as_str().unwrap();
        assert!(error.contains("asks for the network"), "{error}");
        assert_eq!(s.runs.load(Ordering::SeqCst), 0);
    }
    assert_eq!(ask.runs.load(Ordering::SeqCst), 1);
}

#[test]
fn a_yes_with_the_prefixes_is_not_asked_again_in_this_project() {
    // The person takes the offered prefixes.
    let take_prefixes = person(|r| {
        Decision::ApprovePrefixes(r.command.as_ref().unwrap().prefixes.clone().unwrap())
    });
    let s = setup(ApprovalMode::Ask, Some(take_prefixes.clone()), &[]);
    let (outcome, _, notices) = call(&s, command("cargo test --all && git status -s"));
    assert!(ran(&outcome));
    assert!(
        notices[0].contains("`cargo test; git status`") && notices[0].contains("/permissions"),
        "{notices:?}"
    );
    for line in ["cargo test", "git status", "cargo test -q; git status"] {
        let (outcome, _, _) = call(&s, command(line));
        assert!(ran(&outcome), "{line}");
    }
    assert_eq!(take_prefixes.asked.lock().unwrap().len(), 1);
    // Kept in the folder records, outside the workspace.
    let store = s._dir.path().join("data/folders.json");
    let kept = crate::command_rules::stored::load(&store, &s._dir.path().join("ws"));
    assert_eq!(
        kept,
        vec![
            CommandRule::parse("cargo test").unwrap(),
            CommandRule::parse("git status").unwrap()
        ]
    );
    // Something else still asks.
    call(&s, command("cargo build"));
    assert_eq!(take_prefixes.asked.lock().unwrap().len(), 2);
}

#[test]
fn prefixes_named_for_a_network_command_are_not_kept() {
    // Prefixes named in the answer to a network command (never offered for one); a no after.
    let sneaky = person(|r| {
        if r.command.as_ref().unwrap().network {
            Decision::ApprovePrefixes(vec![CommandRule::parse("curl").unwrap()])
        } else {
            Decision::Deny(String::new())
        }
    });
    let s = setup(ApprovalMode::Ask, Some(sneaky.clone()), &[]);
    call(&s, json!({"command": "curl x", "network": true}));
    call(&s, command("curl y"));
    assert_eq!(
        sneaky.asked.lock().unwrap().len(),
        2,
        "the rule was not added"
    );
    assert!(s.agent.command_rules().list().is_empty());
}

#[test]
fn the_dialog_says_the_configured_timeout() {
    let no = person(|_| Decision::Deny(String::new()));
    let mut ask = setup(ApprovalMode::Ask, Some(no.clone()), &[]);
    ask.agent = ask
        .agent
        .with_command_timeouts(crate::command_rules::CommandTimeouts::new(
            std::time::Duration::from_secs(45),
            std::time::Duration::from_secs(300),
        ));
    call(&ask, command("cargo test"));
    call(&ask, json!({"command": "cargo test", "timeout_sec": 900}));
    let asked = no.asked.lock().unwrap();
    let jail = |i: usize| asked[i].command.as_ref().unwrap().jail.clone();
    assert!(jail(0).ends_with("ends after 45 s"), "{}", jail(0));
    assert!(jail(1).ends_with("ends after 300 s"), "{}", jail(1));
}

#[test]
fn a_call_a_rule_lets_through_tells_which_rules() {
    let no = person(|_| Decision::Deny(String::new()));
    let ask = setup(
        ApprovalMode::Ask,
        Some(no.clone()),
        &["cargo test", "git status"],
    );
    let (_, events) = call_events(&ask, command("cargo test -q && git status && cargo test"));
    let told: Vec<(String, Vec<CommandRule>)> = events
        .into_iter()
        .filter_map(|e| match e {
            AgentEvent::AllowedByRules { id, rules } => Some((id, rules)),
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        vec![(
            "c1".to_string(),
            vec![
                CommandRule::parse("cargo test").unwrap(),
                CommandRule::parse("git status").unwrap()
            ]
        )]
    );
}
