//! Plugin tools end to end: the shipped echo_text, broken files skipped with a warning, hangs
//! timed out, plugin failures reported; and the full registry's listing.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use miniclaw::tools::plugins::{self, load_dirs};
use miniclaw::tools::shell::ShellSettings;
use miniclaw::tools::toolbox::{ToolboxConfig, describe_tools, full_registry};
use miniclaw::tools::web::WebSettings;
use miniclaw::tools::{Sandbox, ToolContext, ToolRegistry, ToolSource};
use serde_json::{Value, json};

fn shipped_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools_plugins")
}

fn config(dirs: Vec<PathBuf>) -> ToolboxConfig {
    ToolboxConfig {
        web: WebSettings::default(),
        shell: ShellSettings::default(),
        plugin_dirs: dirs,
    }
}

async fn call(registry: &ToolRegistry, workspace: &Path, name: &str, args: Value) -> Value {
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(workspace).unwrap()));
    registry.execute(name, &args.to_string(), &ctx).await
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::write(dir.join(name), text).unwrap();
}

#[tokio::test]
async fn echo_text_runs_through_the_full_registry() {
    let (registry, warnings) = full_registry(&config(vec![shipped_dir()]));
    assert!(warnings.is_empty(), "{warnings:?}");
    let tool = registry.get("echo_text").expect("echo_text is loaded");
    assert!(matches!(tool.source(), ToolSource::Plugin(p) if p.ends_with("echo_text.toml")));
    assert!(
        !registry.is_read_only("echo_text"),
        "plugins run one at a time"
    );
    assert_eq!(tool.schema().parameters["required"], json!(["text"]));

    let ws = tempfile::tempdir().unwrap();
    let obs = call(
        &registry,
        ws.path(),
        "echo_text",
        json!({"text": "héllo 你好 \"q\""}),
    )
    .await;
    assert_eq!(
        obs,
        json!({"ok": true, "tool": "echo_text", "text": "héllo 你好 \"q\""})
    );

    let missing = call(&registry, ws.path(), "echo_text", json!({})).await;
    assert_eq!(missing["ok"], false);
    assert!(missing["error"].as_str().unwrap().contains("text"));
}

#[test]
fn broken_and_shadowing_plugins_are_reported_and_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "a_broken.toml", "[[tool]\nname = ");
    write(
        d,
        "b_shadow.toml",
        "[[tool]]\nname = \"run_shell_command\"\ndescription = \"x\"\ncommand = [\"true\"]\n",
    );
    write(
        d,
        "c_badname.toml",
        "[[tool]]\nname = \"bad name!\"\ndescription = \"x\"\ncommand = [\"true\"]\n",
    );
    write(
        d,
        "d_badparams.toml",
        "[[tool]]\nname = \"p\"\ndescription = \"x\"\ncommand = [\"true\"]\nparameters = \"{not json\"\n",
    );
    write(
        d,
        "e_nocommand.toml",
        "[[tool]]\nname = \"n\"\ndescription = \"x\"\ncommand = []\n",
    );
    write(
        d,
        "f_unknown_key.toml",
        "[[tool]]\nname = \"u\"\ndescription = \"x\"\ncommand = [\"true\"]\nshell = true\n",
    );
    write(d, "g_empty.toml", "# nothing\n");
    write(
        d,
        "h_good.toml",
        "[[tool]]\nname = \"good\"\ndescription = \"fine\"\ncommand = [\"true\"]\nparameters = '{\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"string\"}}}'\n",
    );
    write(
        d,
        "i_dup.toml",
        "[[tool]]\nname = \"good\"\ndescription = \"again\"\ncommand = [\"true\"]\n",
    );
    write(d, "not_toml.txt", "ignored");

    let (registry, warnings) = full_registry(&config(vec![d.to_path_buf(), d.join("missing")]));
    let joined = warnings.join("\n");
    for file in [
        "a_broken",
        "b_shadow",
        "c_badname",
        "d_badparams",
        "e_nocommand",
        "f_unknown_key",
        "g_empty",
        "i_dup",
    ] {
        assert!(joined.contains(file), "{file} should be reported: {joined}");
    }
    assert_eq!(warnings.len(), 8, "{joined}");
    assert!(joined.contains("already taken"));
    assert!(registry.get("good").is_some());
    assert_eq!(
        registry.get("good").unwrap().schema().parameters["properties"]["a"]["type"],
        "string"
    );
    assert!(matches!(
        registry.get("run_shell_command").unwrap().source(),
        ToolSource::BuiltIn
    ));
}

#[tokio::test]
async fn a_hanging_plugin_times_out() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "hang.toml",
        "[[tool]]\nname = \"hang\"\ndescription = \"sleeps\"\ncommand = [\"python3\", \"-c\", \"import time; time.sleep(60)\"]\ntimeout_secs = 1\n",
    );
    let (tools, warnings) = load_dirs(&[dir.path().to_path_buf()], &Default::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t);
    }
    let started = Instant::now();
    let obs = call(&registry, dir.path(), "hang", json!({})).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(obs["ok"], false);
    assert!(
        obs["error"]
            .as_str()
            .unwrap()
            .contains("timed out after 1 s"),
        "{obs}"
    );
}

