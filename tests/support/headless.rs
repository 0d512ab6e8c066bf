//! The real binary, set up for headless runs. Not part of `support/mod.rs`: the examples
//! include that too, and only tests know where the binary is (`CARGO_BIN_EXE_*`).

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// `miniclaw-tui` run from a folder without plugin tools of its own (the repository has some,
/// which need trust), with no model, workspace or config folder coming from outside.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
    c.current_dir(std::env::temp_dir())
        .env_remove("DEEPSEEK_MODEL")
        .env_remove("MINICLAW_PROVIDER")
        .env_remove("MINICLAW_WORKSPACE")
        .env("HOME", std::env::temp_dir())
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("miniclaw-test-no-config"),
        );
    c
}

/// The binary on workspace `ws` talking to `url`.
pub fn headless(ws: &Path, url: &str) -> Command {
    let mut c = bin();
    c.args(["--workspace", ws.to_str().unwrap()])
        .env("DEEPSEEK_API_KEY", "sk-x")
        .env("DEEPSEEK_BASE_URL", url);
    c
}

/// Bytes as text, for messages.
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The session id saved in the workspace's history.
pub fn history_id(ws: &Path) -> Value {
    let history: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join("history.json")).unwrap()).unwrap();
    history["id"].clone()
}

/// A child's stderr (the step trace) read as it comes, on a thread of its own.
pub struct LiveStderr {
    text: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: std::thread::JoinHandle<()>,
}

impl LiveStderr {
    /// Takes over `child`'s stderr (spawned with `Stdio::piped()`).
    pub fn of(child: &mut std::process::Child) -> Self {
        use std::io::Read;
        let mut stderr = child.stderr.take().expect("stderr piped");
        let text = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let t = text.clone();
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = stderr.read(&mut buf) {
                t.lock().unwrap().extend_from_slice(&buf[..n]);
            }
        });
        Self { text, reader }
    }

    /// What came so far.
    pub fn text(&self) -> String {
        text(&self.text.lock().unwrap())
    }

    /// Waits until `line` has come; fails showing what did.
    pub fn wait_for(&self, line: &str) {
        crate::support::wait::poll(
            &format!("{line:?} on stderr"),
            crate::support::wait::WAIT,
            || self.text().contains(line).then_some(()),
            || self.text(),
        );
    }

    /// All of it, once the child has closed it.
    pub fn finish(self) -> String {
        self.reader.join().unwrap();
        text(&self.text.lock().unwrap())
    }
}
