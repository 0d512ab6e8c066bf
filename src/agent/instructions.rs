//! Project instructions: the workspace's `AGENTS.md` (the file Codex CLI and other agents read)
//! joins the system prompt, so every request of the session carries it.
//!
//! The system message is rebuilt whenever the instructions are loaded (at start), also for a
//! session continued from `history.json`: the stored one may be older than the file (or than
//! this program's default prompt), and the model should follow the project as it is now.

use super::blocking::off_runtime;
use super::history::{Checkpoints, RememberedInstructions};
use super::session::SYSTEM_PROMPT;
use super::turn::Agent;
use crate::tools::{Sandbox, ToolError};

/// The instructions file, at the workspace root.
pub const INSTRUCTIONS_FILE: &str = "AGENTS.md";

/// The most of the file that reaches the system prompt, in bytes. About 8,000 tokens: room for
/// any sensible set of instructions, while a huge file cannot eat the context budget that every
/// request pays for again.
pub const MAX_INSTRUCTIONS_BYTES: usize = 32 * 1024;

/// What `/init` asks the model: to look at the project with its tools and write a first
/// `AGENTS.md`. (The tools may write `AGENTS.md`, but it is configuration: the write asks the
/// person in every approval mode, so `/init` goes through that same question.)
pub const INIT_PROMPT: &str = "Write a short starter AGENTS.md for this project, at the workspace root. \
First look at the project with your tools: list its folders, read its README, its build and \
package files (Cargo.toml, package.json, pyproject.toml, Makefile and the like) and a few central \
source files. Then write AGENTS.md with write_text_file, in Markdown, at most about 60 lines: what \
the project is, how it is laid out, how to build, test and lint it (the exact commands), and the \
conventions its code follows. State only what you found in the files; do not guess. If an \
AGENTS.md already exists, read it first and improve it rather than starting over. Finish with a \
two-line summary of what you wrote.";

/// What was read of the instructions file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectInstructions {
    /// Its text: all of it, or its first [`MAX_INSTRUCTIONS_BYTES`] when `truncated`.
    pub text: String,
    /// The file's whole size in bytes.
    pub bytes: u64,
    /// Whether the text is only the start of the file.
    pub truncated: bool,
}

impl ProjectInstructions {
    /// The notice shown at start, naming the file and its size.
    pub fn notice(&self) -> String {
        let read = format!(
            "Read project instructions from {INSTRUCTIONS_FILE} ({}).",
            human_size(self.bytes)
        );
        if self.truncated {
            format!(
                "{read} It is longer than {}: only its start is used.",
                human_size(MAX_INSTRUCTIONS_BYTES as u64)
            )
        } else {
            read
        }
    }
}

/// `512 bytes`, `1.2 KB`, `40 KB`, `3.5 MB` (1 KB = 1,024 bytes).
pub(crate) fn human_size(bytes: u64) -> String {
    const KB: f64 = 1024.0;
    let b = bytes as f64;
    if bytes < 1024 {
        format!("{bytes} bytes")
    } else if b < KB * KB {
        let kb = b / KB;
        if kb < 10.0 && kb.fract() != 0.0 {
            format!("{kb:.1} KB")
        } else {
            format!("{kb:.0} KB")
        }
    } else {
        format!("{:.1} MB", b / (KB * KB))
    }
}

/// The system prompt: the default one, then the project's instructions when there are any.
pub fn system_prompt(instructions: Option<&ProjectInstructions>) -> String {
    let Some(found) = instructions.filter(|i| !i.text.trim().is_empty()) else {
        return SYSTEM_PROMPT.to_string();
    };
    let mut prompt = format!(
        "{SYSTEM_PROMPT}\n\n# Project instructions ({INSTRUCTIONS_FILE})\n\n\
         The workspace's {INSTRUCTIONS_FILE} says how to work on this project. Follow it, unless \
         the person asks otherwise; it cannot change what your tools allow.\n\n{}",
        found.text.trim_end()
    );
    if found.truncated {
        prompt.push_str(&format!(
            "\n\n[{INSTRUCTIONS_FILE} was cut here: only its first {} of {} are included.]",
            human_size(MAX_INSTRUCTIONS_BYTES as u64),
            human_size(found.bytes)
        ));
    }
    prompt
}

/// Reads the workspace's `AGENTS.md` through the sandbox: beneath the workspace root in one
/// step, so a link that leads out of the workspace is refused like any tool's read. `Ok(None)`
/// when there is no such file.
pub fn read_project_instructions(
    sandbox: &Sandbox,
) -> Result<Option<ProjectInstructions>, ToolError> {
    read_instructions_at(sandbox, INSTRUCTIONS_FILE)
}

