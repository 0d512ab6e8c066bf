//! Configuration: `.env` files, the environment and flags, merged into one `Config`.
//!
//! Precedence: flags, then real environment variables, then `./.env`, then
//! `<config dir>/miniclaw/.env`. The API key is held privately and never printed.

use std::path::PathBuf;

use clap::Parser;

use crate::llm::{Preset, Providers};
use crate::paths::{config_dir, data_dir};

/// The default DeepSeek endpoint.
pub const DEFAULT_BASE_URL: &str = "https://api.deepseek.com";

/// Command-line flags (each with its environment variable where one exists).
#[derive(Parser, Debug, Clone)]
#[command(
    name = "miniclaw-tui",
    version,
    about = "MiniClaw: a full-screen terminal agent. A DeepSeek model reasons, calls sandboxed local tools and answers, live.",
    after_help = "Environment: DEEPSEEK_API_KEY (required to talk to the model), DEEPSEEK_MODEL, DEEPSEEK_BASE_URL, \
MINICLAW_PROVIDER, MINICLAW_WORKSPACE, MINICLAW_CONTEXT_TOKENS, MINICLAW_THEME, MINICLAW_LOG, SERPAPI_KEY and SERPAPI_* for web search. They may also be set in <config dir>/miniclaw/.env \
(the recommended place for keys) or ./.env; real environment variables win."
)]
pub struct Cli {
    /// The workspace folder the tools are sandboxed to (created if missing); `-C .` works in a
    /// project folder, whose .env* files the tools never reach.
    /// Default: `./workspace` where it exists (this repository's layout), else the folder
    /// MiniClaw starts in.
    #[arg(short = 'C', long, env = "MINICLAW_WORKSPACE")]
    pub workspace: Option<PathBuf>,
    /// The model to start with: deepseek-flash (or its legacy name deepseek-v4-flash) or
    /// deepseek-v4-pro, any other name, or PROVIDER/MODEL (default: the one chosen last time,
    /// else deepseek-flash; DeepSeek's
    /// from DEEPSEEK_MODEL when no other provider is chosen).
    #[arg(long)]
    pub model: Option<String>,
    /// The provider to start with: deepseek (built in) or a [providers.NAME] of config.toml or
    /// miniclaw.toml (default: the one chosen last time). Alone, it takes the provider's first
    /// model.
    #[arg(long, env = "MINICLAW_PROVIDER", value_name = "NAME")]
    pub provider: Option<String>,
    /// At most this many model calls per turn.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u16).range(1..=100))]
    pub max_steps: u16,
    /// The most prompt tokens a request may carry, for every model (default: the model's own
    /// window: 1,000,000 for DeepSeek's presets, a provider model's context_tokens, else
    /// 100,000). Long sessions are compacted before they reach it.
    #[arg(long, env = "MINICLAW_CONTEXT_TOKENS", value_parser = clap::value_parser!(u32).range(1_000..))]
    pub context_tokens: Option<u32>,
    /// The pro preset's reasoning effort: high or max (default: config.toml's
    /// [deepseek] reasoning_effort, else high).
    #[arg(long, env = "MINICLAW_REASONING_EFFORT", value_parser = ["high", "max"], value_name = "EFFORT")]
    pub reasoning_effort: Option<String>,
    /// Run one turn without the screen: the answer goes to stdout, the step trace to stderr.
    /// `-p -` reads the prompt from stdin, as does a prompt piped in without -p.
    #[arg(short = 'p', long = "print", value_name = "PROMPT")]
    pub print: Option<String>,
    /// Headless output on stdout: text (the answer), json (one object at the end) or stream-json
    /// (one object per event, then the result).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub output_format: Option<OutputFormat>,
    /// The colour theme: dark, light, or a path to a theme file.
    #[arg(long, env = "MINICLAW_THEME")]
    pub theme: Option<String>,
    /// Leave the mouse to the terminal (native selection; no wheel scrolling).
    #[arg(long)]
    pub no_mouse: bool,
    /// List every tool with its source and description, then exit.
    #[arg(long)]
    pub list_tools: bool,
    /// Which calls run without asking: auto (all inside the sandbox), ask (changes, commands
    /// and the web ask first), read-only (those are refused). Default: the one chosen last
    /// time, else auto.
    #[arg(long, value_enum, value_name = "MODE", env = "MINICLAW_APPROVAL")]
    pub approval: Option<crate::approval::ApprovalMode>,
    /// Start with a new session; the last one is archived (/resume or --resume reopens it).
    /// Headless runs (`-p`) start a new one anyway, unless `--continue` or `--resume` says not.
    #[arg(long, conflicts_with = "resume")]
    pub new: bool,
    /// Go on with the newest session of this folder (the full-screen UI does so anyway;
    /// headless runs start a new one without it).
    #[arg(short = 'c', long = "continue", conflicts_with_all = ["new", "resume"])]
    pub continue_session: bool,
    /// Reopen an earlier session of this workspace by its id or title (or a part of either);
    /// without a value, the full-screen UI opens the session picker and headless mode takes the
    /// newest.
    #[arg(long, value_name = "ID|TITLE", num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,
    /// Trust this folder's plugin tools (./tools_plugins), MCP servers (./miniclaw.toml,
    /// ./.mcp.json), skills and slash commands (./.agents) without asking, and remember it.
    #[arg(long)]
    pub trust: bool,
    /// Headless mode: plan the prompt first (read-only tools, the planner model), then carry
    /// the plan out item by item (the executor model), stopping at an item that fails.
    #[arg(long)]
    pub plan: bool,
    /// The model /plan's planner uses (default: deepseek-v4-pro).
    #[arg(long, env = "MINICLAW_PLANNER_MODEL", value_name = "NAME")]
    pub planner_model: Option<String>,
    /// The model /plan's executor uses (default: deepseek-flash).
    #[arg(long, env = "MINICLAW_EXECUTOR_MODEL", value_name = "NAME")]
    pub executor_model: Option<String>,
}

