//! Providers: each preset goes to its own provider's server with that provider's key (never
//! another's), settings shape the request, and the binary takes `--provider` from config.toml.

use crate::headless_bin;
use crate::support;

use std::sync::Arc;

use headless_bin::{bin, text};
use miniclaw::agent::{Agent, AgentSettings, Session, TurnOutcome};
use miniclaw::llm::{LlmClient, LlmError, ModelEntry, Preset, Provider, Providers, RetryPolicy};
use miniclaw::tools::{Sandbox, ToolRegistry};
use serde_json::json;
use support::rig::run;
use support::{MockServer, RecordedRequest, SseBuilder};

const DEEPSEEK_KEY: &str = "sk-deepseek-only-3f9a";
const ALPHA_KEY: &str = "sk-alpha-only-71c2";

fn provider(name: &str, url: &str, key_var: Option<&str>, models: Vec<ModelEntry>) -> Provider {
    Provider {
        name: name.into(),
        base_url: format!("{url}/v1"),
        key_var: key_var.map(str::to_string),
        models,
    }
}

/// A client for DeepSeek at `deepseek` with providers `alpha` (keyed) and `beta` (no key).
fn client(deepseek: &str, alpha: &str, beta: &str, alpha_key: Option<&str>) -> LlmClient {
    let mut warm = ModelEntry::named("alpha-1");
    warm.extra = json!({"temperature": 0.2, "top_k": 20})
        .as_object()
        .unwrap()
        .clone();
    let providers = Providers::new(vec![
        provider(
            "alpha",
            alpha,
            Some("ALPHA_API_KEY"),
            vec![warm, ModelEntry::named("alpha-2")],
        ),
        provider("beta", beta, None, vec![ModelEntry::named("beta-1")]),
    ]);
    let alpha_key = alpha_key.map(str::to_string);
    LlmClient::new(deepseek, Some(DEEPSEEK_KEY.into()))
        .unwrap()
        .with_retry(RetryPolicy {
            max_attempts: 1,
            ..RetryPolicy::default()
        })
        .with_providers(providers, &move |var| {
            (var == "ALPHA_API_KEY")
                .then(|| alpha_key.clone())
                .flatten()
        })
}

/// The whole request as the server saw it, headers included.
fn whole(request: &RecordedRequest) -> String {
    format!(
        "{} {} {:?} {}",
        request.method, request.path, request.headers, request.body
    )
}

fn answers(n: usize) -> Vec<support::Reply> {
    (0..n)
        .map(|i| SseBuilder::answer(&format!("answer {i}")))
        .collect()
}

#[tokio::test]
async fn each_key_goes_only_to_its_own_providers_server() {
    let deepseek = MockServer::start(answers(2)).await;
    let alpha = MockServer::start(answers(2)).await;
    let beta = MockServer::start(answers(1)).await;
    let client = client(&deepseek.url(), &alpha.url(), &beta.url(), Some(ALPHA_KEY));
    let providers = client.providers().clone();
    let dir = tempfile::tempdir().unwrap();
    let mut agent = Agent::new(
        client,
        Arc::new(ToolRegistry::new()),
        Arc::new(Sandbox::new(dir.path()).unwrap()),
        Session::new(),
        AgentSettings {
            preset: Preset::Flash,
            max_steps: 2,
            history_path: None,
        },
    );
    // Switched the way /model and F2 switch: the next request goes where the preset says.
    for name in [
        "deepseek-flash",
        "alpha/alpha-1",
        "beta/beta-1",
        "deepseek-v4-pro",
        "alpha/alpha-1",
    ] {
        agent.set_preset(providers.resolve(name).unwrap());
        let (outcome, _) = run(&mut agent, name).await;
        assert_eq!(outcome, TurnOutcome::Answered, "{name}");
    }
    let seen = |server: &MockServer| server.requests();
    assert_eq!(seen(&deepseek).len(), 2);
    assert_eq!(seen(&alpha).len(), 2);
    assert_eq!(seen(&beta).len(), 1);
    for r in seen(&deepseek) {
        assert_eq!(r.path, "/chat/completions");
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Bearer {DEEPSEEK_KEY}"))
        );
        assert!(!whole(&r).contains(ALPHA_KEY));
    }
    for r in seen(&alpha) {
        assert_eq!(r.path, "/v1/chat/completions");
        assert_eq!(
            r.header("authorization"),
            Some(&*format!("Bearer {ALPHA_KEY}"))
        );
        assert!(!whole(&r).contains(DEEPSEEK_KEY));
        let body = r.json();
        assert_eq!(body["model"], "alpha-1");
        assert_eq!(body["temperature"], 0.2);
        assert_eq!(body["top_k"], 20);
        assert!(body.get("thinking").is_none(), "no DeepSeek fields: {body}");
        assert_eq!(body["stream"], true);
    }
    let b = &seen(&beta)[0];
    assert_eq!(
        b.header("authorization"),
        None,
        "a provider without a key sends none"
    );
    assert!(!whole(b).contains(DEEPSEEK_KEY) && !whole(b).contains(ALPHA_KEY));
    assert_eq!(b.json()["model"], "beta-1");
}

