//! What one jailed command may do, decided by MiniClaw and handed to the supervisor process
//! (`supervisor`) as JSON on its command line: nothing in it is a secret.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Everything the supervisor needs to build the jail and start the command.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Plan {
    /// The workspace (a real path): read, run and written beneath it.
    pub workspace: PathBuf,
    /// Where the command starts (a real path inside the workspace).
    pub working_dir: PathBuf,
    /// The shell command line, run by `shell -c`.
    pub command: String,
    /// The shell (`/bin/sh`).
    pub shell: PathBuf,
    /// Folders and files outside the workspace the command may also read and run (the
    /// toolchains the person allows), as real paths.
    pub also_read: Vec<PathBuf>,
    /// What of the workspace the command may not see or change (found by `tools::command::exposure`).
    pub shielded: Vec<Shielded>,
    /// Folders the jail's own files live in (never inside the workspace).
    pub private: PrivateDirs,
    /// The whole environment of the command.
    pub env: Vec<(String, String)>,
    /// What of the network it reaches.
    pub network: Network,
    /// Its resource limits.
    pub limits: Resources,
}

/// One entry of the workspace the command may not change.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Shielded {
    /// Hidden (a key file, MiniClaw's own): an empty, read-only stand-in covers it.
    Hidden(PathBuf),
    /// Kept read-only (`.git`, `AGENTS.md`, MiniClaw's project configuration): readable, never
    /// written, moved or removed.
    ReadOnly(PathBuf),
}

/// The jail's private folders (made by MiniClaw, owned by the person, mode 0700).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PrivateDirs {
    /// The command's temporary folder (`TMPDIR`), the one place outside the workspace it writes.
    pub tmp: PathBuf,
    /// An empty file, the stand-in for a hidden file.
    pub empty_file: PathBuf,
    /// An empty folder, the stand-in for a hidden folder.
    pub empty_dir: PathBuf,
}

/// What of the network a command reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Network {
    /// Nothing outside the machine: a private network namespace of its own with loopback only.
    Off,
    /// The session's private network namespace (loopback shared with the session's other
    /// commands and jobs), held by the holder process of this id.
    Session {
        /// The holder's process id (a child of MiniClaw, alive while the session is).
        holder: u32,
    },
    /// The machine's network (the person said yes to this command).
    On,
}

/// Resource limits of a command (each process of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Resources {
    /// Writable memory per process (`RLIMIT_DATA`), bytes.
    pub memory_bytes: u64,
    /// The largest file it may write (`RLIMIT_FSIZE`), bytes.
    pub file_bytes: u64,
    /// How many processes it may run at once.
    pub processes: u64,
}

impl Default for Resources {
    fn default() -> Self {
        Self {
            memory_bytes: 4 << 30,
            file_bytes: 1 << 30,
            processes: 256,
        }
    }
}
