//! The two `.env` files and what each may set.
//!
//! - `<config dir>/miniclaw/.env` is the person's own: its lines count as environment variables
//!   (the real environment wins), except proxy variables, which only the real environment sets.
//! - The project's `./.env` is input nobody checked (a cloned repository ships one). It is read
//!   into settings, never into the process environment, and only the names of
//!   [`PROJECT_NAMES`] count; every other line is ignored with one warning naming it. Its
//!   `DEEPSEEK_BASE_URL` counts only together with its own key (see `config`).
//!
//! Precedence for a name: the real environment, then the project's file, then the person's
//! file. An empty value counts as not set. A leaf: it imports nothing of MiniClaw but
//! `capped_read`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::capped_read::{Links, read_capped_string};

/// What a project's `./.env` may set: MiniClaw's own keys and the model and search settings
/// that go with them.
pub const PROJECT_NAMES: [&str; 8] = [
    "DEEPSEEK_API_KEY",
    "DEEPSEEK_BASE_URL",
    "DEEPSEEK_MODEL",
    "SERPAPI_KEY",
    "SERPAPI_LOCATION",
    "SERPAPI_HL",
    "SERPAPI_GL",
    "SERPAPI_GOOGLE_DOMAIN",
];

/// Variables that send requests through another server: only the real environment sets them
/// (any letter case).
const PROXY_NAMES: [&str; 4] = ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"];

/// The most of a `.env` file read: real ones are a few lines.
pub const MAX_ENV_FILE_BYTES: u64 = 64 * 1024;

/// Where a setting came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The environment MiniClaw was started with.
    Environment,
    /// The project's `./.env`.
    Project,
    /// The person's `<config dir>/miniclaw/.env`.
    UserFile,
}

/// What the two files said, read once at start.
#[derive(Default)]
pub struct EnvFiles {
    /// The real environment's names with a non-empty value, before any file was read.
    environment: BTreeSet<String>,
    /// The project file's allowed lines with a non-empty value.
    project: BTreeMap<String, String>,
    /// The person's file's lines with a non-empty value.
    user: BTreeMap<String, String>,
    /// Every name either file has a line for, ignored ones included.
    mentioned: BTreeSet<String>,
    /// The project file, if there was one.
    project_path: Option<PathBuf>,
    /// What could not be read or was ignored (names and line numbers, never values).
    pub warnings: Vec<String>,
}

impl std::fmt::Debug for EnvFiles {
    // Values may be keys: only names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnvFiles")
            .field("environment", &self.environment)
            .field("project", &self.project.keys().collect::<Vec<_>>())
            .field("user", &self.user.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

static LOADED: OnceLock<EnvFiles> = OnceLock::new();

/// Whether `name` is a proxy variable (any letter case).
pub fn is_proxy_name(name: &str) -> bool {
    PROXY_NAMES.iter().any(|p| p.eq_ignore_ascii_case(name))
}

/// Reads `project` (the folder MiniClaw starts in's `.env`) and `user` (the person's key
/// file), and puts the person's lines into the process environment where the variable is not
/// set (so the flags' environment defaults see them). Call once, first thing in `main`, before
/// any thread starts (it sets process environment). Later calls return the first reading.
pub fn load(project: &Path, user: Option<&Path>) -> &'static EnvFiles {
    LOADED.get_or_init(|| {
        let files = EnvFiles::read(project, user, environment_names());
        for (name, value) in &files.user {
            if !files.environment.contains(name) && !is_proxy_name(name) {
                // SAFETY: called first thing in `main`, before any other thread exists.
                unsafe { std::env::set_var(name, value) };
            }
        }
        files
    })
}

/// The files as read at start (if `load` was not called, as in library use and tests: no
/// files, the environment as it is now).
pub fn loaded() -> &'static EnvFiles {
    LOADED.get_or_init(|| EnvFiles {
        environment: environment_names(),
        ..EnvFiles::default()
    })
}

/// The names the environment sets now, with a non-empty value.
fn environment_names() -> BTreeSet<String> {
    std::env::vars_os()
        .filter(|(_, value)| !value.is_empty())
        .filter_map(|(name, _)| name.into_string().ok())
        .collect()
}

