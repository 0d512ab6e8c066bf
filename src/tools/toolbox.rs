//! The whole toolbox: built-in tools, the shell, web and sub-agent tools, and plugins.

use std::collections::BTreeSet;
use std::path::PathBuf;

use super::registry::{ToolRegistry, ToolSource};
use super::shell::ShellSettings;
use super::web::WebSettings;

/// What the toolbox needs to know at start.
#[derive(Clone, Debug)]
pub struct ToolboxConfig {
    /// Settings of search_web and fetch_web_page.
    pub web: WebSettings,
    /// Settings of run_shell_command.
    pub shell: ShellSettings,
    /// Folders searched for plugin files, in order.
    pub plugin_dirs: Vec<PathBuf>,
}

impl ToolboxConfig {
    /// The settings from the environment and the default plugin folders (the project's only
    /// when the person trusted it).
    pub fn from_env(project_trusted: bool) -> Self {
        Self {
            web: WebSettings::from_env(),
            shell: ShellSettings::default(),
            plugin_dirs: super::plugins::default_dirs(project_trusted),
        }
    }
}

/// Every tool: the built-ins, run_shell_command, search_web, fetch_web_page,
/// delegate_file_analysis, then plugins (which may not take a built-in name). Returns the registry
/// and a warning for each plugin file or tool that was skipped.
pub fn full_registry(config: &ToolboxConfig) -> (ToolRegistry, Vec<String>) {
    let mut registry = super::builtin_registry();
    super::shell::register(&mut registry, config.shell.clone());
    super::web::register(&mut registry, &config.web);
    registry.register(super::subagent::DelegateTool::new());
    let taken: BTreeSet<String> = registry.iter().map(|t| t.schema().name).collect();
    let (plugins, warnings) = super::plugins::load_dirs(&config.plugin_dirs, &taken);
    for plugin in plugins {
        registry.register(plugin);
    }
    (registry, warnings)
}

/// What `/tools` and `--list-tools` show of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
    /// `built-in`, `plugin <file>` or `mcp <server>`.
    pub source: String,
    /// The first line (or sentence) of its description.
    pub summary: String,
}

/// One entry per tool for `/tools` and `--list-tools`.
pub fn describe_tools(registry: &ToolRegistry) -> Vec<ToolInfo> {
    registry
        .iter()
        .map(|tool| {
            let schema = tool.schema();
            let source = match tool.source() {
                ToolSource::BuiltIn => "built-in".to_string(),
                ToolSource::Plugin(path) => format!("plugin {path}"),
                ToolSource::Mcp(server) => format!("mcp {server}"),
            };
            ToolInfo {
                summary: first_sentence(&schema.description),
                name: schema.name,
                source,
            }
        })
        .collect()
}

/// The first line of a description, or its first sentence when it is one long line.
fn first_sentence(description: &str) -> String {
    let line = description.lines().next().unwrap_or("").trim();
    // A sentence ends at ". " — but not after an abbreviation such as "e.g." or "i.e.".
    let mut from = 0;
    while let Some(pos) = line[from..].find(". ") {
        let end = from + pos;
        let word = line[..end]
            .rsplit(' ')
            .next()
            .unwrap_or("")
            .trim_start_matches(['(', '[', '"', '\'']);
        if !matches!(word, "e.g" | "i.e" | "etc" | "vs") {
            return line[..=end].to_string();
        }
        from = end + 2;
    }
    line.to_string()
}
