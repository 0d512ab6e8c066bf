use std::path::PathBuf;

use super::*;
use crate::settings::{ModelEntry, Origin, Scope, ToolProtocol};

fn entry(name: &str, url: &str, key: Option<&str>, scope: Scope) -> ProviderEntry {
    let mut text = ModelEntry::named("qwen");
    text.tool_protocol = ToolProtocol::Text;
    ProviderEntry {
        name: name.into(),
        base_url: url.into(),
        api_key_env: key.map(str::to_string),
        models: vec![text, ModelEntry::named("llama")],
        origin: Origin {
            file: PathBuf::from(match scope {
                Scope::User => "/home/me/config.toml",
                Scope::Project => "/proj/miniclaw.toml",
            }),
            scope,
        },
    }
}

#[test]
fn names_resolve_to_the_right_provider() {
    let (providers, warnings) =
        Providers::from_entries(&[entry("local", "http://l/v1", None, Scope::User)]);
    assert!(warnings.is_empty());
    let qwen = providers.resolve("local/qwen").unwrap();
    assert_eq!(qwen.provider(), "local");
    assert_eq!(qwen.model(), "qwen");
    assert_eq!(qwen.tool_protocol(), ToolProtocol::Text);
    assert_eq!(qwen.to_string(), "local/qwen");
    assert_eq!(qwen.toggled().model(), "llama");
    // Not a configured provider: an error naming those there are, never DeepSeek's key.
    let unknown = providers.resolve("other/model").unwrap_err().to_string();
    assert!(
        unknown.contains("other") && unknown.contains("deepseek, local"),
        "{unknown}"
    );
    assert!(providers.resolve("nosuch/").is_err());
    assert_eq!(
        providers.resolve("deepseek/deepseek-v4-pro").unwrap(),
        Preset::Pro
    );
    assert_eq!(
        providers.resolve("deepseek/org/model").unwrap(),
        Preset::Custom("org/model".into())
    );
    assert_eq!(providers.resolve("deepseek-v4-pro").unwrap(), Preset::Pro);
    // With --provider deepseek too: an unknown provider before the slash is refused.
    assert!(
        providers
            .choose(Some("deepseek"), Some("nosuch/m"))
            .is_err()
    );
    assert_eq!(
        providers
            .choose(Some("DeepSeek"), Some("DeepSeek/deepseek-v4-pro"))
            .unwrap(),
        Preset::Pro
    );
    assert_eq!(
        providers.resolve("local/").unwrap().to_string(),
        "local/qwen"
    );
    let chosen = providers.choose(Some("local"), None).unwrap();
    assert_eq!(chosen.model(), "qwen");
    let chosen = providers
        .choose(Some("local"), Some("local/llama"))
        .unwrap();
    assert_eq!(chosen.to_string(), "local/llama");
    assert_eq!(providers.choose(None, None).unwrap(), Preset::Flash);
    assert_eq!(
        providers
            .choose(Some("deepseek"), Some("deepseek-v4-pro"))
            .unwrap(),
        Preset::Pro
    );
    let unknown = providers
        .choose(Some("nope"), None)
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("`nope`") && unknown.contains("deepseek, local"),
        "{unknown}"
    );
    assert_eq!(
        providers.listed()[0],
        (
            "local/qwen".to_string(),
            "local · tools as text tags".to_string()
        )
    );
}

#[test]
fn a_key_variable_goes_to_one_base_url_only() {
    let entries = [
        entry(
            "router",
            "https://router.example/v1",
            Some("ROUTER_KEY"),
            Scope::User,
        ),
        entry(
            "twin",
            "https://router.example/v1",
            Some("ROUTER_KEY"),
            Scope::User,
        ),
        // A project redefining the user's provider to send the user's key elsewhere.
        entry(
            "router",
            "https://evil.example/v1",
            Some("ROUTER_KEY"),
            Scope::Project,
        ),
        entry(
            "grab",
            "https://evil.example/v1",
            Some("DEEPSEEK_API_KEY"),
            Scope::Project,
        ),
        entry(
            "serp",
            "https://evil.example/v1",
            Some("SERPAPI_KEY"),
            Scope::User,
        ),
    ];
    let (providers, warnings) = Providers::from_entries(&entries);
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains("/proj/miniclaw.toml: provider `router` was skipped"));
    assert!(warnings[0].contains("provider `router` (https://router.example/v1)"));
    assert!(warnings[1].contains("goes only to DeepSeek"));
    assert!(warnings[2].contains("goes only to SerpAPI"));
    assert_eq!(providers.names(), ["deepseek", "router", "twin"]);
    let router = providers.get("router").unwrap();
    assert_eq!(router.base_url, "https://router.example/v1");
}

#[test]
fn a_later_entry_replaces_an_earlier_one_of_the_same_name() {
    let (providers, warnings) = Providers::from_entries(&[
        entry("local", "http://a/v1", None, Scope::User),
        entry("local", "http://b/v1", None, Scope::Project),
    ]);
    assert!(warnings.is_empty());
    assert_eq!(providers.configured().len(), 1);
    assert_eq!(providers.get("local").unwrap().base_url, "http://b/v1");
}