impl EnvFiles {
    /// Reads both files; `environment` holds the names the real environment sets (non-empty).
    pub fn read(project: &Path, user: Option<&Path>, environment: BTreeSet<String>) -> Self {
        let mut files = EnvFiles {
            environment,
            ..EnvFiles::default()
        };
        let user_lines = user
            .map(|p| parse(p, Scope::Person, &mut files.warnings))
            .unwrap_or_default();
        // Started inside the config folder: the project's file is the person's own.
        let same = user.is_some_and(|u| same_file(u, project));
        let project_lines = if same {
            Vec::new()
        } else {
            parse(project, Scope::Project, &mut files.warnings)
        };
        if !project_lines.is_empty() {
            files.project_path = Some(project.to_path_buf());
        }
        let mut ignored = Vec::new();
        for (name, value) in project_lines {
            files.mentioned.insert(name.clone());
            if !PROJECT_NAMES.contains(&name.as_str()) {
                if !ignored.contains(&name) {
                    ignored.push(name);
                }
            } else if !value.trim().is_empty() {
                // The first line of a name counts, as for the key file.
                files.project.entry(name).or_insert(value);
            }
        }
        let mut proxies = Vec::new();
        for (name, value) in user_lines {
            files.mentioned.insert(name.clone());
            if is_proxy_name(&name) {
                proxies.push(name);
            } else if !value.trim().is_empty() {
                files.user.entry(name).or_insert(value);
            }
        }
        if !ignored.is_empty() {
            files.warnings.push(format!(
                "{} sets {}, which a project's .env may not set (it counts only for {}); ignored. Set them in the environment or in {} if you want them.",
                project.display(),
                ignored.join(", "),
                PROJECT_NAMES.join(", "),
                user.map(|p| p.display().to_string())
                    .unwrap_or_else(|| "<config dir>/miniclaw/.env".into())
            ));
        }
        if !proxies.is_empty() {
            files.warnings.push(format!(
                "{} sets {}: proxy variables count only from the environment MiniClaw starts in; ignored.",
                user.map(|p| p.display().to_string()).unwrap_or_default(),
                proxies.join(", ")
            ));
        }
        files
    }

    /// The value of `name` and where it came from: the real environment, then the project's
    /// file (allowed names only), then the person's file. Empty counts as not set.
    pub fn lookup(&self, name: &str) -> Option<(String, Origin)> {
        if let Some(value) = self.environment_value(name) {
            return Some((value, Origin::Environment));
        }
        self.file_value(name)
    }

    /// The environment's value of `name`, read now, when it is the real environment's: a name
    /// that a file set into the environment (the person's lines) does not count here.
    fn environment_value(&self, name: &str) -> Option<String> {
        if self.mentioned.contains(name) && !self.environment.contains(name) {
            return None;
        }
        std::env::var(name).ok().filter(|v| !v.trim().is_empty())
    }

    /// The value of `name` in the files alone (project first), and which one.
    pub fn file_value(&self, name: &str) -> Option<(String, Origin)> {
        if let Some(value) = self.project.get(name) {
            return Some((value.clone(), Origin::Project));
        }
        self.user
            .get(name)
            .map(|value| (value.clone(), Origin::UserFile))
    }

    /// Whether the real environment sets `name` (non-empty).
    pub fn in_environment(&self, name: &str) -> bool {
        self.environment_value(name).is_some()
    }

    /// The value of `name` that the person chose (the environment, then their own file),
    /// never the project's: for settings a project may not steer, such as where a key goes.
    pub fn personal(&self, name: &str) -> Option<String> {
        self.environment_value(name)
            .or_else(|| self.user.get(name).cloned())
    }

    /// The project's value of `name`, whatever wins over it.
    pub fn project_value(&self, name: &str) -> Option<&str> {
        self.project.get(name).map(String::as_str)
    }

    /// The project's `.env`, when it had lines.
    pub fn project_path(&self) -> Option<&Path> {
        self.project_path.as_deref()
    }
}

/// Whose file is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    /// The person's own: `$NAME` substitution from the environment, as dotenv files do.
    Person,
    /// A project's: values are taken literally.
    Project,
}

/// Whether two paths name the same file.
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The `NAME=value` lines of a `.env` file (none if it is missing). A line that does not parse
/// is reported by its number, never its text (it may hold a key); the others still count. In a
/// project's file a line holding `$` is ignored with a warning: dotenv substitution would fill
/// in any variable of the real environment (`DEEPSEEK_API_KEY=${GITHUB_TOKEN}`) and send it to
/// the project's server.
fn parse(path: &Path, scope: Scope, warnings: &mut Vec<String>) -> Vec<(String, String)> {
    let text = match read_capped_string(path, MAX_ENV_FILE_BYTES, Links::Follow) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Vec::new(),
        Err(e) => {
            warnings.push(format!("{e}; it was not read."));
            return Vec::new();
        }
    };
    let text = match scope {
        Scope::Person => text,
        Scope::Project => literal_lines(path, &text, warnings),
    };
    let mut lines = Vec::new();
    for item in dotenvy::from_read_iter(text.as_bytes()) {
        match item {
            Ok(pair) => lines.push(pair),
            Err(dotenvy::Error::LineParse(line, _)) => {
                let number = text
                    .lines()
                    .position(|l| l.trim() == line.trim())
                    .map(|i| format!(" line {}", i + 1))
                    .unwrap_or_default();
                warnings.push(format!(
                    "{}:{number} is not NAME=value and was skipped; the other lines were read.",
                    path.display()
                ));
            }
            Err(e) => warnings.push(format!("Could not read {}: {e}", path.display())),
        }
    }
    lines
}

