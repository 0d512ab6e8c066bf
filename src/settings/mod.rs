//! Settings files: `<config dir>/miniclaw/config.toml` (the user's own), and the project's
//! `./miniclaw.toml` and `./.mcp.json` in the folder MiniClaw starts in.
//!
//! Each file is read whole and leniently: a table MiniClaw does not know is ignored (later
//! issues add their own tables, such as `[providers.*]`), and a broken file or entry is
//! reported (which file, what is wrong) and skipped; nothing here is fatal. The files carry MCP
//! servers (`[mcp_servers.NAME]` in Codex CLI's shape, `mcpServers` in Claude Code's `.mcp.json`
//! shape), model providers (`[providers.NAME]`), hooks (`[[hooks.EVENT]]`) and, from the user's
//! file only, the command rules (`[commands] allow`) and the prices of models (`[cost]`). A
//! leaf: it imports nothing of MiniClaw but `paths`.

mod commands;
mod context;
mod cost;
mod error;
mod expand;
mod hooks;
mod mcp;
mod mcp_json;
mod providers;
mod run_command;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub use commands::AllowedCommand;
pub use context::{ContextSettings, DeepSeekSettings};
pub use cost::{CostSettings, Currency, MAX_PRICE_PER_MILLION, ModelPrices};
pub use error::SettingsError;
pub use expand::expand_vars;
pub use hooks::{DEFAULT_HOOK_TIMEOUT, HookEntry, HookEvent, anchored as anchored_matcher};
pub use mcp::{
    DEFAULT_STARTUP_TIMEOUT, DEFAULT_TOOL_TIMEOUT, McpServerConfig, McpTransport, Origin, Scope,
};
pub use providers::{BUILT_IN_PROVIDER, ModelEntry, ProviderEntry, RESERVED_FIELDS, ToolProtocol};
pub use run_command::RunCommandSettings;

/// The user's settings file: `<config dir>/miniclaw/config.toml`.
pub const USER_FILE: &str = "config.toml";
/// The project's settings file, in the folder MiniClaw starts in.
pub const PROJECT_FILE: &str = "miniclaw.toml";
/// The project's MCP servers in Claude Code's shape, in the folder MiniClaw starts in.
pub const PROJECT_MCP_JSON: &str = ".mcp.json";

/// What one settings file holds that MiniClaw uses.
#[derive(Clone, Debug, Default)]
pub struct FileSettings {
    /// Its MCP servers, in file order.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Its model providers, in file order.
    pub providers: Vec<ProviderEntry>,
    /// Its `[run_command]` table (the user's file only).
    pub run_command: Option<RunCommandSettings>,
    /// Its `[commands] allow` rules (the user's file only).
    pub allowed_commands: Vec<AllowedCommand>,
    /// Its `[context]` table (the user's file only).
    pub context: Option<ContextSettings>,
    /// Its `[deepseek]` table (the user's file only).
    pub deepseek: Option<DeepSeekSettings>,
    /// Its `[cost]` table (the user's file only).
    pub cost: Option<CostSettings>,
    /// Its `[hooks]`, in file order.
    pub hooks: Vec<HookEntry>,
}

/// Where the settings files are.
#[derive(Clone, Debug)]
pub struct SettingsFiles {
    /// `<config dir>/miniclaw/config.toml`, when the system has a config folder.
    pub user: Option<PathBuf>,
    /// The project folder (the one MiniClaw starts in), holding `miniclaw.toml` and `.mcp.json`.
    pub project: PathBuf,
}

impl SettingsFiles {
    /// The files for this machine and the current folder.
    pub fn default_locations() -> Self {
        Self {
            user: crate::paths::config_dir().map(|d| d.join(USER_FILE)),
            project: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        }
    }

    /// The project's settings files that exist (what trust covers).
    pub fn project_files(&self) -> Vec<PathBuf> {
        [PROJECT_FILE, PROJECT_MCP_JSON]
            .iter()
            .map(|f| self.project.join(f))
            .filter(|p| p.is_file())
            .collect()
    }
}

