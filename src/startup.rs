//! Assembles an agent from the configuration: workspace, tools, history, model client.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::{Agent, AgentSettings, Opening, history};
use crate::config::Config;
use crate::llm::{ApiKey, LlmClient};
use crate::settings::{McpServerConfig, Settings, SettingsFiles};
use crate::tools::mcp::McpHub;
use crate::tools::toolbox::{ToolInfo, ToolboxConfig, describe_tools, full_registry};
use crate::tools::{Sandbox, ToolRegistry};

/// Why the program could not start; each says what to fix.
#[derive(Debug, thiserror::Error)]
pub enum StartupError {
    /// The workspace folder is unusable.
    #[error("the workspace {path} cannot be used: {reason}")]
    Workspace {
        /// The folder.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The history file could not be read.
    #[error("{0}")]
    History(#[from] history::HistoryError),
    /// Another instance uses the workspace.
    #[error("{0}")]
    Locked(#[from] history::LockError),
    /// The model client could not be built.
    #[error("{0}")]
    Client(#[from] crate::llm::LlmError),
    /// The session asked for (`--resume`, `--new`) could not be opened.
    #[error("{0}")]
    Session(#[from] history::ArchiveError),
}

/// Which session to start with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionChoice {
    /// The active one (`history.json`), the newest of this folder (the UI's default, `-c`).
    Continue,
    /// A new one; the active one is archived (`--new`, and a headless run's default).
    New,
    /// The archived one this id or title names (`--resume NAME`).
    Resume(String),
    /// The newest archived one (`--resume` in headless mode).
    Newest,
}

impl SessionChoice {
    /// The choice the flags make. A headless run starts a new session unless `--continue` or
    /// `--resume` says otherwise (as `claude -p` and `codex exec` do: a script's run must not
    /// carry the last run's conversation unasked); the UI goes on with the active one.
    /// `--resume` without a name means the picker in the UI (`Continue` here) and the newest
    /// archived session in headless mode.
    pub fn from_flags(cli: &crate::config::Cli, headless: bool) -> Self {
        match (
            cli.new,
            cli.continue_session,
            cli.resume.as_deref().map(str::trim),
        ) {
            (true, _, _) => Self::New,
            (false, true, _) => Self::Continue,
            (false, false, Some("")) if headless => Self::Newest,
            (false, false, Some("")) => Self::Continue,
            (false, false, Some(name)) => Self::Resume(name.to_string()),
            (false, false, None) if headless => Self::New,
            (false, false, None) => Self::Continue,
        }
    }
}

/// Switches `agent` to the session `choice` names; returns what to tell the person.
pub async fn open_session(
    agent: &mut Agent,
    choice: &SessionChoice,
) -> Result<Vec<String>, StartupError> {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let events = crate::events::EventSink::new(tx);
    let said = match choice {
        SessionChoice::Continue => return Ok(Vec::new()),
        SessionChoice::New if !agent.session().has_prompts() => return Ok(Vec::new()),
        SessionChoice::New => agent.new_session(&events).await?,
        SessionChoice::Resume(name) => agent.resume(name, &events).await?,
        SessionChoice::Newest => match agent
            .list_sessions()
            .await
            .into_iter()
            .find(|s| s.problem.is_none())
        {
            Some(newest) => agent.resume(&newest.id, &events).await?,
            None => {
                return Err(history::ArchiveError::NotFound(
                    "(no earlier session in this workspace)".into(),
                )
                .into());
            }
        },
    };
    let mut notices = vec![said];
    // A save that failed on the way says so like any other error.
    while let Ok(event) = rx.try_recv() {
        if let crate::events::AgentEvent::Error { message } = event {
            notices.push(message);
        }
    }
    Ok(notices)
}

/// A ready agent and what to tell the person about how it started.
pub struct Started {
    /// The agent, holding the loaded history.
    pub agent: Agent,
    /// Warnings and hints for the person (corrupt history moved aside, no key, broken plugin).
    pub notices: Vec<String>,
    /// Another MiniClaw has the folder's active session open (" (pid N)" when known): this
    /// agent works in a new session kept in the archive.
    pub active_held_by: Option<String>,
    /// Whether `run_command` is offered, or why not (for `/status`).
    pub command_status: Result<(), String>,
}

/// Every tool (built-ins, the toolbox, plugins) and any warnings from loading them.
pub fn registry(config: &Config) -> (ToolRegistry, Vec<String>) {
    let (registry, mut warnings) = full_registry(&ToolboxConfig::from_env(config.project_trusted));
    if !config.project_trusted
        && let Some(project) = std::env::current_dir()
            .ok()
            .and_then(|d| crate::trust::ProjectCommands::scan(&d))
    {
        warnings.push(format!(
            "This folder's {} were not loaded: this folder is not trusted (start MiniClaw here again and answer yes, or pass --trust).",
            project.sources().join(", ")
        ));
    }
    (registry, warnings)
}

/// The skills of this run: the person's, and the project's once it is trusted (the folder
/// MiniClaw started in); with a warning for each skipped.
pub fn skills(config: &Config) -> (crate::skills::Skills, Vec<String>) {
    let project = std::env::current_dir().ok();
    crate::skills::load(&crate::skills::default_sources(
        config.project_trusted,
        project.as_deref(),
    ))
}

/// The MCP servers that may start: the user's own, and the project's once it is trusted;
/// with a warning for each broken settings file or entry.
pub fn mcp_servers(config: &Config) -> (Vec<McpServerConfig>, Vec<String>) {
    let settings = Settings::load(&SettingsFiles::default_locations(), config.project_trusted);
    (settings.mcp_servers, settings.warnings)
}

/// Starts the MCP servers in the background (none configured: `None`). Their tools join
/// `registry` as each server comes up. Call inside the async runtime.
pub fn start_mcp(
    config: &Config,
    registry: &mut ToolRegistry,
    workspace: &Path,
) -> (Option<Arc<McpHub>>, Vec<String>) {
    let (servers, warnings) = mcp_servers(config);
    if servers.is_empty() {
        return (None, warnings);
    }
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    let hub = McpHub::start(servers, cwd, workspace.to_path_buf());
    registry.add_provider(hub.clone());
    (Some(hub), warnings)
}

/// What `--list-tools` shows: every tool, MCP servers' included once they have started (each
/// within its startup timeout), and the warnings met on the way.
pub async fn list_tools(config: &Config) -> (Vec<ToolInfo>, Vec<String>) {
    let (mut tools, mut warnings) = registry(config);
    let (skills, skill_warnings) = skills(config);
    warnings.extend(skill_warnings);
    crate::tools::skill::register(&mut tools, &skills);
    let (commands, _, command_warnings) = command_tools().await;
    warnings.extend(command_warnings);
    match commands {
        Ok(commands) => commands.register(&mut tools),
        Err(why) => warnings.push(format!("run_command is not offered: {why}")),
    }
    let (hub, mcp_warnings) = start_mcp(config, &mut tools, &config.workspace);
    warnings.extend(mcp_warnings);
    if let Some(hub) = &hub {
        hub.wait_started().await;
        for server in hub.statuses() {
            if let Some(error) = server.last_error {
                warnings.push(format!("MCP server `{}`: {error}", server.name));
            }
        }
    }
    let listed = describe_tools(&tools);
    if let Some(hub) = hub {
        hub.shutdown();
    }
    (listed, warnings)
}

/// The planner's and the executor's presets: `--planner-model` and `--executor-model` read as
/// `--model` reads a name (`PROVIDER/MODEL` included), the defaults for those not given; a
/// provider that is not configured is an error.
fn plan_presets(config: &Config) -> Result<crate::agent::plan::PlanPresets, crate::llm::LlmError> {
    let defaults = crate::agent::plan::PlanPresets::default();
    let pick =
        |name: Option<&str>, default| name.map_or(Ok(default), |n| config.providers.resolve(n));
    Ok(crate::agent::plan::PlanPresets {
        planner: pick(config.cli.planner_model.as_deref(), defaults.planner)?,
        executor: pick(config.cli.executor_model.as_deref(), defaults.executor)?,
    })
}

/// The binary that supervises jailed commands: MiniClaw's own (`MINICLAW_JAIL_BIN` names
/// another, for tests and packagers).
pub fn supervisor_binary() -> Option<std::path::PathBuf> {
    std::env::var_os("MINICLAW_JAIL_BIN")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::current_exe().ok())
}

/// `run_command` and its job tools when the jail can be built here, else why not; the time
/// limits its settings give (the approval dialog says them); with any warning about the
/// person's `[run_command]` settings.
pub async fn command_tools() -> (
    Result<crate::tools::command::CommandTools, String>,
    crate::command_rules::CommandTimeouts,
    Vec<String>,
) {
    let files = SettingsFiles::default_locations();
    // The person's own file only: a project never sets what its commands may do.
    let table = Settings::load(&files, false).run_command;
    let mut warnings = Vec::new();
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let settings = crate::tools::command::CommandSettings::from_settings(
        &table,
        home.as_deref(),
        &mut warnings,
    );
    let timeouts =
        crate::command_rules::CommandTimeouts::new(settings.timeout, settings.max_timeout);
    let tools = match supervisor_binary() {
        Some(binary) => crate::tools::command::prepare(settings, binary).await,
        None => Err("MiniClaw cannot find its own binary to supervise commands".into()),
    };
    (tools, timeouts, warnings)
}

/// The command rules for `workspace`: the person's `config.toml`'s `[commands] allow` and the
/// ones made in this project, kept in the folder records; with a warning for each entry that
/// is not a rule. (The settings files' own problems are reported with the MCP servers'.)
fn command_rules(workspace: &Path) -> (crate::command_rules::CommandRules, Vec<String>) {
    // The user's file only: a project's `[commands]` never counts (its warning comes with the
    // settings warnings).
    let settings = Settings::load(&SettingsFiles::default_locations(), false);
    let allowed: Vec<(String, PathBuf)> = settings
        .allowed_commands
        .into_iter()
        .map(|a| (a.text, a.file))
        .collect();
    crate::command_rules::CommandRules::load(
        crate::remembered::folders::path(),
        workspace,
        &allowed,
    )
}

/// Builds the agent for `config`, its session read from the history.
pub async fn start(config: &Config) -> Result<Started, StartupError> {
    let (mut started, opening) = begin(config).await?;
    let notices = started.agent.open(opening).await?;
    started.notices.extend(notices);
    Ok(started)
}

/// Builds the agent for `config` without reading its history: the agent holds a placeholder
/// session until [`Agent::open`] reads the [`Opening`] (before it does anything else). The UI
/// draws its first frame before that.
pub async fn begin(config: &Config) -> Result<(Started, Opening), StartupError> {
    let plan_presets = plan_presets(config)?;
    let history_path = config.history_path();
    let mut held_by = None;
    // The folder's active session, unless another MiniClaw has it open: then a new session,
    // kept in the archive (each session is locked on its own; see `history::Slot`).
    let (slot, session, opening) = match history::Slot::active(&history_path) {
        Ok(slot) => (
            slot,
            crate::agent::Session::new(),
            Opening::load(history_path.clone()),
        ),
        Err(history::LockError::Held { holder, .. }) => {
            let session = crate::agent::Session::new();
            let slot = history::Slot::in_archive(&history_path, &session.id)?;
            held_by = Some(holder);
            (slot, session, Opening::Open)
        }
        Err(e) => return Err(e.into()),
    };
    // The jail's check waits on a child process for a while (building the jail, running a
    // command in it). The runtime has one thread: the check runs until it waits on its child,
    // then the child works while this thread reads the settings (the history is read later, by
    // `Agent::open`, while the UI draws its first frames).
    let command_check = tokio::spawn(command_tools());
    tokio::task::yield_now().await;
    let workspace = &config.workspace;
    // Read once here for what the agent takes from them (its hooks, its prices); their
    // problems are said with the MCP servers' (`start_mcp`).
    let settings = Settings::load(&SettingsFiles::default_locations(), config.project_trusted);
    let sandbox = Sandbox::new(workspace)
        .map_err(|e| StartupError::Workspace {
            path: workspace.display().to_string(),
            reason: e.to_string(),
        })?
        .with_protected_config(
            crate::config::configuration_paths()
                .into_iter()
                .chain(crate::trust::hook_code_paths(workspace, &settings.hooks))
                .collect::<Vec<_>>(),
        )
        .with_change_log(
            crate::trust::changes::ChangeLog::for_start_folder()
                .map(|log| Arc::new(log) as Arc<dyn crate::tools::ChangeWatcher>),
        );
    // MiniClaw's own folders are hidden from the tools wherever they lie; a workspace that is one
    // of them (or inside one) would be nothing but hidden files, so it is refused plainly.
    if let Some(own) = crate::tools::hidden::workspace_in_own_folder(sandbox.root()) {
        return Err(StartupError::Workspace {
            path: workspace.display().to_string(),
            reason: format!(
                "it is MiniClaw's own config or data folder ({}) or inside it, which the tools may never reach; choose another workspace",
                own.display()
            ),
        });
    }
    let mut notices = config.warnings.clone();
    // A project's own `.env` (`--workspace .`) is fine: the tools never reach it (`tools::hidden`).
    let key_files = crate::tools::hidden::key_files_in(sandbox.root());
    if !key_files.is_empty() {
        notices.push(format!(
            "This workspace holds {}: MiniClaw keeps .env* files out of the tools' reach. Keys are best kept in {}.",
            key_files.join(", "),
            crate::secrets::recommended_key_file()
        ));
    }
    let (mut tools, warnings) = registry(config);
    notices.extend(warnings);
    let (skills, warnings) = skills(config);
    notices.extend(warnings);
    crate::tools::skill::register(&mut tools, &skills);
    let sandbox = sandbox.with_skills(Arc::new(skills));
    let (commands, command_timeouts, warnings) = match command_check.await {
        Ok(checked) => checked,
        // The check panicked: the same panic as when it ran on this thread.
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    notices.extend(warnings);
    let command_status = match &commands {
        Ok(commands) => {
            commands.register(&mut tools);
            Ok(())
        }
        Err(why) => {
            notices.push(format!(
                "run_command is not offered: {why}. The read-only run_shell_command still works."
            ));
            Err(why.clone())
        }
    };
    let (mcp, warnings) = start_mcp(config, &mut tools, sandbox.root());
    notices.extend(warnings);
    if let crate::llm::Preset::Custom(name) = &config.preset {
        notices.push(format!(
            "Model \"{name}\" is not one of the presets ({}): it is sent as it is, without thinking settings.",
            crate::llm::Preset::NAMES.join(", ")
        ));
    }
    // The key file is followed while the program runs: a key written there later is used from
    // the next send on (see `llm::key`).
    let key = match crate::secrets::key_file::path() {
        Some(file) => ApiKey::following(config.api_key(), config.key_url.clone(), file),
        None => ApiKey::fixed_for(config.api_key(), config.key_url.clone()),
    };
    // Each provider's key is read from its own variable, which left the environment at start.
    let client = LlmClient::new(&config.base_url, None)?
        .with_key(key)
        .with_providers(config.providers.clone(), &|var| crate::secrets::get(var))
        .with_reasoning_effort(config.reasoning_effort);
    if let Some(problem) = config.key_problem() {
        notices.push(match problem {
            crate::llm::LlmError::MissingKey => crate::secrets::missing_key_message(),
            other => format!("{}.", other),
        });
    }
    let (command_rules, warnings) = command_rules(sandbox.root());
    notices.extend(warnings);
    let mut agent = Agent::new(
        client,
        Arc::new(tools),
        Arc::new(sandbox),
        session,
        AgentSettings {
            preset: config.preset.clone(),
            max_steps: usize::from(config.cli.max_steps),
            history_path: Some(config.history_path()),
        },
    )
    .with_context_budget(config.cli.context_tokens.map(|t| t as usize))
    .with_compaction_at(config.compact_at)
    .with_approvals(config.approval, None)
    .with_command_rules(Arc::new(command_rules))
    .with_command_timeouts(command_timeouts)
    .with_slot(slot)
    .with_plan_presets(plan_presets)
    // The person's own file only (a project's `[cost]` is ignored, and said so where the
    // settings' warnings are told).
    .with_prices(crate::llm::prices::Prices::new(&settings.cost));
    if let Some(hub) = mcp {
        agent = agent.with_mcp(hub);
    }
    if let Ok(commands) = &commands {
        agent = agent.with_commands(commands.clone());
    }
    // The person's hooks, and the project's once it is trusted (their problems were said with
    // the other settings' warnings).
    if !settings.hooks.is_empty() {
        let hooks = crate::hooks::Hooks::new(settings.hooks, config.workspace.clone());
        agent = agent.with_hooks(Arc::new(hooks));
    }
    // The project's AGENTS.md as it is now is read when the session is opened (`Agent::open`).
    Ok((
        Started {
            agent,
            notices,
            active_held_by: held_by,
            command_status,
        },
        opening,
    ))
}

#[cfg(test)]
mod session_choice_tests {
    use super::SessionChoice;
    use crate::config::Cli;
    use clap::Parser;

    fn choice(args: &[&str], headless: bool) -> SessionChoice {
        let cli = Cli::try_parse_from(std::iter::once("miniclaw-tui").chain(args.iter().copied()))
            .unwrap();
        SessionChoice::from_flags(&cli, headless)
    }

    #[test]
    fn headless_runs_start_fresh_unless_told_and_the_ui_goes_on() {
        assert_eq!(choice(&[], true), SessionChoice::New);
        assert_eq!(choice(&[], false), SessionChoice::Continue);
        assert_eq!(choice(&["-c"], true), SessionChoice::Continue);
        assert_eq!(choice(&["--continue"], false), SessionChoice::Continue);
        assert_eq!(choice(&["--new"], false), SessionChoice::New);
        assert_eq!(choice(&["--resume"], true), SessionChoice::Newest);
        assert_eq!(choice(&["--resume"], false), SessionChoice::Continue);
        assert_eq!(
            choice(&["--resume", " alpha "], true),
            SessionChoice::Resume("alpha".into())
        );
        for both in [["-c", "--new"], ["-c", "--resume"]] {
            assert!(Cli::try_parse_from(std::iter::once("miniclaw-tui").chain(both)).is_err());
        }
    }
}
