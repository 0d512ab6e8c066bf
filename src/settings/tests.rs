use std::path::Path;
use std::time::Duration;

use super::*;

fn origin(file: &str, scope: Scope) -> Origin {
    Origin {
        file: file.into(),
        scope,
    }
}

#[test]
fn codex_entries_parse_with_defaults_and_unknown_tables_are_ignored() {
    let text = r#"
        model = "whatever"
        [providers.other]
        base_url = "http://x"

        [mcp_servers.time]
        command = "uvx"
        args = ["mcp-server-time", "--local-timezone=UTC"]
        env = { TZ = "UTC" }
        tool_timeout_sec = 2.5
        disabled_tools = ["convert_time"]

        [mcp_servers.remote]
        url = "https://example.org/mcp"
        bearer_token_env_var = "REMOTE_TOKEN"
        enabled = false
    "#;
    let (settings, warnings) = parse_toml(text, Path::new("/c/config.toml"), Scope::User);
    assert!(warnings.is_empty(), "{warnings:?}");
    let servers = settings.mcp_servers;
    assert_eq!(servers.len(), 2);
    let remote = &servers[0];
    assert_eq!(remote.name, "remote");
    assert!(!remote.enabled);
    assert!(
        matches!(&remote.transport, McpTransport::Http { url, bearer_token_env_var: Some(v), .. }
        if url == "https://example.org/mcp" && v == "REMOTE_TOKEN")
    );
    let time = &servers[1];
    assert_eq!(time.startup_timeout, DEFAULT_STARTUP_TIMEOUT);
    assert_eq!(time.tool_timeout, Duration::from_millis(2500));
    assert!(time.offers("get_current_time") && !time.offers("convert_time"));
    assert_eq!(
        time.summary(),
        "time: uvx mcp-server-time --local-timezone=UTC"
    );
    assert_eq!(time.origin, origin("/c/config.toml", Scope::User));
}

#[test]
fn a_broken_entry_is_reported_and_the_rest_kept() {
    let text = r#"
        [mcp_servers.good]
        command = "x"
        [mcp_servers.both]
        command = "x"
        url = "http://y"
        [mcp_servers.none]
        args = ["a"]
        [mcp_servers.badtype]
        command = "x"
        args = "not a list"
        [mcp_servers.slow]
        command = "x"
        startup_timeout_sec = 0
        [mcp_servers."bad name"]
        command = "x"
        [mcp_servers.typo]
        command = "x"
        comand = "y"
        [mcp_servers.ftp]
        url = "ftp://x"
    "#;
    let (settings, warnings) = parse_toml(text, Path::new("/p/miniclaw.toml"), Scope::Project);
    let names: Vec<&str> = settings
        .mcp_servers
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["good", "typo"]);
    let all = warnings.join("\n");
    for needle in [
        "/p/miniclaw.toml: MCP server `both` was skipped: give either",
        "`none` was skipped: it needs `command`",
        "`badtype` was skipped: invalid type",
        "`slow` was skipped: `startup_timeout_sec` must be more than 0",
        "`bad name` was skipped: a server name must be",
        "`typo`: unknown key `comand` ignored",
        "`ftp` was skipped: `url` must be http or https",
    ] {
        assert!(all.contains(needle), "{needle} in:\n{all}");
    }
}

#[test]
fn a_file_that_is_not_toml_is_one_warning() {
    let (settings, warnings) =
        parse_toml("[mcp_servers.x\n", Path::new("/c/config.toml"), Scope::User);
    assert!(settings.mcp_servers.is_empty());
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0].starts_with("/c/config.toml: not valid TOML"),
        "{warnings:?}"
    );
    let (_, warnings) = parse_toml("mcp_servers = 3", Path::new("/c/config.toml"), Scope::User);
    assert!(warnings[0].contains("must be a table"), "{warnings:?}");
}

#[test]
fn claude_entries_expand_variables() {
    let text = r#"{"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "srv", "${HOME}/notes"], "env": {"LEVEL": "${LEVEL:-info}"}},
        "remote": {"type": "http", "url": "${BASE:-http://127.0.0.1:9}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}},
        "missing": {"command": "${NOPE}"},
        "old": {"type": "sse", "url": "http://x/sse"},
        "odd": {"type": "carrier-pigeon", "command": "x"},
        "empty": {}
    }}"#;
    let env = |name: &str| match name {
        "HOME" => Some("/home/me".to_string()),
        "TOKEN" => Some("t0k".to_string()),
        _ => None,
    };
    let (servers, warnings) = mcp_json::parse(text, &origin("/p/.mcp.json", Scope::Project), &env);
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["files", "remote"]);
    assert!(
        matches!(&servers[0].transport, McpTransport::Stdio { args, env, .. }
        if args[2] == "/home/me/notes" && env["LEVEL"] == "info")
    );
    assert!(
        matches!(&servers[1].transport, McpTransport::Http { url, headers, .. }
        if url == "http://127.0.0.1:9/mcp" && headers["Authorization"] == "Bearer t0k")
    );
    let all = warnings.join("\n");
    for needle in [
        "`missing` was skipped: environment variable(s) NOPE not set",
        "`old` was skipped: `\"type\": \"sse\"`",
        "`odd` was skipped: unknown `type`",
        "`empty` was skipped: it needs `command`",
    ] {
        assert!(all.contains(needle), "{needle} in:\n{all}");
    }
    // Values that may be tokens never show in Debug output.
    assert!(!format!("{:?}", servers[1]).contains("t0k"));
}