/// Settings merged from every file, and what was wrong with them.
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// MCP servers by name: the project's `miniclaw.toml` wins over its `.mcp.json`, which
    /// wins over the user's `config.toml`.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Model providers as declared, the user's file first: a later entry of the same name
    /// replaces an earlier one, and the key rules are applied, by `llm::Providers`.
    pub providers: Vec<ProviderEntry>,
    /// The person's `[run_command]` settings.
    pub run_command: RunCommandSettings,
    /// The command rules of the user's `config.toml` (a project's are ignored, with a warning).
    pub allowed_commands: Vec<AllowedCommand>,
    /// The person's `[context]` settings.
    pub context: ContextSettings,
    /// The person's `[deepseek]` settings.
    pub deepseek: DeepSeekSettings,
    /// The person's `[cost]` settings (a project's are ignored, with a warning).
    pub cost: CostSettings,
    /// The hooks: the user's file's, then the (trusted) project's.
    pub hooks: Vec<HookEntry>,
    /// One sentence per broken file or entry (which file, what is wrong).
    pub warnings: Vec<String>,
}

impl Settings {
    /// Reads the user's file and, when `with_project`, the project's files.
    pub fn load(files: &SettingsFiles, with_project: bool) -> Self {
        let mut warnings = Vec::new();
        let mut layers: Vec<FileSettings> = Vec::new();
        if let Some(user) = &files.user {
            layers.push(read_layer(user, Scope::User, &mut warnings));
        }
        if with_project {
            let json = files.project.join(PROJECT_MCP_JSON);
            let (mcp_servers, problems) = read_mcp_json(&json, Scope::Project);
            warnings.extend(problems);
            layers.push(FileSettings {
                mcp_servers,
                ..FileSettings::default()
            });
            let toml = files.project.join(PROJECT_FILE);
            layers.push(read_layer(&toml, Scope::Project, &mut warnings));
        }
        let mut servers: BTreeMap<String, McpServerConfig> = BTreeMap::new();
        let mut providers: Vec<ProviderEntry> = Vec::new();
        let mut run_command = RunCommandSettings::default();
        let mut allowed_commands: Vec<AllowedCommand> = Vec::new();
        let (mut context, mut deepseek) = Default::default();
        let mut cost = CostSettings::default();
        let mut hooks: Vec<HookEntry> = Vec::new();
        for layer in layers {
            hooks.extend(layer.hooks);
            if let Some(settings) = layer.run_command {
                run_command = settings;
            }
            if let Some(settings) = layer.context {
                context = settings;
            }
            if let Some(settings) = layer.deepseek {
                deepseek = settings;
            }
            if let Some(settings) = layer.cost {
                cost = settings;
            }
            for server in layer.mcp_servers {
                servers.insert(server.name.clone(), server);
            }
            providers.extend(layer.providers);
            allowed_commands.extend(layer.allowed_commands);
        }
        Self {
            mcp_servers: servers.into_values().collect(),
            providers,
            run_command,
            allowed_commands,
            context,
            deepseek,
            cost,
            hooks,
            warnings,
        }
    }
}

/// The variables that the providers of the user's file and the project's `miniclaw.toml` name
/// as holding their keys (trusted or not): read at start, before anything else runs, so each
/// can be taken out of the environment like `DEEPSEEK_API_KEY`.
pub fn key_variables(files: &SettingsFiles) -> Vec<String> {
    let mut paths: Vec<PathBuf> = files.user.iter().cloned().collect();
    paths.push(files.project.join(PROJECT_FILE));
    let mut vars: Vec<String> = Vec::new();
    for path in paths {
        let (settings, _) = read_toml_file(&path, Scope::User);
        for var in settings.providers.into_iter().filter_map(|p| p.api_key_env) {
            if !vars.contains(&var) {
                vars.push(var);
            }
        }
    }
    vars
}

fn read_layer(path: &Path, scope: Scope, warnings: &mut Vec<String>) -> FileSettings {
    let (settings, problems) = read_toml_file(path, scope);
    warnings.extend(problems);
    settings
}

/// Reads one TOML settings file (`config.toml` or `miniclaw.toml`); a missing file is empty.
/// Returns what could be used and a warning for each problem.
pub fn read_toml_file(path: &Path, scope: Scope) -> (FileSettings, Vec<String>) {
    let text = match read_text(path) {
        Ok(Some(text)) => text,
        Ok(None) => return (FileSettings::default(), Vec::new()),
        Err(e) => return (FileSettings::default(), vec![e.to_string()]),
    };
    parse_toml(&text, path, scope)
}