#[tokio::test]
async fn a_provider_whose_key_is_not_set_sends_nothing_anywhere() {
    let deepseek = MockServer::start(answers(1)).await;
    let alpha = MockServer::start(answers(1)).await;
    let client = client(&deepseek.url(), &alpha.url(), "http://127.0.0.1:9", None);
    let preset = client.providers().resolve("alpha/alpha-2").unwrap();
    let problem = client.key_problem(&preset).expect("no key");
    assert!(
        matches!(&problem, LlmError::MissingProviderKey { provider, var } if provider == "alpha" && var == "ALPHA_API_KEY"),
        "{problem:?}"
    );
    assert!(
        problem.to_string().contains("set ALPHA_API_KEY"),
        "{problem}"
    );
    let cancel = tokio_util::sync::CancellationToken::new();
    let err = client
        .chat(&preset, &[], &[], &cancel, &mut |_| {})
        .await
        .unwrap_err();
    assert!(matches!(err.error, LlmError::MissingProviderKey { .. }));
    // A provider that is not configured is refused the same way, never sent to DeepSeek.
    let stray = Preset::Provided(miniclaw::llm::ProviderModel {
        provider: Arc::new(provider("gamma", &deepseek.url(), None, vec![])),
        model: ModelEntry::named("g"),
    });
    let err = client
        .chat(&stray, &[], &[], &cancel, &mut |_| {})
        .await
        .unwrap_err();
    assert!(
        matches!(err.error, LlmError::UnknownProvider { .. }),
        "{:?}",
        err.error
    );
    assert!(deepseek.requests().is_empty() && alpha.requests().is_empty());
    // DeepSeek's key check goes to DeepSeek alone.
    let check = client
        .check_key(&miniclaw::secrets::Secret::new("sk-new"))
        .await;
    assert_eq!(check, miniclaw::llm::KeyCheck::Accepted);
    assert_eq!(deepseek.requests().len(), 1);
    assert!(alpha.requests().is_empty());
}

/// A config folder whose config.toml declares `local` at `url`, its key in LOCAL_API_KEY.
fn config_home(url: &str) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("miniclaw");
    std::fs::create_dir_all(&dir).unwrap();
    let toml = format!(
        r#"
[providers.local]
base_url = "{url}/v1"
api_key_env = "LOCAL_API_KEY"

[[providers.local.models]]
name = "tiny-text"
tool_protocol = "text"
context_tokens = 32768
extra = {{ temperature = 0.1 }}

[[providers.local.models]]
name = "tiny-native"
"#
    );
    std::fs::write(dir.join("config.toml"), toml).unwrap();
    home
}

#[test]
fn the_binary_takes_provider_and_model_from_config_toml_and_sends_only_that_key() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("hello from local")]);
    let home = config_home(&server.url());
    let ws = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "--workspace",
            ws.path().to_str().unwrap(),
            "--provider",
            "local",
            "-p",
            "hi",
        ])
        .env("XDG_CONFIG_HOME", home.path())
        .env("XDG_DATA_HOME", data.path())
        .env("DEEPSEEK_API_KEY", DEEPSEEK_KEY)
        .env("LOCAL_API_KEY", "sk-local-key-5d1e")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "hello from local");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.header("authorization"), Some("Bearer sk-local-key-5d1e"));
    assert!(!whole(r).contains(DEEPSEEK_KEY));
    let body = r.json();
    assert_eq!(body["model"], "tiny-text");
    assert_eq!(body["temperature"], 0.1);
    assert!(
        body.get("tools").is_none(),
        "the text protocol sends no tools"
    );
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("<tool_call>"), "{system}");
    assert!(!text(&out.stderr).contains("sk-local-key-5d1e"));
}