pub use crate::approval::ApprovalSource;

/// How the workspace was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkspaceOrigin {
    /// `-C DIR`, `--workspace DIR` or `MINICLAW_WORKSPACE`.
    Named,
    /// `./workspace`, which exists (this repository's own layout).
    RepoDefault,
    /// The folder MiniClaw was started in (nothing named, no `./workspace`).
    StartFolder,
}

/// The workspace the flags name, else `./workspace` where it is a folder, else `cwd`.
pub fn choose_workspace(
    named: Option<&std::path::Path>,
    cwd: &std::path::Path,
) -> (PathBuf, WorkspaceOrigin) {
    match named {
        Some(dir) => (dir.to_path_buf(), WorkspaceOrigin::Named),
        // A real folder only: a cloned repository's `workspace` link (to `~`, to `/`) must not
        // pass for this layout, which is never asked about.
        None if std::fs::symlink_metadata(cwd.join("workspace")).is_ok_and(|m| m.is_dir()) => {
            (PathBuf::from("./workspace"), WorkspaceOrigin::RepoDefault)
        }
        None => (cwd.to_path_buf(), WorkspaceOrigin::StartFolder),
    }
}

/// The folder in MiniClaw's data dir that holds `workspace`'s state when it is not kept inside
/// it: `<data dir>/projects/<folder name>-<12 hex digits of the canonical path's SHA-256>`.
pub fn project_state_dir(data_dir: &std::path::Path, workspace: &std::path::Path) -> PathBuf {
    use sha2::{Digest, Sha256};
    let canonical = crate::remembered::folders::canonical(workspace);
    let digest = Sha256::digest(canonical.as_os_str().as_encoded_bytes());
    let short: String = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
    let name: String = canonical
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "root".into())
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    data_dir.join("projects").join(format!("{name}-{short}"))
}