/// Parses the text of a TOML settings file read from `path`.
pub fn parse_toml(text: &str, path: &Path, scope: Scope) -> (FileSettings, Vec<String>) {
    let table: toml::Table = match toml::from_str(text) {
        Ok(t) => t,
        Err(source) => {
            let e = SettingsError::Toml {
                file: path.to_path_buf(),
                source,
            };
            return (FileSettings::default(), vec![e.to_string()]);
        }
    };
    let origin = Origin {
        file: path.to_path_buf(),
        scope,
    };
    let (mcp_servers, mut warnings) = match table.get("mcp_servers") {
        None => (Vec::new(), Vec::new()),
        Some(value) => mcp::parse_table(value, &origin),
    };
    let providers = match table.get("providers") {
        None => Vec::new(),
        Some(value) => {
            let (providers, problems) = providers::parse_table(value, &origin);
            warnings.extend(problems);
            providers
        }
    };
    let run_command = match table.get("run_command") {
        None => None,
        Some(value) => {
            let (settings, problems) = run_command::parse(value, &origin);
            warnings.extend(problems);
            settings
        }
    };
    let allowed_commands = match table.get("commands") {
        None => Vec::new(),
        Some(value) => {
            let (allowed, problems) = commands::parse_table(value, path, scope);
            warnings.extend(problems);
            allowed
        }
    };
    let context = table.get("context").and_then(|v| {
        let (s, problems) =
            context::parse_user_table("context", v, &origin, context::check_context);
        warnings.extend(problems);
        s
    });
    let deepseek = table.get("deepseek").and_then(|v| {
        let (s, problems) =
            context::parse_user_table("deepseek", v, &origin, context::check_deepseek);
        warnings.extend(problems);
        s
    });
    let cost = match table.get("cost") {
        None => None,
        Some(value) => {
            let (settings, problems) = cost::parse(value, &origin);
            warnings.extend(problems);
            settings
        }
    };
    let hooks = match table.get("hooks") {
        None => Vec::new(),
        Some(value) => {
            let (hooks, problems) = hooks::parse_table(value, &origin);
            warnings.extend(problems);
            hooks
        }
    };
    (
        FileSettings {
            mcp_servers,
            providers,
            run_command,
            allowed_commands,
            context,
            deepseek,
            cost,
            hooks,
        },
        warnings,
    )
}

/// Reads a `.mcp.json` file (Claude Code's shape); a missing file holds no server.
pub fn read_mcp_json(path: &Path, scope: Scope) -> (Vec<McpServerConfig>, Vec<String>) {
    match read_text(path) {
        Ok(Some(text)) => {
            let origin = Origin {
                file: path.to_path_buf(),
                scope,
            };
            mcp_json::parse(&text, &origin, &|name| std::env::var(name).ok())
        }
        Ok(None) => (Vec::new(), Vec::new()),
        Err(e) => (Vec::new(), vec![e.to_string()]),
    }
}

/// The most of a settings file (`config.toml`, `miniclaw.toml`, `.mcp.json`) read: real ones
/// are a few KB; a project may plant a huge or special file where one belongs.
pub const MAX_SETTINGS_FILE_BYTES: u64 = 1024 * 1024;

/// The file's text; `None` when it does not exist. Never blocks on a special file, never
/// reads past [`MAX_SETTINGS_FILE_BYTES`] (a link is followed: dotfiles repositories link
/// their settings).
fn read_text(path: &Path) -> Result<Option<String>, SettingsError> {
    use crate::capped_read::{CappedReadError, Links, read_capped_string};
    match read_capped_string(path, MAX_SETTINGS_FILE_BYTES, Links::Follow) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(CappedReadError::Io { source, .. }) => Err(SettingsError::Read {
            file: path.to_path_buf(),
            source,
        }),
        Err(e) => Err(SettingsError::Read {
            file: path.to_path_buf(),
            source: std::io::Error::other(e.to_string()),
        }),
    }
}

#[cfg(test)]
mod tests;
