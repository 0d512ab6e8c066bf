//! The MCP hub as a library: tools join the registry as servers come up, read-only only by
//! `readOnlyHint`, `enabled_tools` / `disabled_tools` applied, disabled servers listed but not
//! started.

use crate::mcp;

use std::path::PathBuf;

use miniclaw::events::McpState;
use miniclaw::settings::{McpServerConfig, McpTransport, Origin, Scope};
use miniclaw::tools::ToolRegistry;
use miniclaw::tools::mcp::McpHub;

fn everything(name: &str) -> McpServerConfig {
    let transport = McpTransport::Stdio {
        command: mcp::node(),
        args: vec![mcp::everything_js(), "stdio".into()],
        env: Default::default(),
        cwd: None,
    };
    let origin = Origin {
        file: PathBuf::from("/test/config.toml"),
        scope: Scope::User,
    };
    McpServerConfig::new(name, transport, origin)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_join_the_registry_with_their_hints_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let all = everything("all");
    let mut some = everything("some");
    some.enabled_tools = Some(vec!["echo".into(), "get-sum".into(), "get-env".into()]);
    some.disabled_tools = vec!["get-env".into()];
    let mut off = everything("off");
    off.enabled = false;
    let hub = McpHub::start(vec![all, some, off], dir.path().into(), dir.path().into());
    let mut registry = ToolRegistry::new();
    registry.add_provider(hub.clone());
    hub.wait_started().await;

    let states: Vec<(String, McpState)> = hub
        .statuses()
        .into_iter()
        .map(|s| (s.name, s.state))
        .collect();
    assert_eq!(
        states,
        [
            ("all".into(), McpState::Ready),
            ("some".into(), McpState::Ready),
            ("off".into(), McpState::Disabled)
        ]
    );
    let names: Vec<String> = registry.iter().map(|t| t.schema().name).collect();
    let some_tools: Vec<&String> = names
        .iter()
        .filter(|n| n.starts_with("mcp__some__"))
        .collect();
    assert_eq!(some_tools, ["mcp__some__echo", "mcp__some__get-sum"]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__off__")));
    // Only what the server marks read-only runs concurrently.
    assert!(registry.is_read_only("mcp__all__echo"));
    assert!(!registry.is_read_only("mcp__all__toggle-simulated-logging"));
    assert!(!registry.is_read_only("mcp__all__gzip-file-as-resource"));
    assert!(registry.get("mcp__all__echo").is_some());

    assert!(hub.restart("off").unwrap_err().contains("disabled"));
    let unknown = hub.restart("nobody").unwrap_err();
    assert!(
        unknown.contains("the servers are: all, some, off"),
        "{unknown}"
    );

    // A sub-agent's registry never has them.
    assert_eq!(registry.subset(&["mcp__all__echo"]).iter().count(), 0);
    hub.shutdown();
    miniclaw::tools::mcp::end_all();
}