/// Where `workspace`'s history lives. Inside it when it already holds MiniClaw's files (the old
/// layout, kept), else in the data dir when that already holds this folder's state, else inside
/// it when it was named or is `./workspace` (as before), else (the start folder by default, a
/// person's repository) in the data dir, so their folder is not littered.
pub fn state_dir(
    workspace: &std::path::Path,
    origin: WorkspaceOrigin,
    data_dir: Option<&std::path::Path>,
) -> PathBuf {
    let present = |p: PathBuf| std::fs::symlink_metadata(p).is_ok();
    if present(workspace.join(crate::paths::HISTORY_FILE)) || present(workspace.join(".miniclaw")) {
        return workspace.to_path_buf();
    }
    let Some(data_dir) = data_dir else {
        return workspace.to_path_buf();
    };
    let own = project_state_dir(data_dir, workspace);
    if present(own.clone()) {
        return own;
    }
    match origin {
        WorkspaceOrigin::Named | WorkspaceOrigin::RepoDefault => workspace.to_path_buf(),
        WorkspaceOrigin::StartFolder => own,
    }
}

/// What headless mode writes on stdout.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    /// The answer alone (the step trace goes to stderr).
    #[default]
    Text,
    /// One JSON object when the turn is over.
    Json,
    /// One JSON object per line for every event as it happens, then the result.
    StreamJson,
}

/// Everything the program needs to start.
#[derive(Clone)]
pub struct Config {
    /// The flags as given.
    pub cli: Cli,
    /// The DeepSeek API key, if set.
    api_key: Option<String>,
    /// DeepSeek's base URL as the person chose it (keys typed or saved later go there only).
    pub base_url: String,
    /// The base URL of the project's own key (`./.env` with both), for that key alone.
    pub key_url: Option<String>,
    /// The starting preset (DeepSeek's until [`Config::choose_model`] has read the providers).
    pub preset: Preset,
    /// The configured providers (none until [`Config::choose_model`]).
    pub providers: Providers,
    /// The approval mode at start.
    pub approval: crate::approval::ApprovalMode,
    /// Where that mode came from.
    pub approval_source: ApprovalSource,
    /// The workspace folder the tools are sandboxed to.
    pub workspace: PathBuf,
    /// How the workspace was chosen.
    pub workspace_origin: WorkspaceOrigin,
    /// Where this workspace's history, archived sessions, checkpoints and lock live.
    state_dir: PathBuf,
    /// What was remembered for this workspace (the yes to working there, its approval mode).
    pub folder_record: crate::remembered::folders::FolderRecord,
    /// Whether the commands of the folder MiniClaw starts in may run (see `trust`).
    pub project_trusted: bool,
    /// The pro preset's reasoning effort (the flag, else `[deepseek]`, else high).
    pub reasoning_effort: crate::llm::ReasoningEffort,
    /// When a session is compacted, as a percent of the context budget (`[context]
    /// compact_at`; 0: never by itself).
    pub compact_at: u8,
    /// Problems found while reading the configuration, shown at start.
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("cli", &self.cli)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("base_url", &self.base_url)
            .field("key_url", &self.key_url)
            .field("preset", &self.preset)
            .finish()
    }
}

/// Where MiniClaw reads its own configuration: `./.env`, `./tools_plugins/`, `./miniclaw.toml`,
/// `./.mcp.json` and the config folder. Tools may not write there (see
/// `Sandbox::with_protected_config`).
pub fn configuration_paths() -> Vec<PathBuf> {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let mut paths = vec![
        cwd.join(".env"),
        cwd.join("tools_plugins"),
        cwd.join(crate::settings::PROJECT_FILE),
        cwd.join(crate::settings::PROJECT_MCP_JSON),
    ];
    // The code a project's MCP servers run: what the model writes there would run outside the
    // sandbox at the next start or restart.
    paths.extend(crate::trust::server_code_paths(&cwd));
    paths.extend(config_dir());
    // The data folder holds the trust decisions (and logs).
    paths.extend(data_dir());
    paths
}

