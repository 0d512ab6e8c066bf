//! Where MiniClaw keeps its own files outside the workspace: the user's config folder (keys,
//! plugins) and data folder (log, trust decisions). A leaf: it imports nothing of MiniClaw.

use std::path::PathBuf;
use std::sync::OnceLock;

/// The folders as found the first time they were asked for.
static DIRS: OnceLock<Option<directories::ProjectDirs>> = OnceLock::new();

/// Fixes the config and data folders from the environment MiniClaw was started with. Call
/// first thing in `main`, before any `.env` file is read: nothing a project ships (an
/// `XDG_CONFIG_HOME` line, say) may move MiniClaw's own configuration, trust records, log or
/// key file.
pub fn fix() {
    let _ = dirs();
}

fn dirs() -> Option<&'static directories::ProjectDirs> {
    DIRS.get_or_init(|| directories::ProjectDirs::from("", "", "miniclaw"))
        .as_ref()
}

/// MiniClaw's folder in the user's config directory (`~/.config/miniclaw` on Linux).
pub fn config_dir() -> Option<PathBuf> {
    dirs().map(|d| d.config_dir().to_path_buf())
}

/// MiniClaw's folder in the user's data directory (`~/.local/share/miniclaw` on Linux).
pub fn data_dir() -> Option<PathBuf> {
    dirs().map(|d| d.data_dir().to_path_buf())
}

/// The active session's file inside the workspace.
pub const HISTORY_FILE: &str = "history.json";

/// The log file (`None` when the system has no data directory).
pub fn log_path() -> Option<PathBuf> {
    data_dir().map(|d| d.join("miniclaw.log"))
}