#[test]
fn a_broken_mcp_json_is_one_warning() {
    let o = origin("/p/.mcp.json", Scope::Project);
    let (_, w) = mcp_json::parse("{", &o, &|_| None);
    assert!(w[0].starts_with("/p/.mcp.json: not valid JSON"), "{w:?}");
    let (_, w) = mcp_json::parse("{\"servers\": {}}", &o, &|_| None);
    assert!(w[0].contains("no `mcpServers` object"), "{w:?}");
}

#[test]
fn the_project_wins_a_name_clash_and_counts_only_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    let project = dir.path().join("proj");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        &user,
        "[mcp_servers.a]\ncommand = \"user-a\"\n[mcp_servers.b]\ncommand = \"user-b\"\n",
    )
    .unwrap();
    std::fs::write(
        project.join(PROJECT_MCP_JSON),
        r#"{"mcpServers": {"a": {"command": "json-a"}, "c": {"command": "json-c"}}}"#,
    )
    .unwrap();
    std::fs::write(
        project.join(PROJECT_FILE),
        "[mcp_servers.c]\ncommand = \"toml-c\"\n",
    )
    .unwrap();
    let files = SettingsFiles {
        user: Some(user),
        project: project.clone(),
    };
    let command = |s: &McpServerConfig| match &s.transport {
        McpTransport::Stdio { command, .. } => command.clone(),
        McpTransport::Http { url, .. } => url.clone(),
    };
    let all = Settings::load(&files, true);
    assert!(all.warnings.is_empty(), "{:?}", all.warnings);
    let got: Vec<(String, String)> = all
        .mcp_servers
        .iter()
        .map(|s| (s.name.clone(), command(s)))
        .collect();
    assert_eq!(
        got,
        [
            ("a".into(), "json-a".into()),
            ("b".into(), "user-b".into()),
            ("c".into(), "toml-c".into())
        ]
    );
    assert_eq!(all.mcp_servers[0].origin.scope, Scope::Project);
    let user_only = Settings::load(&files, false);
    let got: Vec<String> = user_only.mcp_servers.iter().map(command).collect();
    assert_eq!(got, ["user-a", "user-b"]);
    assert_eq!(files.project_files().len(), 2);
}

#[test]
fn provider_tables_parse_with_their_models_and_broken_parts_are_named() {
    let text = r#"
        [providers.local]
        base_url = "http://localhost:11434/v1/"
        api_key_env = "LOCAL_API_KEY"

        [[providers.local.models]]
        name = "qwen2.5-coder"
        tool_protocol = "text"
        context_tokens = 32768
        extra = { temperature = 0.2, stream = false, options = { num_ctx = 8192 } }

        [[providers.local.models]]
        name = "llama3.2"

        [[providers.local.models]]
        name = "tiny"
        context_tokens = 10

        [providers.deepseek]
        base_url = "https://elsewhere.example"

        [providers.badkey]
        base_url = "https://x.example/v1"
        api_key_env = "PATH"

        [providers.noproto]
        base_url = "ftp://x.example"

        [providers.typo]
        base_url = "https://x.example/v1"
        models = [{ name = "m", tool_protocol = "tags" }]
    "#;
    let (settings, warnings) = parse_toml(text, Path::new("/c/config.toml"), Scope::User);
    let names: Vec<&str> = settings.providers.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["local", "typo"]);
    let local = &settings.providers[0];
    assert_eq!(local.base_url, "http://localhost:11434/v1");
    assert_eq!(local.api_key_env.as_deref(), Some("LOCAL_API_KEY"));
    assert_eq!(local.models.len(), 2);
    let qwen = &local.models[0];
    assert_eq!(qwen.tool_protocol, ToolProtocol::Text);
    assert_eq!(qwen.context_tokens, Some(32768));
    assert_eq!(qwen.extra["temperature"], 0.2);
    assert_eq!(qwen.extra["options"]["num_ctx"], 8192);
    assert!(!qwen.extra.contains_key("stream"));
    assert_eq!(local.models[1].tool_protocol, ToolProtocol::Native);
    assert!(settings.providers[1].models.is_empty());
    let said = warnings.join("\n");
    for expected in [
        "provider `local`: model `qwen2.5-coder`: `extra.stream` is ignored",
        "model `tiny` was skipped: `context_tokens` must be at least 1000",
        "provider `deepseek` was skipped: `deepseek` is built in",
        "provider `badkey` was skipped: `api_key_env` names `PATH`",
        "provider `noproto` was skipped: `base_url` must be http or https",
        "provider `typo`: ",
    ] {
        assert!(said.contains(expected), "{expected}\n{said}");
    }
    assert_eq!(warnings.len(), 6, "{said}");
}

