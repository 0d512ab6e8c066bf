//! The log file: `<data dir>/miniclaw/miniclaw.log`, MiniClaw's own events only.
//!
//! Only the `miniclaw` target is recorded, so libraries' debug logs (which may print URLs with
//! query strings) never reach the file; MiniClaw itself never logs keys or request headers.

use std::path::PathBuf;
use std::sync::Mutex;

/// Starts writing the log; the level comes from `MINICLAW_LOG` (default `info`).
/// Returns the path written to, or `None` when the file could not be opened (logging is then off).
pub fn init() -> Option<PathBuf> {
    let path = crate::paths::log_path()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).ok()?;
    }
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .ok()?;
    let level = std::env::var("MINICLAW_LOG")
        .ok()
        .filter(|l| ["error", "warn", "info", "debug", "trace"].contains(&l.as_str()))
        .unwrap_or_else(|| "info".into());
    let filter = tracing_subscriber::EnvFilter::new(format!("miniclaw={level}"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(Mutex::new(file))
        .try_init()
        .ok()?;
    Some(path)
}
