//! Where MiniClaw keeps its own files outside the workspace: the user's config folder (keys,
//! plugins) and data folder (log, trust decisions). A leaf: it imports nothing of MiniClaw.

use std::path::PathBuf;

/// MiniClaw's folder in the user's config directory (`~/.config/miniclaw` on Linux).
pub fn config_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "miniclaw").map(|d| d.config_dir().to_path_buf())
}

/// MiniClaw's folder in the user's data directory (`~/.local/share/miniclaw` on Linux).
pub fn data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "miniclaw").map(|d| d.data_dir().to_path_buf())
}

/// The active session's file inside the workspace.
pub const HISTORY_FILE: &str = "history.json";

/// The log file (`None` when the system has no data directory).
pub fn log_path() -> Option<PathBuf> {
    data_dir().map(|d| d.join("miniclaw.log"))
}