#[test]
fn an_unknown_provider_or_a_missing_key_stops_before_anything_is_sent() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let home = config_home(&server.url());
    let ws = tempfile::tempdir().unwrap();
    let run = |provider: &str, key: Option<&str>| {
        let mut c = bin();
        c.args([
            "--workspace",
            ws.path().to_str().unwrap(),
            "--provider",
            provider,
        ])
        .args(["-p", "hi", "--output-format", "json"])
        .env("XDG_CONFIG_HOME", home.path())
        .env("DEEPSEEK_API_KEY", DEEPSEEK_KEY)
        .env_remove("LOCAL_API_KEY");
        if let Some(key) = key {
            c.env("LOCAL_API_KEY", key);
        }
        c.output().unwrap()
    };
    let out = run("nope", Some("k"));
    assert_eq!(out.status.code(), Some(2));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let said = report["errors"].to_string();
    assert!(
        said.contains("unknown provider `nope`") && said.contains("deepseek, local"),
        "{said}"
    );
    let out = run("local", None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("set LOCAL_API_KEY"),
        "{}",
        text(&out.stderr)
    );
    assert!(server.requests().is_empty());
}

#[test]
fn a_model_typed_as_provider_slash_model_needs_no_provider_flag() {
    let (server, _rt) = MockServer::start_blocking(vec![SseBuilder::answer("native here")]);
    let home = config_home(&server.url());
    let ws = tempfile::tempdir().unwrap();
    let out = bin()
        .args([
            "--workspace",
            ws.path().to_str().unwrap(),
            "--model",
            "local/tiny-native",
            "-p",
            "hi",
        ])
        .env("XDG_CONFIG_HOME", home.path())
        .env("LOCAL_API_KEY", "sk-l")
        .env_remove("DEEPSEEK_API_KEY")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests()[0].json();
    assert_eq!(body["model"], "tiny-native");
    assert!(body.get("tools").is_some(), "native tools: {body}");
}

#[test]
fn a_providers_key_leaves_the_environment_like_deepseeks() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let plugins = project.join("tools_plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    std::fs::write(
        plugins.join("peek.py"),
        "import json, os, sys\njson.load(sys.stdin)\n\
         parent = open('/proc/%d/environ' % os.getppid(), 'rb').read()\n\
         own = open('/proc/self/environ', 'rb').read()\n\
         print(json.dumps({'parent': b'sk-canary' in parent, 'own': b'sk-canary' in own, 'bytes': len(parent)}))\n",
    )
    .unwrap();
    std::fs::write(
        plugins.join("peek.toml"),
        "[[tool]]\nname = \"peek\"\ndescription = \"d\"\ncommand = [\"python3\", \"peek.py\"]\n",
    )
    .unwrap();
    let script = vec![
        SseBuilder::calls("c1", "peek", json!({})),
        SseBuilder::answer("done"),
    ];
    let (server, _rt) = MockServer::start_blocking(script);
    let home = config_home(&server.url());
    let out = bin()
        .current_dir(&project)
        .args([
            "--workspace",
            "ws",
            "--trust",
            "--model",
            "local/tiny-native",
            "-p",
            "peek",
        ])
        .env("XDG_CONFIG_HOME", home.path())
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("LOCAL_API_KEY", "sk-canary-local-77")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer sk-canary-local-77")
    );
    let messages = requests[1].json()["messages"].clone();
    let observation = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let seen: serde_json::Value = serde_json::from_str(&observation).unwrap();
    assert_eq!(seen["ok"], true, "{observation}");
    assert_eq!(seen["parent"], false, "{observation}");
    assert_eq!(seen["own"], false, "{observation}");
    assert!(seen["bytes"].as_u64().unwrap() > 0, "{observation}");
}