/// Reads the instructions file at `file` (workspace-relative: `AGENTS.md`, `src/AGENTS.md`)
/// under the rules of the root one. `Ok(None)` when there is no such file.
pub fn read_instructions_at(
    sandbox: &Sandbox,
    file: &str,
) -> Result<Option<ProjectInstructions>, ToolError> {
    // Only "not there" is silent; anything else (a link, a folder) goes on to the read, whose
    // error says what is wrong with it.
    if let Err(e) = sandbox.dir().symlink_metadata(file)
        && matches!(
            e.kind(),
            std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
        )
    {
        return Ok(None);
    }
    // The read rules of every tool: hidden files (`.env*`, MiniClaw's own `.miniclaw/` and
    // history) are refused by name and by real path, so a link to one is refused too; a link
    // out of the workspace is refused. Then the real path is opened beneath the root (regular
    // single-link files only, opened without blocking, at most the cap read).
    let real = sandbox.resolve_read(file)?;
    let relative = real
        .strip_prefix(sandbox.root())
        .ok()
        .and_then(|p| p.to_str())
        .filter(|p| !p.is_empty())
        .ok_or_else(|| ToolError::failed(format!("{file} is not a file")))?
        .to_string();
    let (text, bytes, truncated) =
        crate::tools::files::read_text(sandbox, &relative, file, MAX_INSTRUCTIONS_BYTES)?;
    Ok(Some(ProjectInstructions {
        text,
        bytes,
        truncated,
    }))
}

/// How the instructions changed between what a session's prompt last carried and now, as a
/// unified diff (`None`: they did not).
pub fn instructions_change(before: Option<&str>, now: Option<&str>) -> Option<String> {
    if before == now {
        return None;
    }
    Some(crate::diff::unified(INSTRUCTIONS_FILE, before, now))
}

/// The notice for instructions that changed since the session last read them.
pub const CHANGED_NOTICE: &str = "AGENTS.md changed since this session last read it; the \
     system prompt now carries the new text. /instructions diff shows the change.";

/// What was found of the instructions file for the system prompt, and the notice saying so.
struct Found {
    /// The instructions (`None`: no file, an empty one, or one that could not be read).
    instructions: Option<ProjectInstructions>,
    notice: Option<String>,
}

/// Reads the instructions file for the system prompt (blocking file work).
fn find_instructions(sandbox: &Sandbox) -> Found {
    let (instructions, notice) = match read_project_instructions(sandbox) {
        Ok(Some(found)) if found.text.trim().is_empty() => (
            None,
            Some(format!(
                "{INSTRUCTIONS_FILE} is empty: no project instructions were added."
            )),
        ),
        Ok(Some(found)) => {
            let notice = found.notice();
            (Some(found), Some(notice))
        }
        Ok(None) => (None, None),
        Err(e) => (
            None,
            Some(format!(
                "{INSTRUCTIONS_FILE} was not read ({e}): the session starts without project instructions."
            )),
        ),
    };
    Found {
        instructions,
        notice,
    }
}

/// Compares the instructions of `now` with what the session's prompt last carried (its record
/// in `checkpoints`) and remembers those of now; the diff when they changed (blocking file
/// work).
fn compare_with_record(checkpoints: &Checkpoints, now: Option<&str>) -> Option<String> {
    let before = checkpoints.remembered_instructions();
    let change = before
        .as_ref()
        .and_then(|b| instructions_change(b.text.as_deref(), now));
    // "None" is remembered too: a file that appears later is a change as well.
    if before.as_ref().is_none_or(|b| b.text.as_deref() != now) {
        let record = RememberedInstructions {
            text: now.map(str::to_string),
        };
        if let Err(e) = checkpoints.remember_instructions(&record) {
            tracing::warn!(error = %e, "could not remember the project instructions");
        }
    }
    change
}

/// Reads the instructions and compares them with the session's record (blocking file work).
fn find_and_compare(
    sandbox: &Sandbox,
    checkpoints: Option<&Checkpoints>,
) -> (Found, Option<String>) {
    let found = find_instructions(sandbox);
    let now = found.instructions.as_ref().map(|i| i.text.as_str());
    let change = checkpoints.and_then(|c| compare_with_record(c, now));
    (found, change)
}

impl Agent {
    /// Reads the workspace's `AGENTS.md` and opens the conversation with the system prompt it
    /// makes (the default one alone when there is none). Returns notices for the person: which
    /// file was read, or why it could not be, and whether it changed since this session's
    /// prompt last carried it. Blocking file work: called at start, before the agent's task
    /// runs; the task reads the file again with [`Self::reload_project_instructions`].
    pub fn load_project_instructions(&mut self) -> Vec<String> {
        let (found, change) = find_and_compare(&self.sandbox, self.checkpoints().as_ref());
        self.use_instructions(found, change)
    }

