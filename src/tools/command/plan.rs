//! One command's plan: its folder checked against the workspace rules, the shields found, the
//! fixed environment; and after it ran, anything it made under a shielded name moved aside.

use std::path::{Path, PathBuf};

use crate::jail::{Jail, Network, Plan};
use crate::tools::process;
use crate::tools::registry::{ToolContext, ToolError};
use crate::tools::support::blocking;

use super::exposure;
use super::settings::CommandSettings;
use super::survey::{Found, survey};
use crate::tools::sandbox::Sandbox;

/// A command ready to start.
pub struct Prepared {
    /// What the supervisor gets.
    pub plan: Plan,
    /// Its folder as shown (relative to the workspace; `.` for the root).
    pub shown_dir: String,
    /// The shielded entries before it ran.
    pub before: Vec<PathBuf>,
    /// The files the walk found before it ran (taken for the manifest).
    pub found: Vec<Found>,
}

/// Plans `command` in `working_dir` (relative; default the workspace).
pub async fn prepare(
    jail: &Jail,
    settings: &CommandSettings,
    ctx: &ToolContext,
    command: &str,
    working_dir: Option<&str>,
    network: bool,
) -> Result<Prepared, ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::InvalidArguments("`command` is empty".into()));
    }
    if command.contains('\0') {
        return Err(ToolError::InvalidArguments(
            "`command` holds a NUL byte".into(),
        ));
    }
    let dir = working_dir
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .unwrap_or(".");
    let real_dir = ctx.sandbox.resolve_read(dir)?;
    if !real_dir.is_dir() {
        return Err(ToolError::failed(format!(
            "`{dir}` is not a folder of the workspace"
        )));
    }
    let shown = ctx.sandbox.display_relative(&real_dir);
    let shown_dir = if shown.is_empty() {
        ".".to_string()
    } else {
        shown
    };
    let network = if network {
        Network::On
    } else {
        jail.session_network().await
    };
    let root = ctx.sandbox.root().to_path_buf();
    let walk_root = root.clone();
    // Walking the workspace for its shields and its files: off the async runtime.
    let walked = blocking(move || Ok(survey(&walk_root))).await?;
    let shielded = walked.shielded;
    let before = exposure::paths(&shielded);
    let plan = Plan {
        env: environment(&root, settings, &jail.private().tmp),
        workspace: root,
        working_dir: real_dir,
        command: command.to_string(),
        shell: PathBuf::from("/bin/sh"),
        also_read: settings.also_read.clone(),
        shielded,
        private: jail.private().clone(),
        network,
        limits: settings.resources,
    };
    Ok(Prepared {
        plan,
        shown_dir,
        before,
        found: walked.files,
    })
}

/// The command's whole environment: a short fixed list and the person's additions; never a
/// key (the keys left MiniClaw's environment at start, and nothing else is passed on).
fn environment(root: &Path, settings: &CommandSettings, tmp: &Path) -> Vec<(String, String)> {
    let from_parent = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let mut env = vec![
        ("PATH".to_string(), process::safe_path(root)),
        (
            "LANG".to_string(),
            from_parent("LANG").unwrap_or_else(|| "C.UTF-8".into()),
        ),
        ("TERM".to_string(), "dumb".to_string()),
        ("TMPDIR".to_string(), tmp.display().to_string()),
        // The person's ~/.gitconfig is out of reach (it may name credentials), and git stops
        // at a config file it cannot read: it is not read at all.
        ("GIT_CONFIG_GLOBAL".to_string(), "/dev/null".to_string()),
    ];
    for name in ["HOME", "USER"] {
        if let Some(value) = from_parent(name) {
            env.push((name.to_string(), value));
        }
    }
    for (name, value) in &settings.env {
        env.retain(|(n, _)| n != name);
        env.push((name.clone(), value.clone()));
    }
    env
}

/// Moves out of the workspace whatever a command made under a shielded name (a new
/// `.mcp.json`, `AGENTS.md`, `.env`, `.git`) since the shielded entries were `before`: nothing
/// a command writes becomes configuration. Blocking file work. Returns the paths moved (as
/// shown) and the files the walk found (for the manifest).
pub fn quarantine(sandbox: &Sandbox, before: &[PathBuf]) -> (Vec<String>, Vec<Found>) {
    let walked = survey(sandbox.root());
    let now = exposure::paths(&walked.shielded);
    let mut moved = Vec::new();
    for path in now.into_iter().filter(|p| !before.contains(p)) {
        let shown = sandbox.display_relative(&path);
        match move_aside(&path, &shown) {
            Ok(to) => {
                tracing::warn!(path = %shown, to = %to.display(), "a command made a shielded entry: moved aside");
                moved.push(shown);
            }
            Err(e) => {
                tracing::warn!(path = %shown, error = %e, "could not move a shielded entry aside")
            }
        }
    }
    (moved, walked.files)
}

/// Moves `path` into MiniClaw's data folder (`quarantine/<time>/<shown>`), never deleting it.
fn move_aside(path: &Path, shown: &str) -> std::io::Result<PathBuf> {
    let data = crate::paths::data_dir()
        .ok_or_else(|| std::io::Error::other("this system has no data folder to move it to"))?;
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
    let to = data.join("quarantine").join(stamp).join(shown);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    match std::fs::rename(path, &to) {
        Ok(()) => Ok(to),
        // Another file system: copied there, then removed here.
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
            copy_tree(path, &to)?;
            if path.is_dir() {
                std::fs::remove_dir_all(path)?;
            } else {
                std::fs::remove_file(path)?;
            }
            Ok(to)
        }
        Err(e) => Err(e),
    }
}

/// Copies a file or folder tree (links copied as links, never followed).
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(from)?;
    if meta.file_type().is_symlink() {
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to)
    } else if meta.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}