#[test]
fn providers_come_from_both_files_and_their_key_variables_are_known_before_trust() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    std::fs::write(
        &user,
        "[providers.a]\nbase_url = \"http://a\"\napi_key_env = \"A_KEY\"\n",
    )
    .unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join(PROJECT_FILE),
        "[providers.b]\nbase_url = \"http://b\"\napi_key_env = \"B_TOKEN\"\n",
    )
    .unwrap();
    let files = SettingsFiles {
        user: Some(user),
        project,
    };
    let names = |s: &Settings| {
        s.providers
            .iter()
            .map(|p| p.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(names(&Settings::load(&files, false)), ["a"]);
    assert_eq!(names(&Settings::load(&files, true)), ["a", "b"]);
    assert_eq!(key_variables(&files), ["A_KEY", "B_TOKEN"]);
}

#[test]
fn command_rules_come_from_the_user_file_and_a_projects_are_ignored_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    std::fs::write(
        &user,
        "[commands]\nallow = [\"cargo test\", \"git status\", 3]\ndeny = []\n",
    )
    .unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    std::fs::write(
        project.join(PROJECT_FILE),
        "[commands]\nallow = [\"curl\", \"sh\"]\n",
    )
    .unwrap();
    let files = SettingsFiles {
        user: Some(user.clone()),
        project: project.clone(),
    };
    let settings = Settings::load(&files, true);
    let texts: Vec<&str> = settings
        .allowed_commands
        .iter()
        .map(|a| a.text.as_str())
        .collect();
    assert_eq!(
        texts,
        ["cargo test", "git status"],
        "the project's never count"
    );
    assert!(settings.allowed_commands.iter().all(|a| a.file == user));
    let said = settings.warnings.join("\n");
    assert!(
        said.contains("miniclaw.toml: [commands] was ignored: command rules are read only from your own config.toml"),
        "{said}"
    );
    assert!(said.contains("`3` is not a string"), "{said}");
    assert!(said.contains("unknown key `deny`"), "{said}");
    assert_eq!(settings.warnings.len(), 3, "{said}");
    let (_, warnings) = parse_toml(
        "[commands]\nallow = \"cargo test\"\n",
        Path::new("/c/config.toml"),
        Scope::User,
    );
    assert!(
        warnings[0].contains("must be a list of strings"),
        "{warnings:?}"
    );
}

#[test]
fn run_command_settings_come_from_the_persons_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    std::fs::write(
        &user,
        "[run_command]\ntimeout_sec = 30\nread = [\"/opt/sdk\"]\nenv = { RUST_BACKTRACE = \"1\" }\n",
    )
    .unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    // A cloned repository widening its own jail.
    std::fs::write(
        project.join(PROJECT_FILE),
        "[run_command]\nread = [\"~/.ssh\"]\nmemory_mb = 999999\n",
    )
    .unwrap();
    let files = SettingsFiles {
        user: Some(user.clone()),
        project,
    };
    let trusted = Settings::load(&files, true);
    assert_eq!(trusted.run_command.timeout_sec, Some(30));
    assert_eq!(trusted.run_command.read, ["/opt/sdk"]);
    assert_eq!(trusted.run_command.memory_mb, None);
    assert!(
        trusted
            .warnings
            .iter()
            .any(|w| w.contains("[run_command] is ignored here")),
        "{:?}",
        trusted.warnings
    );
    // A field MiniClaw does not know is said, and the table is not half-used.
    std::fs::write(&user, "[run_command]\ntimeout = 5\n").unwrap();
    let typo = Settings::load(&files, false);
    assert_eq!(typo.run_command, RunCommandSettings::default());
    assert!(
        typo.warnings
            .iter()
            .any(|w| w.contains("unknown field `timeout`")),
        "{:?}",
        typo.warnings
    );
}