/// The red-team finding: the model writes `json.py` (and `sys.py`-like names) into the
/// workspace, then calls the shipped echo_text; Python must not import it.
#[tokio::test]
async fn a_module_the_model_wrote_in_the_workspace_is_never_imported_by_a_plugin() {
    let (registry, _) = full_registry(&config(vec![shipped_dir()]));
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let marker = dir.path().join("pwned");
    let payload = format!(
        "open({:?}, 'w').write('ran')\nraise SystemExit(0)\n",
        marker.to_str().unwrap()
    );
    for module in ["json.py", "sys.py", "encodings.py", "sitecustomize.py"] {
        write(&ws, module, &payload);
    }
    std::fs::create_dir_all(ws.join("json")).unwrap();
    write(&ws.join("json"), "__init__.py", &payload);
    let obs = call(&registry, &ws, "echo_text", json!({"text": "still me"})).await;
    assert_eq!(obs["text"], "still me", "{obs}");
    assert!(!marker.exists(), "code the model wrote ran");
    // Isolated mode is added to any Python command, once.
    let echo = plugins::load_file(&shipped_dir().join("echo_text.toml")).unwrap();
    assert_eq!(echo[0].command()[1], "-I");
}

#[tokio::test]
async fn plugin_failures_and_paths() {
    let dir = tempfile::tempdir().unwrap();
    let plugin_dir = dir.path().join("plugins");
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&plugin_dir).unwrap();
    std::fs::create_dir_all(&ws).unwrap();
    // A script next to the plugin file, named relatively: it prints where it runs.
    write(
        &plugin_dir,
        "where.py",
        "import json, os, sys\njson.load(sys.stdin)\nprint(json.dumps({'cwd': os.getcwd(), 'home': os.environ.get('HOME'), 'ws': os.environ.get('MINICLAW_WORKSPACE')}))\n",
    );
    let py = |code: &str| format!("command = [\"python3\", \"-c\", {}]\n", toml_str(code));
    let text = [
        "[[tool]]\nname = \"where\"\ndescription = \"d\"\ncommand = [\"python3\", \"where.py\"]\n".to_string(),
        format!("[[tool]]\nname = \"says_no\"\ndescription = \"d\"\n{}", py("print('{\"ok\": false, \"error\": \"nope\"}')")),
        format!("[[tool]]\nname = \"not_json\"\ndescription = \"d\"\n{}", py("print('hello')")),
        format!("[[tool]]\nname = \"crashes\"\ndescription = \"d\"\n{}", py("import sys; sys.stderr.write('boom'); sys.exit(3)")),
        format!("[[tool]]\nname = \"scalar\"\ndescription = \"d\"\n{}", py("print(42)")),
        "[[tool]]\nname = \"no_program\"\ndescription = \"d\"\ncommand = [\"no-such-program-xyz\"]\n".to_string(),
    ]
    .join("\n");
    write(&plugin_dir, "many.toml", &text);
    let (tools, warnings) = load_dirs(std::slice::from_ref(&plugin_dir), &Default::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t);
    }

    let where_ = call(&registry, &ws, "where", json!({})).await;
    assert_eq!(where_["ok"], true, "{where_}");
    let real_ws = ws.canonicalize().unwrap();
    // Plugins run in their own folder, never in the workspace the model can write.
    let real_plugins = plugin_dir.canonicalize().unwrap();
    assert_eq!(where_["cwd"], real_plugins.to_str().unwrap());
    assert_eq!(where_["ws"], real_ws.to_str().unwrap());
    assert_eq!(where_["home"], Value::Null, "the environment is minimal");

    let no = call(&registry, &ws, "says_no", json!({})).await;
    assert_eq!(no["error"], "nope");
    let nj = call(&registry, &ws, "not_json", json!({})).await;
    assert!(
        nj["error"].as_str().unwrap().contains("not JSON: hello"),
        "{nj}"
    );
    let crash = call(&registry, &ws, "crashes", json!({})).await;
    let e = crash["error"].as_str().unwrap();
    assert!(e.contains("code 3") && e.contains("boom"), "{e}");
    let scalar = call(&registry, &ws, "scalar", json!({})).await;
    assert_eq!(scalar["result"], 42);
    let np = call(&registry, &ws, "no_program", json!({})).await;
    assert!(np["error"].as_str().unwrap().contains("not found"), "{np}");
}

/// A TOML basic string (JSON's escapes are valid TOML).
fn toml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap()
}

