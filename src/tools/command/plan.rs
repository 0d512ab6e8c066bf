//! One command's plan: its folder checked against the workspace rules, the shields found, the
//! fixed environment; and after it ran, anything it made under a shielded name moved aside.

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::jail::{Jail, Network, Plan};
use crate::tools::hidden;
use crate::tools::process;
use crate::tools::registry::{ToolContext, ToolError};
use crate::tools::support::blocking;

use super::exposure;
use super::settings::CommandSettings;
use super::survey::{Found, Survey, survey};
use crate::tools::sandbox::Sandbox;

/// A command ready to start.
pub struct Prepared {
    /// What the supervisor gets.
    pub plan: Plan,
    /// Its folder as shown (relative to the workspace; `.` for the root).
    pub shown_dir: String,
    /// The device and inode of each shielded entry before it ran.
    pub before: Shields,
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
    let max_entries = settings.max_entries;
    let walked = blocking(move || Ok(settled_survey(&walk_root, max_entries))).await?;
    if walked.cut {
        return Err(ToolError::failed(format!(
            "the workspace holds more than {max_entries} files and folders, more than MiniClaw \
             looks at to keep .git, .env and configuration out of a command's reach, so the \
             command did not run; remove what is not needed (generated files), or raise \
             `max_entries` under [run_command] in your config.toml"
        )));
    }
    if walked.disturbed {
        return Err(ToolError::failed(
            "the workspace kept changing while MiniClaw checked it (a background job moving \
             folders?), so the command did not run; stop the job or try again",
        ));
    }
    let before = Shields(walked.shielded_ids.clone());
    let shielded = walked.shielded;
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

/// The device and inode of each shielded entry at one moment.
#[derive(Clone, Debug, Default)]
pub struct Shields(HashSet<(u64, u64)>);

/// How many times a walk disturbed by a changing tree is tried.
const WALK_TRIES: usize = 3;

/// A walk of the workspace, tried again while the tree changes under it.
fn settled_survey(root: &Path, max_entries: usize) -> Survey {
    let mut walked = survey(root, max_entries);
    for _ in 1..WALK_TRIES {
        if !walked.disturbed {
            break;
        }
        walked = survey(root, max_entries);
    }
    walked
}

/// What the walk after a command found and did.
pub struct Quarantined {
    /// The paths moved aside (as shown).
    pub moved: Vec<String>,
    /// The files it found (for the manifest).
    pub found: Vec<Found>,
    /// Why the walk could not cover the whole workspace, if it could not.
    pub warning: Option<String>,
}

/// Moves out of the workspace whatever a command made under a shielded name (a new
/// `.mcp.json`, `AGENTS.md`, `.env`, `.git`, or one swapped in for the old one by renaming its
/// folder) — any such entry that is not one of `before` by its device and inode: nothing a
/// command writes becomes configuration. Blocking file work.
pub fn quarantine(sandbox: &Sandbox, before: &Shields, max_entries: usize) -> Quarantined {
    let walked = settled_survey(sandbox.root(), max_entries);
    let mut moved = Vec::new();
    // One folder for what one walk moves.
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ").to_string();
    let own = hidden::own_folders_in(sandbox.root());
    for path in exposure::paths(&walked.shielded) {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if before.0.contains(&(meta.dev(), meta.ino())) {
            continue;
        }
        let shown = sandbox.display_relative(&path);
        if shown.is_empty() || own.contains(&path) {
            continue;
        }
        match move_aside(sandbox, &shown, &stamp) {
            Ok(to) => {
                tracing::warn!(path = %shown, to = %to, "a command made a shielded entry: moved aside");
                moved.push(shown);
            }
            Err(e) => {
                tracing::warn!(path = %shown, error = %e, "could not move a shielded entry aside")
            }
        }
    }
    let warning = if walked.cut {
        Some(format!(
            "the workspace now holds more than {max_entries} files and folders: configuration \
             files made deeper were not looked for, and later commands are refused until it is \
             smaller"
        ))
    } else if walked.disturbed {
        Some(
            "the workspace kept changing while MiniClaw checked it (a background job?): \
             configuration files made by commands may not all have been moved aside"
                .to_string(),
        )
    } else {
        None
    };
    Quarantined {
        moved,
        found: walked.files,
        warning,
    }
}

/// The folder inside the workspace that holds what was moved aside (MiniClaw's own, which
/// neither the tools nor commands can reach).
const QUARANTINE_DIR: &str = ".miniclaw/quarantine";

/// Moves the workspace entry `shown` (relative) into `.miniclaw/quarantine/<time>/`, through
/// the workspace's own handle: no link is followed on the way, so nothing outside the
/// workspace is ever moved (a folder swapped for a link during the walk leads nowhere).
/// Returns where it went, as shown.
fn move_aside(sandbox: &Sandbox, shown: &str, stamp: &str) -> std::io::Result<String> {
    let folder = format!("{QUARANTINE_DIR}/{stamp}");
    let dir = sandbox.dir();
    // MiniClaw's own folder made by the command cannot go inside itself: renamed beside it, to
    // a name nothing loads.
    if shown == ".miniclaw" {
        let to = format!(".miniclaw.moved-{stamp}");
        dir.rename(shown, dir, &to)?;
        return Ok(to);
    }
    // A planted link in MiniClaw's place would send the entry elsewhere in the workspace.
    for part in [".miniclaw", QUARANTINE_DIR] {
        match dir.symlink_metadata(part) {
            Ok(meta) if !meta.is_dir() => {
                return Err(std::io::Error::other(format!("{part} is not a folder")));
            }
            _ => {}
        }
    }
    dir.create_dir_all(&folder)?;
    // No part of the name it is kept under is a shielded one any more.
    let to = format!("{folder}/moved%{}", shown.replace('/', "%"));
    dir.rename(shown, dir, &to)?;
    Ok(to)
}