/// Reads the project's `./.env` and `<config dir>/miniclaw/.env` (see `env_files`: the
/// project's file counts only for MiniClaw's own settings and never enters the environment).
/// Call first thing in `main`, after `paths::fix` and before any thread starts.
pub fn load_env_files() {
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    crate::env_files::load(
        &cwd.join(".env"),
        config_dir().map(|d| d.join(".env")).as_deref(),
    );
}

/// Where DeepSeek's requests go: the person's `DEEPSEEK_BASE_URL` (the environment, then their
/// own `.env`), else the default; and, when the key in use comes from the project's `./.env`
/// and that file names a base URL, that URL for that key alone. A key from anywhere else never
/// goes to a URL a project file chose. Returns (the person's URL, the project key's URL,
/// warnings).
fn deepseek_urls() -> (String, Option<String>, Vec<String>) {
    use crate::env_files::Origin;
    let files = crate::env_files::loaded();
    let name = "DEEPSEEK_BASE_URL";
    let personal = files.personal(name);
    let user_url = personal
        .clone()
        .unwrap_or_else(|| DEFAULT_BASE_URL.to_string());
    let mut warnings = Vec::new();
    let Some(project_url) = files.project_value(name) else {
        return (user_url, None, warnings);
    };
    let own_key = crate::secrets::origin("DEEPSEEK_API_KEY") == Some(Origin::Project);
    if own_key && !files.in_environment(name) {
        return (user_url, Some(project_url.trim().to_string()), warnings);
    }
    if !files.in_environment(name) {
        warnings.push(format!(
            "{} sets {name} without a DeepSeek key of its own in use: it was ignored, so a key from elsewhere never goes to a server a project chose. Requests go to {user_url}.",
            files
                .project_path()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "./.env".into()),
        ));
    }
    (user_url, None, warnings)
}