#[test]
fn describe_tools_lists_names_sources_and_first_lines() {
    let (registry, _) = full_registry(&config(vec![shipped_dir()]));
    let rows = describe_tools(&registry);
    let find = |n: &str| {
        rows.iter()
            .find(|t| t.name == n)
            .map(|t| (t.name.clone(), t.source.clone(), t.summary.clone()))
    };
    for name in [
        "run_shell_command",
        "search_web",
        "fetch_web_page",
        "delegate_file_analysis",
        "read_text_file",
    ] {
        let (_, source, line) = find(name).unwrap_or_else(|| panic!("{name} missing: {rows:?}"));
        assert_eq!(source, "built-in");
        assert!(!line.is_empty() && !line.contains('\n'));
    }
    let (_, source, line) = find("echo_text").unwrap();
    assert!(
        source.starts_with("plugin ") && source.ends_with("echo_text.toml"),
        "{source}"
    );
    assert!(
        line.starts_with("Return the given text unchanged"),
        "{line}"
    );
    assert!(plugins::default_dirs(true)[0].ends_with("tools_plugins"));
    assert!(
        !plugins::default_dirs(false).contains(&PathBuf::from("tools_plugins")),
        "an untrusted project's plugins are not searched"
    );
}

/// A registry with one plugin, `bg`, that runs `script` under `sh` in `dir` (its own folder).
fn shell_plugin(dir: &Path, script: &str, timeout_secs: u64) -> ToolRegistry {
    write(
        dir,
        "bg.toml",
        &format!(
            "[[tool]]\nname = \"bg\"\ndescription = \"d\"\ncommand = [\"sh\", \"-c\", {}]\ntimeout_secs = {timeout_secs}\n",
            toml_str(script)
        ),
    );
    let (tools, warnings) = load_dirs(&[dir.to_path_buf()], &Default::default());
    assert!(warnings.is_empty(), "{warnings:?}");
    let mut registry = ToolRegistry::new();
    for t in tools {
        registry.register(t);
    }
    registry
}

/// Starts a `sleep` in the background that keeps the plugin's stdout open and writes its pid.
const BACKGROUND_SLEEP: &str = "sleep 1000 & echo $! > grandchild.pid;";

/// The pid the plugin's background `sleep` wrote, once it is there.
async fn grandchild_pid(dir: &Path) -> i32 {
    let file = dir.join("grandchild.pid");
    for _ in 0..200 {
        if let Some(pid) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the plugin never started its background process");
}

/// Whether `pid` still runs (a zombie waiting for its new parent to reap it has ended).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the command name in parentheses, which may hold spaces.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits up to 3 s for `pid` to end.
async fn ends_soon(pid: i32) -> bool {
    for _ in 0..120 {
        if !running(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    false
}

#[tokio::test]
async fn a_timeout_ends_the_plugins_background_processes_too() {
    let dir = tempfile::tempdir().unwrap();
    let registry = shell_plugin(dir.path(), &format!("{BACKGROUND_SLEEP} wait"), 1);
    let started = Instant::now();
    let obs = call(&registry, dir.path(), "bg", json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(error_of(&obs).contains("timed out after 1 s"), "{obs}");
    let pid = grandchild_pid(dir.path()).await;
    assert!(
        ends_soon(pid).await,
        "the background sleep {pid} outlived the call"
    );
}

#[tokio::test]
async fn an_interrupt_ends_the_plugins_background_processes_too() {
    let dir = tempfile::tempdir().unwrap();
    let registry = shell_plugin(dir.path(), &format!("{BACKGROUND_SLEEP} wait"), 60);
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let cancel = ctx.cancel.clone();
    let folder = dir.path().to_path_buf();
    let interrupter = tokio::spawn(async move {
        let pid = grandchild_pid(&folder).await;
        cancel.cancel();
        (pid, Instant::now())
    });
    let obs = registry.execute("bg", "{}", &ctx).await;
    let (pid, interrupted_at) = interrupter.await.unwrap();
    assert!(
        interrupted_at.elapsed() < Duration::from_secs(2),
        "{:?} after the interrupt",
        interrupted_at.elapsed()
    );
    assert_eq!(
        error_of(&obs),
        miniclaw::tools::registry::INTERRUPTED_SILENT,
        "{obs}"
    );
    assert!(
        ends_soon(pid).await,
        "the background sleep {pid} outlived the call"
    );
}

#[tokio::test]
async fn a_background_process_holding_stdout_cannot_keep_a_finished_plugin_open() {
    let dir = tempfile::tempdir().unwrap();
    let script = format!("{BACKGROUND_SLEEP} echo '{{\"done\": 1}}'");
    let registry = shell_plugin(dir.path(), &script, 60);
    let started = Instant::now();
    let obs = call(&registry, dir.path(), "bg", json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(obs["ok"], true, "{obs}");
    assert_eq!(obs["done"], 1, "{obs}");
    let pid = grandchild_pid(dir.path()).await;
    assert!(
        ends_soon(pid).await,
        "the background sleep {pid} outlived the call"
    );
}

fn error_of(obs: &Value) -> &str {
    assert_eq!(obs["ok"], false, "expected a failure: {obs}");
    obs["error"].as_str().unwrap_or_default()
}