/// `text` without its lines that hold `$`, with one warning naming their numbers.
fn literal_lines(path: &Path, text: &str, warnings: &mut Vec<String>) -> String {
    let mut kept = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.contains('$') {
            dropped.push((i + 1).to_string());
        } else {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    if !dropped.is_empty() {
        warnings.push(format!(
            "{} line {} uses `$`, which a project's .env may not (it would copy another variable of your environment); ignored.",
            path.display(),
            dropped.join(", ")
        ));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(project: &str, user: &str, env: &[&str]) -> EnvFiles {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("project.env");
        let u = dir.path().join("user.env");
        std::fs::write(&p, project).unwrap();
        std::fs::write(&u, user).unwrap();
        let env = env.iter().map(|n| n.to_string()).collect();
        EnvFiles::read(&p, Some(&u), env)
    }

    #[test]
    fn a_project_sets_only_the_allowed_names_and_one_warning_names_the_rest() {
        let f = files(
            "XDG_CONFIG_HOME=/proc/self/cwd/.cfg\nXDG_DATA_HOME=x\nSERPAPI_BASE_URL=http://evil\nHTTP_PROXY=http://evil:1\nMINICLAW_APPROVAL=auto\nDEEPSEEK_MODEL=deepseek-v4-pro\nSERPAPI_HL=de\n",
            "",
            &[],
        );
        for name in [
            "XDG_CONFIG_HOME",
            "XDG_DATA_HOME",
            "SERPAPI_BASE_URL",
            "HTTP_PROXY",
            "MINICLAW_APPROVAL",
        ] {
            assert_eq!(f.lookup(name), None, "{name}");
        }
        assert_eq!(
            f.lookup("DEEPSEEK_MODEL"),
            Some(("deepseek-v4-pro".into(), Origin::Project))
        );
        assert_eq!(f.warnings.len(), 1, "{:?}", f.warnings);
        let w = &f.warnings[0];
        assert!(
            w.contains(
                "XDG_CONFIG_HOME, XDG_DATA_HOME, SERPAPI_BASE_URL, HTTP_PROXY, MINICLAW_APPROVAL"
            ),
            "{w}"
        );
        assert!(!w.contains("/proc/self") && !w.contains("evil"), "{w}");
    }

    #[test]
    fn an_empty_key_is_no_key_and_the_project_wins_over_the_person_s_file() {
        let f = files("DEEPSEEK_API_KEY=\n", "DEEPSEEK_API_KEY=sk-user\n", &[]);
        assert_eq!(
            f.lookup("DEEPSEEK_API_KEY"),
            Some(("sk-user".into(), Origin::UserFile))
        );
        let f = files(
            "DEEPSEEK_API_KEY=sk-proj\n",
            "DEEPSEEK_API_KEY=sk-user\n",
            &[],
        );
        assert_eq!(
            f.lookup("DEEPSEEK_API_KEY").map(|(_, o)| o),
            Some(Origin::Project)
        );
        assert_eq!(f.personal("DEEPSEEK_API_KEY").as_deref(), Some("sk-user"));
    }

    #[test]
    fn a_project_line_holding_a_dollar_is_ignored_never_filled_in_from_the_environment() {
        // SAFETY: a name no other test reads; the value is what substitution would copy.
        unsafe { std::env::set_var("MINICLAW_TEST_OTHER_SECRET", "sk-other-CANARY") };
        let f = files(
            "DEEPSEEK_API_KEY=${MINICLAW_TEST_OTHER_SECRET}\nDEEPSEEK_MODEL=$MINICLAW_TEST_OTHER_SECRET\nSERPAPI_HL=de\n",
            "DEEPSEEK_API_KEY=sk-first\nDEEPSEEK_API_KEY=sk-second\n",
            &[],
        );
        assert_eq!(
            f.lookup("DEEPSEEK_API_KEY"),
            Some(("sk-first".into(), Origin::UserFile)),
            "no project key, and the first of the person's lines"
        );
        assert_eq!(f.lookup("DEEPSEEK_MODEL"), None);
        assert_eq!(f.lookup("SERPAPI_HL").map(|(v, _)| v), Some("de".into()));
        assert!(
            f.warnings.iter().any(|w| w.contains("line 1, 2 uses `$`")),
            "{:?}",
            f.warnings
        );
        assert!(f.warnings.iter().all(|w| !w.contains("CANARY")));
    }

    #[test]
    fn proxies_count_only_from_the_real_environment() {
        let f = files("", "https_proxy=http://p:1\nDEEPSEEK_MODEL=m\n", &[]);
        assert_eq!(f.lookup("https_proxy"), None);
        assert_eq!(f.lookup("DEEPSEEK_MODEL").map(|(v, _)| v), Some("m".into()));
        assert!(
            f.warnings.iter().any(|w| w.contains("https_proxy")),
            "{:?}",
            f.warnings
        );
        assert!(is_proxy_name("http_proxy") && is_proxy_name("No_Proxy"));
    }

    #[test]
    fn a_broken_line_is_named_by_number_never_by_its_text() {
        let f = files("DEEPSEEK_MODEL=m\nthis is sk-secret not a line\n", "", &[]);
        assert_eq!(f.lookup("DEEPSEEK_MODEL").map(|(v, _)| v), Some("m".into()));
        assert!(
            f.warnings.iter().any(|w| w.contains("line 2")),
            "{:?}",
            f.warnings
        );
        assert!(f.warnings.iter().all(|w| !w.contains("sk-secret")));
        assert!(!format!("{f:?}").contains("sk-"));
    }
}
