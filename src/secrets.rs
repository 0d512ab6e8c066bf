//! API keys, taken out of the process environment at start, held as [`Secret`]s, and saved to
//! the key file (`key_file`).
//!
//! A child process of the same user can read `/proc/<pid>/environ`, which shows the environment
//! the process was started with, whatever `unsetenv` did later. So each key is copied into this
//! store, its bytes in the environment block are overwritten in place, and the variable is
//! removed: no tool, plugin or server MiniClaw starts can find it there.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use crate::env_files::Origin;

/// The key file, `<config dir>/miniclaw/.env`: read, watched and written atomically.
pub(crate) mod key_file;

/// The variables that hold keys.
pub const SECRET_VARS: [&str; 2] = ["DEEPSEEK_API_KEY", "SERPAPI_KEY"];

static STORE: OnceLock<BTreeMap<String, (String, Origin)>> = OnceLock::new();

unsafe extern "C" {
    /// The C library's environment array.
    static mut environ: *const *mut libc::c_char;
}

/// Moves every key out of the environment into the store: [`SECRET_VARS`] and `more` (the
/// variables providers name in the settings files), each from the environment or, where that
/// has none, from the `.env` files (`env_files`: the project's first, for the names it may
/// set). An empty value is no key. Call once, first thing in `main`, after `env_files::load`
/// and before any other thread starts.
pub fn take_from_environment(more: &[String]) {
    let files = crate::env_files::loaded();
    let mut found = BTreeMap::new();
    let names = SECRET_VARS.iter().map(|n| n.to_string());
    for name in names.chain(more.iter().cloned()) {
        if let Some((value, origin)) = files.lookup(&name) {
            found.insert(name.clone(), (value.trim().to_string(), origin));
        }
        scrub(&name);
    }
    let _ = STORE.set(found);
}

/// The key in `name`: from the store once it was filled, else (library use, tests) from the
/// environment. An empty value is no key.
pub fn get(name: &str) -> Option<String> {
    match STORE.get() {
        Some(store) => store.get(name).map(|(value, _)| value.clone()),
        None => std::env::var(name)
            .ok()
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty()),
    }
}

/// Where the key in `name` came from (`None`: no key, or the store was never filled).
pub fn origin(name: &str) -> Option<Origin> {
    STORE.get()?.get(name).map(|(_, origin)| *origin)
}

/// Overwrites the value of every `name=` entry of the environment block in place, then removes
/// the variable.
fn scrub(name: &str) {
    let prefix = format!("{name}=");
    // SAFETY: called from `take_from_environment` while the process has a single thread, so
    // nothing reads or changes the environment at the same time; each entry is a NUL-ended
    // string that we only overwrite up to its own NUL.
    unsafe {
        let mut entry = environ;
        while !entry.is_null() && !(*entry).is_null() {
            let text = *entry;
            let bytes = std::ffi::CStr::from_ptr(text).to_bytes();
            if bytes.starts_with(prefix.as_bytes()) {
                let value = text.add(prefix.len());
                std::ptr::write_bytes(value, b'x', bytes.len() - prefix.len());
            }
            entry = entry.add(1);
        }
        std::env::remove_var(name);
    }
}

/// Where keys are best kept: `<config dir>/miniclaw/.env`, outside every workspace (shown as
/// the real path when the system has a config folder).
pub fn recommended_key_file() -> String {
    key_file::path()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|| "<config dir>/miniclaw/.env".into())
}

/// The sentence shown when no key is configured.
pub fn missing_key_message() -> String {
    format!(
        "No DeepSeek API key: set DEEPSEEK_API_KEY in {} (the recommended place), in the environment, or in ./.env.",
        recommended_key_file()
    )
}

/// A key held in memory. Its `Debug` never shows it and it has no `Display`, so it cannot reach a
/// log, a panic message or a screen by accident; [`Secret::expose`] is the one way to read it.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Holds `key` as it is.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the `Authorization` header or the key file only.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether it holds nothing.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many characters it has (what a mask shows).
    pub fn chars(&self) -> usize {
        self.0.chars().count()
    }

    /// Adds a character at the end (typing it).
    pub fn push(&mut self, c: char) {
        self.0.push(c);
    }

    /// Removes the last character (Backspace).
    pub fn pop(&mut self) {
        self.0.pop();
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}
