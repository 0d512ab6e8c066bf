//! The real binary, set up for headless runs. Not part of `support/mod.rs`: the examples
//! include that too, and only tests know where the binary is (`CARGO_BIN_EXE_*`).

use std::process::Command;

/// `miniclaw-tui` run from a folder without plugin tools of its own (the repository has some,
/// which need trust), with no model, workspace or config folder coming from outside.
pub fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
    c.current_dir(std::env::temp_dir())
        .env_remove("DEEPSEEK_MODEL")
        .env_remove("MINICLAW_WORKSPACE")
        .env("HOME", std::env::temp_dir())
        .env(
            "XDG_CONFIG_HOME",
            std::env::temp_dir().join("miniclaw-test-no-config"),
        );
    c
}