#[test]
fn context_and_deepseek_tables_are_read_from_the_users_file_only() {
    let text = "[context]\ncompact_at = 70\n[deepseek]\nreasoning_effort = \"max\"\n";
    let (user, warnings) = parse_toml(text, Path::new("config.toml"), Scope::User);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(user.context.unwrap().compact_at, Some(70));
    assert_eq!(
        user.deepseek.unwrap().reasoning_effort.as_deref(),
        Some("max")
    );
    let (project, warnings) = parse_toml(text, Path::new("miniclaw.toml"), Scope::Project);
    assert!(project.context.is_none() && project.deepseek.is_none());
    assert_eq!(warnings.len(), 2);
    assert!(
        warnings[0].contains("[context] is ignored here"),
        "{warnings:?}"
    );
}

#[test]
fn a_share_past_100_or_an_unknown_effort_is_named_and_skipped() {
    let text = "[context]\ncompact_at = 150\n[deepseek]\nreasoning_effort = \"low\"\n";
    let (user, warnings) = parse_toml(text, Path::new("config.toml"), Scope::User);
    assert!(user.context.is_none() && user.deepseek.is_none());
    assert!(
        warnings[0].contains("compact_at is a percent"),
        "{warnings:?}"
    );
    assert!(warnings[1].contains("`high` or `max`"), "{warnings:?}");
}

#[test]
fn cost_settings_come_from_the_persons_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("config.toml");
    std::fs::write(
        &user,
        r#"
[cost]
currency = "cny"

[cost.models."deepseek-v4-pro"]
cache_hit = 0.1
cache_miss = 3
output = 12.5

[cost.models."Ollama/Qwen"]
cache_hit = 0
cache_miss = 0
output = 0
"#,
    )
    .unwrap();
    let project = dir.path().join("proj");
    std::fs::create_dir(&project).unwrap();
    // A cloned repository making a model look free.
    std::fs::write(
        project.join(PROJECT_FILE),
        "[cost]\ncurrency = \"USD\"\n[cost.models.\"deepseek-v4-pro\"]\ncache_hit = 0\ncache_miss = 0\noutput = 0\n",
    )
    .unwrap();
    let files = SettingsFiles {
        user: Some(user),
        project,
    };
    let trusted = Settings::load(&files, true);
    assert_eq!(trusted.cost.currency, Currency::Cny);
    assert_eq!(
        trusted.cost.models.get("deepseek-v4-pro"),
        Some(&ModelPrices {
            cache_hit: 0.1,
            cache_miss: 3.0,
            output: 12.5
        })
    );
    // Names are kept lower-cased: a model is found whatever case the file wrote.
    assert!(trusted.cost.models.contains_key("ollama/qwen"));
    assert_eq!(trusted.warnings.len(), 1, "{:?}", trusted.warnings);
    assert!(
        trusted.warnings[0].contains("miniclaw.toml: [cost] is ignored here"),
        "{:?}",
        trusted.warnings
    );
    assert_eq!(Settings::load(&files, false).cost, trusted.cost);
}

#[test]
fn a_broken_cost_entry_is_named_and_skipped_and_the_rest_counts() {
    let text = r#"
[cost]
currency = "EUR"
colour = "green"

[cost.models.good]
cache_hit = 0.01
cache_miss = 0.2
output = 0.8

[cost.models.missing]
cache_hit = 0.01
output = 0.8

[cost.models.negative]
cache_hit = -1
cache_miss = 0.2
output = 0.8

[cost.models.words]
cache_hit = "cheap"
cache_miss = 0.2
output = 0.8

[cost.models.typo]
cache_hits = 0.01
cache_miss = 0.2
output = 0.8

[cost.models.huge]
cache_hit = 0.01
cache_miss = 0.2
output = 1e300
"#;
    let (file, warnings) = parse_toml(text, Path::new("/home/me/config.toml"), Scope::User);
    let cost = file.cost.unwrap();
    assert_eq!(cost.currency, Currency::Usd);
    assert_eq!(cost.models.keys().collect::<Vec<_>>(), ["good"]);
    let said = |needle: &str| {
        assert!(
            warnings
                .iter()
                .any(|w| w.starts_with("/home/me/config.toml: [cost") && w.contains(needle)),
            "{needle:?} not in {warnings:?}"
        );
    };
    said("currency must be \"USD\" or \"CNY\"");
    said("unknown key `colour`");
    said("[cost.models.\"missing\"] was skipped: `cache_miss` is missing");
    said("[cost.models.\"negative\"] was skipped: `cache_hit` must be from 0");
    said("[cost.models.\"words\"] was skipped: `cache_hit` must be a number");
    said("[cost.models.\"typo\"] was skipped: unknown key `cache_hits`");
    said("[cost.models.\"huge\"] was skipped: `output` must be from 0");
    assert_eq!(warnings.len(), 7, "{warnings:?}");
}