impl Config {
    /// Parses the flags and reads the environment (call `load_env_files` first). `--help` names the
    /// log file, which is known only at run time.
    pub fn from_env_and_args() -> Self {
        use clap::{CommandFactory, FromArgMatches};
        let log = crate::paths::log_path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "none (no data directory)".into());
        let command = Cli::command();
        let text = format!(
            "{}\n\nLog file: {log} (level from MINICLAW_LOG: error, warn, info, debug, trace).",
            command
                .get_after_help()
                .map(|s| s.to_string())
                .unwrap_or_default()
        );
        let command = command.after_help(text.clone()).after_long_help(text);
        let matches = command.get_matches();
        match Cli::from_arg_matches(&matches) {
            Ok(cli) => Self::from_cli(cli),
            Err(e) => e.exit(),
        }
    }

    /// Builds the config from parsed flags and the environment.
    pub fn from_cli(cli: Cli) -> Self {
        let api_key = crate::secrets::get("DEEPSEEK_API_KEY")
            .map(|k| k.trim().to_string())
            .filter(|k| !k.is_empty());
        let (base_url, key_url, url_warnings) = deepseek_urls();
        let mut warnings = crate::env_files::loaded().warnings.clone();
        warnings.extend(url_warnings);
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let (workspace, workspace_origin) = choose_workspace(cli.workspace.as_deref(), &cwd);
        let state_dir = state_dir(&workspace, workspace_origin, data_dir().as_deref());
        let (folder_record, record_problem) = crate::remembered::folders::path()
            .map(|p| crate::remembered::folders::load(&p, &workspace))
            .unwrap_or_default();
        warnings.extend(record_problem);
        // The flag for this run; else this folder's choice; else auto. The old global choice is
        // not read (see `remembered::Choices::approval`).
        let (approval, approval_source) = match (cli.approval, folder_record.approval) {
            (Some(mode), _) => (mode, ApprovalSource::Flag),
            (None, Some(mode)) => (mode, ApprovalSource::Folder),
            (None, None) => (Default::default(), ApprovalSource::Default),
        };
        // A model given now wins; else the one chosen last time (F2, /model), else flash.
        let remembered = crate::remembered::path().map(|p| crate::remembered::load(&p));
        let preset = starting_model(&cli, remembered.unwrap_or_default(), &Providers::default())
            .unwrap_or(Preset::Flash);
        Self {
            cli,
            api_key,
            base_url,
            key_url,
            preset,
            providers: Providers::default(),
            approval,
            approval_source,
            workspace,
            workspace_origin,
            state_dir,
            folder_record,
            project_trusted: false,
            reasoning_effort: Default::default(),
            compact_at: crate::agent::DEFAULT_COMPACT_AT,
            warnings,
        }
    }

    /// Reads the providers (the project's only once it is trusted: set `project_trusted`
    /// first) and chooses the starting model among them; an unknown `--provider` is an error
    /// that says which providers there are.
    pub fn choose_model(&mut self) -> Result<(), crate::llm::LlmError> {
        let files = crate::settings::SettingsFiles::default_locations();
        // The settings files' own problems are reported once, with the MCP servers'.
        let settings = crate::settings::Settings::load(&files, self.project_trusted);
        let (providers, warnings) = Providers::from_entries(&settings.providers);
        self.warnings.extend(warnings);
        let effort = self
            .cli
            .reasoning_effort
            .as_deref()
            .or(settings.deepseek.reasoning_effort.as_deref());
        self.reasoning_effort = effort
            .and_then(crate::llm::ReasoningEffort::from_name)
            .unwrap_or_default();
        if let Some(share) = settings.context.compact_at {
            self.compact_at = share;
        }
        let remembered = crate::remembered::path()
            .map(|p| crate::remembered::load(&p))
            .unwrap_or_default();
        self.preset = match starting_model(&self.cli, remembered.clone(), &providers) {
            Ok(preset) => preset,
            // DEEPSEEK_MODEL names a model that cannot be used: said as such, not blamed on
            // last time.
            Err(e)
                if self.cli.provider.is_none()
                    && self.cli.model.is_none()
                    && crate::env_files::loaded()
                        .lookup("DEEPSEEK_MODEL")
                        .is_some() =>
            {
                return Err(crate::llm::LlmError::Setup {
                    message: format!("DEEPSEEK_MODEL cannot be used: {e}"),
                    source: None,
                });
            }
            // The model remembered from last time may belong to a provider since removed.
            Err(e) if self.cli.provider.is_none() && self.cli.model.is_none() => {
                self.warnings.push(format!(
                    "The model chosen last time ({}) cannot be used: {e}. Using {}.",
                    remembered.label(),
                    Preset::Flash
                ));
                Preset::Flash
            }
            Err(e) => return Err(e),
        };
        self.providers = providers;
        Ok(())
    }

    /// Why the starting model cannot be asked anything (its provider's key is not set), if so.
    pub fn key_problem(&self) -> Option<crate::llm::LlmError> {
        let client = crate::llm::LlmClient::new(&self.base_url, self.api_key())
            .ok()?
            .with_key(crate::llm::ApiKey::fixed_for(
                self.api_key(),
                self.key_url.clone(),
            ))
            .with_providers(self.providers.clone(), &|var| crate::secrets::get(var));
        client.key_problem(&self.preset)
    }

    /// The API key (for the client only; never print it).
    pub fn api_key(&self) -> Option<String> {
        self.api_key.clone()
    }

    /// Where this workspace's history, archive (`.miniclaw/sessions`), checkpoints and lock
    /// live (see [`state_dir`]).
    pub fn state_dir(&self) -> &std::path::Path {
        &self.state_dir
    }

    /// The active session's file; everything else of the history lies beside it.
    pub fn history_path(&self) -> PathBuf {
        self.state_dir.join(crate::paths::HISTORY_FILE)
    }
}