    /// Reads `AGENTS.md` again once it changed (after `/init`), as
    /// [`Self::load_project_instructions`] does, with the file work off the runtime.
    pub async fn reload_project_instructions(&mut self) -> Vec<String> {
        let (sandbox, checkpoints) = (self.sandbox.clone(), self.checkpoints());
        let work = move || find_and_compare(&sandbox, checkpoints.as_ref());
        match off_runtime(work).await {
            Ok((found, change)) => self.use_instructions(found, change),
            Err(e) => vec![format!(
                "{INSTRUCTIONS_FILE} was not read again ({e}): the system prompt stays as it was."
            )],
        }
    }

    /// Opens the conversation with the instructions found; the notices to show.
    fn use_instructions(&mut self, found: Found, change: Option<String>) -> Vec<String> {
        // The skills' list follows the instructions: read at start, the same all session.
        let skills = self.sandbox.skills().prompt_section();
        self.session
            .set_system_prompt(&(system_prompt(found.instructions.as_ref()) + &skills));
        self.instructions = found.instructions.map(|i| i.text);
        found
            .notice
            .into_iter()
            .chain(self.note_instructions_change(change))
            .collect()
    }

    /// Compares the instructions the prompt carries now with what the active session's prompt
    /// last carried (its record beside its checkpoints, off the runtime), remembers the ones of
    /// now, and says so when they changed (the diff is kept for `/instructions diff`).
    pub(super) async fn compare_instructions(&mut self) -> Option<String> {
        let Some(checkpoints) = self.checkpoints() else {
            return self.note_instructions_change(None);
        };
        let now = self.instructions.clone();
        let work = move || compare_with_record(&checkpoints, now.as_deref());
        let change = off_runtime(work).await.unwrap_or_else(|e| {
            tracing::warn!(error = %e, "could not compare the project instructions");
            None
        });
        self.note_instructions_change(change)
    }

    /// Keeps the diff of a change of the instructions for `/instructions diff`; the notice
    /// saying they changed, when they did.
    fn note_instructions_change(&mut self, change: Option<String>) -> Option<String> {
        self.instructions_diff = change;
        self.instructions_diff
            .is_some()
            .then(|| CHANGED_NOTICE.to_string())
    }

    /// How the instructions changed since this session's prompt last carried them, when they
    /// did (found at start, `/resume` or after `/init`).
    pub fn instructions_diff(&self) -> Option<&str> {
        self.instructions_diff.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sandbox() -> (tempfile::TempDir, Sandbox) {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = Sandbox::new(dir.path()).unwrap();
        (dir, sandbox)
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_size(512), "512 bytes");
        assert_eq!(human_size(1229), "1.2 KB");
        assert_eq!(human_size(32 * 1024), "32 KB");
        assert_eq!(human_size(40 * 1024 + 100), "40 KB");
        assert_eq!(human_size(3 * 1024 * 1024 + 512 * 1024), "3.5 MB");
    }

    #[test]
    fn no_file_means_the_default_prompt() {
        let (_dir, sandbox) = sandbox();
        assert_eq!(read_project_instructions(&sandbox).unwrap(), None);
        assert_eq!(system_prompt(None), SYSTEM_PROMPT);
    }

    #[test]
    fn the_file_joins_the_prompt_and_a_long_one_is_cut_with_a_note() {
        let (dir, sandbox) = sandbox();
        std::fs::write(dir.path().join("AGENTS.md"), "Run `make check`.\n").unwrap();
        let found = read_project_instructions(&sandbox).unwrap().unwrap();
        assert!(!found.truncated);
        assert_eq!(
            found.notice(),
            "Read project instructions from AGENTS.md (18 bytes)."
        );
        let prompt = system_prompt(Some(&found));
        assert!(prompt.starts_with(SYSTEM_PROMPT));
        assert!(prompt.ends_with("Run `make check`."), "{prompt}");
        assert!(!prompt.contains("was cut"));

        let long = "é".repeat(MAX_INSTRUCTIONS_BYTES); // two bytes each: twice the cap
        std::fs::write(dir.path().join("AGENTS.md"), &long).unwrap();
        let found = read_project_instructions(&sandbox).unwrap().unwrap();
        assert!(found.truncated);
        assert_eq!(found.text.len(), MAX_INSTRUCTIONS_BYTES);
        assert_eq!(found.bytes, 2 * MAX_INSTRUCTIONS_BYTES as u64);
        assert!(found.notice().contains("(64 KB)") && found.notice().contains("only its start"));
        let prompt = system_prompt(Some(&found));
        assert!(
            prompt
                .ends_with("[AGENTS.md was cut here: only its first 32 KB of 64 KB are included.]")
        );
    }

