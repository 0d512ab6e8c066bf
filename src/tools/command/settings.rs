//! What `run_command` may do, from the person's `[run_command]` settings: timeouts, resource
//! limits, background jobs, the toolchain folders it may read, and its environment.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::jail::Resources;
use crate::settings::RunCommandSettings;

/// The timeout of a call that gives none.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
pub const DEFAULT_MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Bytes kept of each of stdout and stderr (the first and last halves).
pub const OUTPUT_CAP: usize = 64 * 1024;
/// A command that writes more than this in all is stopped: an endless stream of output.
pub const FLOOD_BYTES: usize = 16 << 20;
/// How many background jobs may run at once.
pub const DEFAULT_MAX_JOBS: usize = 4;
/// How long a background call waits for its command to end before it returns a job.
pub const BACKGROUND_AFTER: Duration = Duration::from_secs(3);

/// Toolchain folders and files in the home folder commands may read and run (when they exist):
/// compilers, interpreters and their package caches. Credential files beside them
/// (`~/.cargo/credentials.toml`, `~/.npmrc`, `~/.pypirc`, `~/.netrc`, `~/.ssh`, `~/.aws`) are
/// left out by naming only what is needed.
pub const TOOLCHAINS: [&str; 13] = [
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".cargo/config.toml",
    ".rustup/toolchains",
    ".rustup/settings.toml",
    ".rustup/update-hashes",
    ".pyenv",
    ".nvm",
    ".npm/_cacache",
    ".cache/pip",
    ".local/bin",
    ".local/lib",
];

/// Name parts that mark an environment variable as holding a secret.
const SECRET_PARTS: [&str; 5] = ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"];

/// `run_command`'s settings, resolved.
#[derive(Clone, Debug)]
pub struct CommandSettings {
    /// The timeout of a call that gives none.
    pub timeout: Duration,
    /// The longest timeout a call may ask for.
    pub max_timeout: Duration,
    /// Each process's limits.
    pub resources: Resources,
    /// How many background jobs may run at once.
    pub max_jobs: usize,
    /// How many workspace entries the walk around each command looks at.
    pub max_entries: usize,
    /// Real paths outside the workspace commands may read and run.
    pub also_read: Vec<PathBuf>,
    /// Variables added to the fixed environment.
    pub env: Vec<(String, String)>,
}

impl Default for CommandSettings {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            max_timeout: DEFAULT_MAX_TIMEOUT,
            resources: Resources::default(),
            max_jobs: DEFAULT_MAX_JOBS,
            max_entries: super::survey::MAX_ENTRIES,
            also_read: Vec::new(),
            env: Vec::new(),
        }
    }
}

impl CommandSettings {
    /// The settings from the person's `[run_command]` table, with `home` for the toolchain
    /// list; a problem (a secret-looking variable, a path that does not exist) is a warning.
    pub fn from_settings(
        table: &RunCommandSettings,
        home: Option<&Path>,
        warnings: &mut Vec<String>,
    ) -> Self {
        let defaults = Resources::default();
        let max_timeout = table
            .max_timeout_sec
            .map_or(DEFAULT_MAX_TIMEOUT, Duration::from_secs);
        let timeout = table
            .timeout_sec
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
            .min(max_timeout);
        let mb = |v: Option<u64>, default: u64| v.map_or(default, |mb| mb.saturating_mul(1 << 20));
        let mut wanted: Vec<PathBuf> = Vec::new();
        if table.toolchains.unwrap_or(true)
            && let Some(home) = home
        {
            wanted.extend(TOOLCHAINS.iter().map(|t| home.join(t)));
        }
        let configured = table.read_paths(warnings);
        let mut also_read = Vec::new();
        for path in wanted.iter().chain(&configured) {
            match path.canonicalize() {
                // MiniClaw's own folders hold the key: never, however the person lists them.
                Ok(real)
                    if crate::tools::hidden::own_folders()
                        .iter()
                        .any(|own| own.starts_with(&real) || real.starts_with(own)) =>
                {
                    warnings.push(format!(
                        "[run_command] read `{}` holds MiniClaw's own folders (its key): skipped",
                        path.display()
                    ))
                }
                Ok(real) if !also_read.contains(&real) => also_read.push(real),
                Ok(_) => {}
                Err(_) if configured.contains(path) => warnings.push(format!(
                    "[run_command] read `{}` does not exist: skipped",
                    path.display()
                )),
                Err(_) => {}
            }
        }
        let mut env = Vec::new();
        for (name, value) in &table.env {
            let upper = name.to_ascii_uppercase();
            if SECRET_PARTS.iter().any(|p| upper.contains(p)) {
                warnings.push(format!(
                    "[run_command] env `{name}` looks like a secret and is not given to commands \
                     (the model reads what commands print)"
                ));
            } else {
                env.push((name.clone(), value.clone()));
            }
        }
        Self {
            timeout,
            max_timeout,
            resources: Resources {
                memory_bytes: mb(table.memory_mb, defaults.memory_bytes),
                file_bytes: mb(table.file_mb, defaults.file_bytes),
                processes: table.processes.unwrap_or(defaults.processes),
            },
            max_jobs: table.max_jobs.unwrap_or(DEFAULT_MAX_JOBS),
            max_entries: table
                .max_entries
                .unwrap_or(super::survey::MAX_ENTRIES)
                .max(1),
            also_read,
            env,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_own_folders_and_missing_paths_are_refused_and_timeouts_bounded() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join(".cargo/registry")).unwrap();
        std::fs::write(home.path().join(".cargo/credentials.toml"), "token").unwrap();
        let extra = tempfile::tempdir().unwrap();
        let table = RunCommandSettings {
            timeout_sec: Some(900),
            max_timeout_sec: Some(300),
            read: vec![
                extra.path().display().to_string(),
                "/no/such/folder".into(),
                "relative/path".into(),
            ],
            env: [
                ("RUST_BACKTRACE".to_string(), "1".to_string()),
                ("OPENAI_API_KEY".to_string(), "sk-x".to_string()),
                ("github_token".to_string(), "x".to_string()),
            ]
            .into_iter()
            .collect(),
            ..RunCommandSettings::default()
        };
        let mut warnings = Vec::new();
        let s = CommandSettings::from_settings(&table, Some(home.path()), &mut warnings);
        assert_eq!(s.max_timeout, Duration::from_secs(300));
        assert_eq!(
            s.timeout,
            Duration::from_secs(300),
            "a default above the maximum"
        );
        assert_eq!(s.env, [("RUST_BACKTRACE".to_string(), "1".to_string())]);
        let real_home = home.path().canonicalize().unwrap();
        assert!(s.also_read.contains(&real_home.join(".cargo/registry")));
        assert!(s.also_read.contains(&extra.path().canonicalize().unwrap()));
        assert!(
            !s.also_read
                .iter()
                .any(|p| p.ends_with(".cargo") || p.ends_with("credentials.toml")),
            "{:?}",
            s.also_read
        );
        let said = warnings.join("\n");
        for expected in [
            "OPENAI_API_KEY",
            "github_token",
            "/no/such/folder",
            "relative/path",
        ] {
            assert!(said.contains(expected), "{expected} not warned: {said}");
        }
        let none = CommandSettings::from_settings(
            &RunCommandSettings {
                toolchains: Some(false),
                ..RunCommandSettings::default()
            },
            Some(home.path()),
            &mut Vec::new(),
        );
        assert!(none.also_read.is_empty());
    }
}