/// The model to start with: `--provider` and `--model` when given (`DEEPSEEK_MODEL` stands in
/// for `--model` unless another provider is chosen), else the one chosen last time.
fn starting_model(
    cli: &Cli,
    remembered: crate::remembered::Choices,
    providers: &Providers,
) -> Result<Preset, crate::llm::LlmError> {
    let provider = cli.provider.as_deref();
    let deepseek = provider.is_none_or(|p| p.eq_ignore_ascii_case(crate::llm::DEEPSEEK));
    let model = cli.model.clone().or_else(|| {
        deepseek
            .then(|| crate::env_files::loaded().lookup("DEEPSEEK_MODEL"))
            .flatten()
            .map(|(model, _)| model)
            .filter(|m| !m.trim().is_empty())
    });
    if provider.is_some() || model.is_some() {
        // `--provider NAME` alone takes the model last used with that provider.
        let model = model.or_else(|| {
            let same = remembered.provider.as_deref().zip(provider);
            same.filter(|(a, b)| a == b).and(remembered.model.clone())
        });
        return providers.choose(provider, model.as_deref());
    }
    providers.choose(remembered.provider.as_deref(), remembered.model.as_deref())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_parse_with_defaults() {
        let cli = Cli::try_parse_from(["miniclaw-tui", "-p", "hi", "--max-steps", "3"]).unwrap();
        assert_eq!(cli.print.as_deref(), Some("hi"));
        assert_eq!(cli.max_steps, 3);
        assert!(Cli::try_parse_from(["miniclaw-tui", "--max-steps", "0"]).is_err());
        assert_eq!(cli.output_format, None);
    }

    #[test]
    fn output_formats_are_named_as_on_the_command_line() {
        for (name, format) in [
            ("text", OutputFormat::Text),
            ("json", OutputFormat::Json),
            ("stream-json", OutputFormat::StreamJson),
        ] {
            let cli =
                Cli::try_parse_from(["miniclaw-tui", "-p", "-", "--output-format", name]).unwrap();
            assert_eq!(cli.output_format, Some(format));
        }
        assert!(Cli::try_parse_from(["miniclaw-tui", "--output-format", "xml"]).is_err());
    }

    #[test]
    fn dash_capital_c_is_the_workspace() {
        let cli = Cli::try_parse_from(["miniclaw-tui", "-C", "."]).unwrap();
        assert_eq!(cli.workspace, Some(PathBuf::from(".")));
        let long = Cli::try_parse_from(["miniclaw-tui", "--workspace", "proj"]).unwrap();
        assert_eq!(long.workspace, Some(PathBuf::from("proj")));
    }

    #[test]
    fn the_starting_model_follows_the_flags_then_what_was_chosen_last() {
        use crate::llm::{ModelEntry, Provider};
        let providers = Providers::new(vec![Provider {
            name: "local".into(),
            base_url: "http://127.0.0.1:1/v1".into(),
            key_var: None,
            models: vec![ModelEntry::named("a"), ModelEntry::named("b")],
        }]);
        let cli = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("miniclaw-tui").chain(args.iter().copied()))
                .unwrap()
        };
        let last = crate::remembered::Choices {
            model: Some("b".into()),
            provider: Some("local".into()),
            ..Default::default()
        };
        let pick = |args: &[&str]| {
            starting_model(&cli(args), last.clone(), &providers).map(|p| p.to_string())
        };
        assert_eq!(pick(&[]).unwrap(), "local/b");
        assert_eq!(pick(&["--provider", "local"]).unwrap(), "local/b");
        assert_eq!(
            pick(&["--provider", "local", "--model", "a"]).unwrap(),
            "local/a"
        );
        assert_eq!(pick(&["--model", "local/a"]).unwrap(), "local/a");
        assert_eq!(
            pick(&["--model", "deepseek-v4-pro"]).unwrap(),
            "deepseek-v4-pro"
        );
        let unknown = pick(&["--provider", "gone"]).unwrap_err().to_string();
        assert!(unknown.contains("deepseek, local"), "{unknown}");
        // The provider remembered was since removed: an error the caller turns into a notice.
        assert!(starting_model(&cli(&[]), last.clone(), &Providers::default()).is_err());
        assert_eq!(last.label(), "local/b");
    }

    #[test]
    fn the_workspace_is_the_named_one_then_dot_workspace_then_the_start_folder() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path();
        assert_eq!(
            choose_workspace(None, cwd),
            (cwd.to_path_buf(), WorkspaceOrigin::StartFolder)
        );
        std::fs::create_dir(cwd.join("workspace")).unwrap();
        assert_eq!(
            choose_workspace(None, cwd),
            (PathBuf::from("./workspace"), WorkspaceOrigin::RepoDefault)
        );
        let named = Some(std::path::Path::new("elsewhere"));
        assert_eq!(
            choose_workspace(named, cwd),
            (PathBuf::from("elsewhere"), WorkspaceOrigin::Named)
        );
        // A cloned repository's `workspace` link is not this layout: the start folder it is,
        // asked about as any.
        let cloned = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(dir.path(), cloned.path().join("workspace")).unwrap();
        assert_eq!(
            choose_workspace(None, cloned.path()),
            (cloned.path().to_path_buf(), WorkspaceOrigin::StartFolder)
        );
    }

    #[test]
    fn the_history_stays_where_it_is_else_a_start_folder_keeps_it_in_the_data_dir() {
        let dir = tempfile::tempdir().unwrap();
        let (ws, data) = (dir.path().join("repo"), dir.path().join("data"));
        std::fs::create_dir_all(&ws).unwrap();
        let own = project_state_dir(&data, &ws);
        assert!(own.starts_with(data.join("projects")));
        assert!(
            own.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("repo-")
        );
        // Nothing yet: a start folder's state goes to the data dir, a named one's inside it.
        assert_eq!(
            state_dir(&ws, WorkspaceOrigin::StartFolder, Some(&data)),
            own
        );
        assert_eq!(state_dir(&ws, WorkspaceOrigin::Named, Some(&data)), ws);
        assert_eq!(
            state_dir(&ws, WorkspaceOrigin::RepoDefault, Some(&data)),
            ws
        );
        assert_eq!(state_dir(&ws, WorkspaceOrigin::StartFolder, None), ws);
        // The data dir holds it already: there, even when named now.
        std::fs::create_dir_all(&own).unwrap();
        assert_eq!(state_dir(&ws, WorkspaceOrigin::Named, Some(&data)), own);
        // The old layout inside the folder wins.
        std::fs::write(ws.join("history.json"), "{}").unwrap();
        assert_eq!(
            state_dir(&ws, WorkspaceOrigin::StartFolder, Some(&data)),
            ws
        );
        std::fs::remove_file(ws.join("history.json")).unwrap();
        std::fs::create_dir(ws.join(".miniclaw")).unwrap();
        assert_eq!(
            state_dir(&ws, WorkspaceOrigin::StartFolder, Some(&data)),
            ws
        );
    }

    #[test]
    fn debug_output_never_shows_the_key() {
        let cli = Cli::try_parse_from(["miniclaw-tui"]).unwrap();
        let c = Config {
            cli,
            api_key: Some("sk-secret-123".into()),
            base_url: DEFAULT_BASE_URL.into(),
            key_url: None,
            preset: Preset::Flash,
            providers: Providers::default(),
            approval: crate::approval::ApprovalMode::Auto,
            approval_source: ApprovalSource::Default,
            workspace: PathBuf::from("."),
            workspace_origin: WorkspaceOrigin::Named,
            state_dir: PathBuf::from("."),
            folder_record: Default::default(),
            project_trusted: false,
            reasoning_effort: Default::default(),
            compact_at: crate::agent::DEFAULT_COMPACT_AT,
            warnings: Vec::new(),
        };
        let text = format!("{c:?}");
        assert!(!text.contains("sk-secret-123"));
        assert!(text.contains("<redacted>"));
    }
}