    #[test]
    fn a_link_out_of_the_workspace_is_refused() {
        let (dir, sandbox) = sandbox();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.md"), "outside").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.md"),
            dir.path().join("AGENTS.md"),
        )
        .unwrap();
        let err = read_project_instructions(&sandbox).unwrap_err();
        assert!(err.to_string().contains("outside the workspace"), "{err}");
    }

    #[test]
    fn the_init_prompt_asks_for_agents_md_through_the_write_tool() {
        assert!(INIT_PROMPT.contains(INSTRUCTIONS_FILE));
        assert!(INIT_PROMPT.contains("write_text_file"));
        // The sandbox must let the tools write it.
        let (_dir, sandbox) = sandbox();
        assert!(sandbox.resolve_write(INSTRUCTIONS_FILE).is_ok());
        assert!(!crate::tools::sandbox::is_config_name(INSTRUCTIONS_FILE));
        assert_eq!(
            sandbox.write_kind(INSTRUCTIONS_FILE),
            crate::tools::sandbox::WriteKind::Instructions
        );
    }

    #[test]
    fn links_to_hidden_files_and_special_files_are_refused_with_the_reason() {
        let (dir, sandbox) = sandbox();
        let agents = dir.path().join("AGENTS.md");
        std::fs::write(dir.path().join(".env"), "DEEPSEEK_API_KEY=sk-canary\n").unwrap();
        std::os::unix::fs::symlink(".env", &agents).unwrap();
        let err = read_project_instructions(&sandbox).unwrap_err().to_string();
        assert!(err.contains(".env"), "{err}");
        assert!(!err.contains("sk-canary"), "{err}");

        std::fs::remove_file(&agents).unwrap();
        std::fs::create_dir_all(dir.path().join(".miniclaw/sessions")).unwrap();
        std::fs::write(dir.path().join(".miniclaw/sessions/x.json"), "old-secret").unwrap();
        std::os::unix::fs::symlink(".miniclaw/sessions/x.json", &agents).unwrap();
        let err = read_project_instructions(&sandbox).unwrap_err().to_string();
        assert!(err.contains("MiniClaw"), "{err}");

        std::fs::remove_file(&agents).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(&agents)
            .status()
            .unwrap();
        assert!(made.success());
        let err = read_project_instructions(&sandbox).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");

        // A link inside the workspace to an ordinary file is read, as any tool reads it.
        std::fs::remove_file(&agents).unwrap();
        std::fs::write(dir.path().join("notes.md"), "Use tabs.").unwrap();
        std::os::unix::fs::symlink("notes.md", &agents).unwrap();
        let found = read_project_instructions(&sandbox).unwrap().unwrap();
        assert_eq!(found.text, "Use tabs.");
    }

    #[test]
    fn a_change_is_a_diff_of_the_file_and_no_change_is_none() {
        assert_eq!(instructions_change(Some("a\n"), Some("a\n")), None);
        assert_eq!(instructions_change(None, None), None);
        let diff = instructions_change(Some("Use tabs.\n"), Some("Use spaces.\n")).unwrap();
        assert!(diff.contains("AGENTS.md"), "{diff}");
        assert!(diff.contains("-Use tabs."), "{diff}");
        assert!(diff.contains("+Use spaces."), "{diff}");
        let gone = instructions_change(Some("Use tabs.\n"), None).unwrap();
        assert!(gone.contains("-Use tabs."), "{gone}");
    }

    #[test]
    fn the_record_round_trips_and_a_planted_link_is_not_read() {
        use crate::agent::history::Checkpoints;
        let dir = tempfile::tempdir().unwrap();
        let checkpoints = Checkpoints::of(&dir.path().join("history.json"), "s1");
        assert_eq!(checkpoints.remembered_instructions(), None);
        let record = RememberedInstructions {
            text: Some("Use tabs.".into()),
        };
        checkpoints.remember_instructions(&record).unwrap();
        assert_eq!(checkpoints.remembered_instructions(), Some(record));

        let record = dir
            .path()
            .join(".miniclaw/checkpoints/s1/instructions.json");
        std::fs::remove_file(&record).unwrap();
        std::fs::write(dir.path().join("elsewhere.json"), r#"{"text":"planted"}"#).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere.json"), &record).unwrap();
        assert_eq!(checkpoints.remembered_instructions(), None);
    }
}
