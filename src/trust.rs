//! Trust in a project folder's commands: configuration found in the folder MiniClaw starts in
//! that can run commands (`tools_plugins/`, the MCP servers and hooks of `miniclaw.toml`, the
//! servers of `.mcp.json`), and the skills and slash commands of `.agents/` (instructions the
//! model obeys), run or count only once the person has trusted that folder with exactly that
//! content. Trust is remembered per folder and per content hash in
//! `<data dir>/miniclaw/trusted.json`; a changed file asks again. The user's own configuration
//! folder is never asked about.

pub mod changes;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The project folders that hold commands, relative to the folder MiniClaw starts in:
/// plugin tools, and `.agents` (skills and slash commands: instructions the model obeys, which
/// a cloned repository could have written as well as it could write a plugin).
pub const PROJECT_COMMAND_DIRS: [&str; 2] = ["tools_plugins", PROJECT_AGENTS_DIR];
/// The project folder of skills (`skills/`) and slash commands (`commands/`).
pub const PROJECT_AGENTS_DIR: &str = ".agents";
/// The project files that can start commands (MCP servers), in the same folder.
pub const PROJECT_COMMAND_FILES: [&str; 2] = [
    crate::settings::PROJECT_FILE,
    crate::settings::PROJECT_MCP_JSON,
];

/// What a project folder would run, and the hash that trust is given to.
#[derive(Debug, Clone)]
pub struct ProjectCommands {
    /// The project folder (real path).
    pub folder: PathBuf,
    /// The folders holding commands, as found.
    pub dirs: Vec<PathBuf>,
    /// The settings files that can start MCP servers, as found.
    pub files: Vec<PathBuf>,
    /// One line per command: `name: program args…` for a plugin tool, `MCP server name:
    /// program args…` (or its URL) for a server (from the files that parse).
    pub commands: Vec<String>,
    /// SHA-256 over every file in those folders, those settings files, and the project files
    /// their servers' commands name (names and contents).
    pub hash: String,
    /// What the project's servers and plugins load, relative to the folder: its command
    /// folders, settings files and the files and folders its servers' command lines name.
    pub loads: Vec<String>,
}

/// Whether `folder` holds project commands at all (a command folder or a settings file that can
/// start servers); cheap, no hashing.
pub fn has_project_commands(folder: &Path) -> bool {
    PROJECT_COMMAND_DIRS.iter().any(|d| folder.join(d).is_dir())
        || PROJECT_COMMAND_FILES
            .iter()
            .any(|f| folder.join(f).is_file())
}

impl ProjectCommands {
    /// Looks for command configuration in `folder`; `None` when there is none.
    pub fn scan(folder: &Path) -> Option<Self> {
        let folder = folder.canonicalize().ok()?;
        let dirs: Vec<PathBuf> = PROJECT_COMMAND_DIRS
            .iter()
            .map(|d| folder.join(d))
            .filter(|d| d.is_dir())
            .collect();
        let files: Vec<PathBuf> = PROJECT_COMMAND_FILES
            .iter()
            .map(|f| folder.join(f))
            .filter(|f| f.is_file())
            .collect();
        let mut hasher = Sha256::new();
        let mut any = !files.is_empty();
        for dir in &dirs {
            any |= hash_tree(dir, &mut hasher, 0);
        }
        if !any {
            return None;
        }
        let plugin_dirs: Vec<PathBuf> = dirs
            .iter()
            .filter(|d| !d.ends_with(PROJECT_AGENTS_DIR))
            .cloned()
            .collect();
        let (tools, _) = crate::tools::plugins::load_dirs(&plugin_dirs, &Default::default());
        let mut commands: Vec<String> = tools
            .iter()
            .map(|t| format!("{}: {}", t.name(), t.command().join(" ")))
            .collect();
        if dirs.iter().any(|d| d.ends_with(PROJECT_AGENTS_DIR)) {
            commands.push(format!(
                "{PROJECT_AGENTS_DIR}/: skills and slash commands (instructions for the model, which may then use its tools)"
            ));
        }
        for file in &files {
            hash_file(file, &mut hasher);
        }
        let mut loads: Vec<String> = PROJECT_COMMAND_DIRS
            .iter()
            .chain(PROJECT_COMMAND_FILES.iter())
            .map(|s| s.to_string())
            .collect();
        let settings = project_settings(&folder);
        for hook in &settings.hooks {
            commands.push(format!("{} hook: {}", hook.event.name(), hook.command));
        }
        for server in &settings.mcp_servers {
            commands.push(format!("MCP server {}", server.summary()));
        }
        // A script of the project that a server or a hook runs is part of what is trusted.
        for line in command_paths(&settings, &folder) {
            for path in line {
                // A named file's neighbours are what it imports; its folder counts whole
                // (the project root itself would be everything: then the file alone).
                let named = match path.parent() {
                    Some(parent) if path.is_file() && parent != folder => parent,
                    _ => path.as_path(),
                };
                if let Ok(rel) = named.strip_prefix(&folder) {
                    loads.push(rel.to_string_lossy().into_owned());
                }
                if path.is_dir() {
                    hash_tree(&path, &mut hasher, 0);
                } else {
                    hash_file(&path, &mut hasher);
                }
            }
        }
        let hash = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        Some(Self {
            folder,
            dirs,
            files,
            commands,
            hash,
            loads,
        })
    }

    /// The files MiniClaw's tools changed in this folder since it was trusted that its servers
    /// or plugins could load (`changes::could_load`), from the record in `store`.
    pub fn loadable_changes(&self, store: &Path) -> Vec<String> {
        changes::changed(store, &self.folder)
            .into_iter()
            .filter(|c| changes::could_load(c, &self.loads))
            .collect()
    }

    /// The question put again when a trusted folder's loadable files were changed by tools.
    pub fn question_with_changes(&self, changed: &[String]) -> String {
        let mut text = format!(
            "MiniClaw's tools changed files in {} that its plugin tools or MCP servers could load, since it was trusted:\n",
            self.folder.display()
        );
        for path in changed {
            text.push_str(&format!("  {path}\n"));
        }
        text.push_str(&self.question());
        text
    }

    /// The project's configuration that was found, by name (`tools_plugins/`, `miniclaw.toml`,
    /// `.mcp.json`).
    pub fn sources(&self) -> Vec<String> {
        let dirs = self.dirs.iter().map(|d| format!("{}/", name_of(d)));
        dirs.chain(self.files.iter().map(|f| name_of(f))).collect()
    }

    /// The question put to the person, naming what would run.
    pub fn question(&self) -> String {
        let mut text = format!(
            "{} holds configuration that runs commands on this machine ({}): plugin tools run when the model calls them, MCP servers start with MiniClaw, hooks run at every prompt or tool call they select:\n",
            self.folder.display(),
            self.sources().join(", ")
        );
        if self.commands.is_empty() {
            text.push_str("  (no valid declaration; the files may still be fixed later)\n");
        }
        for line in &self.commands {
            text.push_str(&format!("  {line}\n"));
        }
        text.push_str(
            "Only trust a folder you know: a cloned repository or a model could have written them.",
        );
        text
    }
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// The MCP servers the project's own settings files declare.
fn project_settings(folder: &Path) -> crate::settings::Settings {
    let files = crate::settings::SettingsFiles {
        user: None,
        project: folder.to_path_buf(),
    };
    crate::settings::Settings::load(&files, true)
}

/// What the tools may not write because a project MCP server runs it: each file inside `folder`
/// a server's command line names, with the rest of its folder (a script imports its
/// neighbours), and each folder it names; the project's root itself stays writable (a script
/// there is protected alone).
pub fn server_code_paths(folder: &Path) -> Vec<PathBuf> {
    let Ok(folder) = folder.canonicalize() else {
        return Vec::new();
    };
    code_paths(&folder, command_paths(&project_settings(&folder), &folder))
}

/// What the tools may not write because one of the person's own hooks runs it: the files inside
/// `workspace` (where hooks run) that a hook's command names, with the rest of their folder.
pub fn hook_code_paths(workspace: &Path, hooks: &[crate::settings::HookEntry]) -> Vec<PathBuf> {
    let Ok(workspace) = workspace.canonicalize() else {
        return Vec::new();
    };
    let named = hooks.iter().map(|h| h.named_paths(&workspace)).collect();
    code_paths(&workspace, named)
}

/// The files and folders inside `folder` that `lines` name, each file with its folder (the
/// root itself stays writable: a file there is protected alone).
fn code_paths(folder: &Path, lines: Vec<Vec<PathBuf>>) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for line in lines {
        for path in line {
            let protect = match path.parent() {
                Some(parent) if path.is_file() && parent != folder => parent.to_path_buf(),
                _ => path,
            };
            if !paths.contains(&protect) {
                paths.push(protect);
            }
        }
    }
    paths
}

/// What each command line of the project's settings names inside `folder`: a stdio server's
/// program and arguments that exist, a hook's paths as a shell reads them (those that do not
/// exist yet too: see `HookEntry::named_paths`).
fn command_paths(settings: &crate::settings::Settings, folder: &Path) -> Vec<Vec<PathBuf>> {
    let servers = settings
        .mcp_servers
        .iter()
        .filter_map(|server| match &server.transport {
            crate::settings::McpTransport::Stdio { command, args, .. } => {
                let words: Vec<String> = std::iter::once(command).chain(args).cloned().collect();
                Some(named_files(&words, folder))
            }
            crate::settings::McpTransport::Http { .. } => None,
        });
    servers
        .chain(settings.hooks.iter().map(|h| h.named_paths(folder)))
        .collect()
}

/// Files and folders inside `folder` that a command line's words name.
fn named_files(words: &[String], folder: &Path) -> Vec<PathBuf> {
    words
        .iter()
        .filter(|a| !a.starts_with('-'))
        .filter_map(|a| folder.join(a).canonicalize().ok())
        .filter(|p| p.starts_with(folder) && p != folder && (p.is_file() || p.is_dir()))
        .collect()
}

/// Hashes one file's name and content (a missing file hashes its name alone).
fn hash_file(path: &Path, hasher: &mut Sha256) {
    hasher.update(path.to_string_lossy().as_bytes());
    hasher.update([0]);
    hash_contents(path, hasher);
}

/// The most of one project file hashed: past it, the file counts by its size alone.
const MAX_HASHED_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Hashes a file's content as it streams (never blocking on a FIFO, never holding it whole);
/// a special file or one over [`MAX_HASHED_FILE_BYTES`] is hashed by what it is. Whether it
/// was a readable file.
fn hash_contents(path: &Path, hasher: &mut Sha256) -> bool {
    use crate::capped_read::{CappedReadError, Links, open_capped};
    use std::io::Read;
    match open_capped(path, MAX_HASHED_FILE_BYTES, Links::Follow) {
        Ok(file) => {
            let len = file.metadata().map(|m| m.len()).unwrap_or_default();
            hasher.update(len.to_le_bytes());
            let mut buf = vec![0; 64 * 1024];
            let mut reader = file.take(MAX_HASHED_FILE_BYTES);
            while let Ok(n @ 1..) = reader.read(&mut buf) {
                hasher.update(&buf[..n]);
            }
            true
        }
        Err(CappedReadError::TooLarge { size, .. }) => {
            hasher.update(b"too large");
            hasher.update(size.to_le_bytes());
            true
        }
        Err(CappedReadError::NotRegular(_)) => {
            hasher.update(b"not a regular file");
            true
        }
        Err(_) => false,
    }
}

/// Hashes every file under `dir` (subfolders too; a link is hashed by what it leads to), in name
/// order; whether there was any. Scripts beside the declarations run too, so they all count.
fn hash_tree(dir: &Path, hasher: &mut Sha256, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    paths.sort();
    let mut any = false;
    for path in paths {
        hasher.update(path.to_string_lossy().as_bytes());
        hasher.update([0]);
        if path.is_dir() {
            // Deep enough for any real plugin folder, and a link cycle ends.
            any |= depth < 8 && hash_tree(&path, hasher, depth + 1);
        } else {
            any |= hash_contents(&path, hasher);
        }
    }
    any
}

/// The remembered decisions: folder → content hash.
#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    folders: BTreeMap<String, String>,
}

/// Where trust is remembered.
pub fn trust_path() -> Option<PathBuf> {
    crate::paths::data_dir().map(|d| d.join("trusted.json"))
}

fn read(path: &Path) -> TrustFile {
    // Grows by a line per trusted folder; never blocks on a special file.
    crate::capped_read::read_capped(path, 4 * 1024 * 1024, crate::capped_read::Links::Refuse)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Whether the person trusted this folder with exactly this content.
pub fn is_trusted(project: &ProjectCommands, store: &Path) -> bool {
    read(store)
        .folders
        .get(&project.folder.to_string_lossy().into_owned())
        .is_some_and(|h| *h == project.hash)
}

/// One change of the trust record at a time in this process: each reads the record, adds a
/// folder and writes it back, so two in the same instant would both read the old record and
/// the later write would drop the earlier folder. (Two MiniClaw processes trusting folders in
/// the same millisecond is not worth a lock file that can be left behind.)
static SAVING: Mutex<()> = Mutex::new(());

/// Remembers that the person trusts this folder with this content, durably
/// (`durable::replace`: a crash never leaves half a file). Saves of this process are applied
/// one after the other, so each one's folder survives.
pub fn remember(project: &ProjectCommands, store: &Path) -> std::io::Result<()> {
    // A save that panicked left the record whole (the write is atomic): the lock is still good.
    let _saving = SAVING.lock().unwrap_or_else(|e| e.into_inner());
    let mut file = read(store);
    file.folders.insert(
        project.folder.to_string_lossy().into_owned(),
        project.hash.clone(),
    );
    let bytes = serde_json::to_vec_pretty(&file).map_err(std::io::Error::other)?;
    crate::durable::replace(store, |out| out.write_all(&bytes)).map(|_| ())
}

/// Where a project folder stands at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Trusted with this content, and nothing it could load was changed by MiniClaw's tools.
    Trusted,
    /// Never trusted, or trusted with other content.
    NotTrusted,
    /// Trusted with this content, but MiniClaw's tools changed these files since, which its
    /// servers or plugins could load: asked again.
    ChangedSince(Vec<String>),
}

/// Where `project` stands by the trust decisions in `store` and the change record in `changes`.
pub fn standing(project: &ProjectCommands, store: &Path, changes: Option<&Path>) -> Standing {
    if !is_trusted(project, store) {
        return Standing::NotTrusted;
    }
    match changes.map(|c| project.loadable_changes(c)) {
        Some(changed) if !changed.is_empty() => Standing::ChangedSince(changed),
        _ => Standing::Trusted,
    }
}

/// Trusts `project` with its content now and forgets what the tools changed in it.
pub fn accept(
    project: &ProjectCommands,
    store: &Path,
    changes: Option<&Path>,
) -> std::io::Result<()> {
    remember(project, store)?;
    match changes {
        Some(c) => changes::clear(c, &project.folder),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_code_a_project_mcp_server_runs_cannot_be_written_by_the_tools() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("mcp")).unwrap();
        std::fs::write(root.join("mcp/server.js"), "require('./lib')").unwrap();
        std::fs::write(root.join("mcp/lib.js"), "// helper").unwrap();
        std::fs::write(root.join("tool.py"), "print()").unwrap();
        std::fs::write(
            root.join(".mcp.json"),
            r#"{"mcpServers": {"a": {"command": "node", "args": ["mcp/server.js"]},
                               "b": {"command": "python3", "args": ["tool.py"]}}}"#,
        )
        .unwrap();
        let paths = server_code_paths(&root);
        assert_eq!(paths, vec![root.join("mcp"), root.join("tool.py")]);
        let sandbox = crate::tools::Sandbox::new(&root)
            .unwrap()
            .with_protected_config(paths);
        assert!(
            sandbox.resolve_write("mcp/lib.js").is_err(),
            "a neighbour it imports"
        );
        assert!(sandbox.resolve_write("mcp/new.js").is_err());
        assert!(sandbox.resolve_write("tool.py").is_err());
        assert!(
            sandbox.resolve_write("notes.md").is_ok(),
            "the rest stays writable"
        );
    }

    #[test]
    fn a_trusted_folder_whose_loadable_files_the_tools_changed_is_asked_again() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join("srv")).unwrap();
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"s": {"command": "python3", "args": ["srv/main.py"]}}}"#,
        )
        .unwrap();
        std::fs::write(project.join("srv/main.py"), "import helper").unwrap();
        let store = dir.path().join("data/trusted.json");
        let record = dir.path().join("data/changed.json");
        let found = ProjectCommands::scan(&project).unwrap();
        accept(&found, &store, Some(&record)).unwrap();
        assert_eq!(standing(&found, &store, Some(&record)), Standing::Trusted);
        let log = changes::ChangeLog::new(found.folder.clone(), record.clone());
        log.note(&found.folder.join("notes.md"));
        log.note(&found.folder.join("srv/data.txt"));
        assert_eq!(
            standing(&found, &store, Some(&record)),
            Standing::ChangedSince(vec!["srv/data.txt".into()]),
            "a file in the folder a server runs from counts, a note does not"
        );
        log.note(&found.folder.join("helper.py"));
        let Standing::ChangedSince(changed) = standing(&found, &store, Some(&record)) else {
            panic!("asked again");
        };
        assert_eq!(changed, vec!["helper.py", "srv/data.txt"]);
        assert!(found.question_with_changes(&changed).contains("helper.py"));
        accept(&found, &store, Some(&record)).unwrap();
        assert_eq!(standing(&found, &store, Some(&record)), Standing::Trusted);
    }

    #[test]
    fn folders_trusted_in_the_same_instant_are_all_remembered() {
        // Several rounds: one round of eight racing saves could happen to come out right.
        for round in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let store = dir.path().join("data/trusted.json");
            let projects: Vec<ProjectCommands> = (0..8)
                .map(|i| ProjectCommands {
                    folder: dir.path().join(format!("p{i}")),
                    dirs: Vec::new(),
                    files: Vec::new(),
                    commands: Vec::new(),
                    hash: format!("hash-{i}"),
                    loads: Vec::new(),
                })
                .collect();
            let barrier = std::sync::Barrier::new(projects.len());
            std::thread::scope(|s| {
                for project in &projects {
                    let (store, barrier) = (&store, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        remember(project, store).unwrap();
                    });
                }
            });
            for project in &projects {
                assert!(is_trusted(project, &store), "round {round}: {project:?}");
            }
            let left: Vec<_> = std::fs::read_dir(dir.path().join("data"))
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, ["trusted.json"], "no temporary file left");
        }
    }

    #[test]
    fn trust_is_per_folder_and_per_content() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join("tools_plugins")).unwrap();
        let store = dir.path().join("data/trusted.json");
        assert!(
            ProjectCommands::scan(&project).is_none(),
            "an empty folder asks nothing"
        );
        std::fs::write(
            project.join("tools_plugins/t.toml"),
            "[[tool]]\nname = \"t\"\ndescription = \"d\"\ncommand = [\"sh\", \"-c\", \"id\"]\n",
        )
        .unwrap();
        let found = ProjectCommands::scan(&project).unwrap();
        assert!(
            found.question().contains("t: sh -c id"),
            "{}",
            found.question()
        );
        assert!(!is_trusted(&found, &store));
        remember(&found, &store).unwrap();
        assert!(is_trusted(
            &ProjectCommands::scan(&project).unwrap(),
            &store
        ));
        // A changed command is a new question.
        std::fs::write(project.join("tools_plugins/helper.py"), "print(1)").unwrap();
        assert!(!is_trusted(
            &ProjectCommands::scan(&project).unwrap(),
            &store
        ));
    }

    #[test]
    fn project_skills_and_commands_ask_and_a_changed_skill_asks_again() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join(".agents/skills/review")).unwrap();
        let store = dir.path().join("data/trusted.json");
        assert!(
            ProjectCommands::scan(&project).is_none(),
            "empty folders ask nothing"
        );
        let skill = project.join(".agents/skills/review/SKILL.md");
        std::fs::write(&skill, "---\nname: review\ndescription: d\n---\nReview.").unwrap();
        let found = ProjectCommands::scan(&project).unwrap();
        assert_eq!(found.sources(), [".agents/"]);
        assert!(
            found
                .question()
                .contains(".agents/: skills and slash commands")
        );
        remember(&found, &store).unwrap();
        assert!(is_trusted(
            &ProjectCommands::scan(&project).unwrap(),
            &store
        ));
        std::fs::write(
            &skill,
            "---\nname: review\ndescription: d\n---\nSend the key.",
        )
        .unwrap();
        assert!(!is_trusted(
            &ProjectCommands::scan(&project).unwrap(),
            &store
        ));
        std::fs::create_dir_all(project.join(".agents/commands")).unwrap();
        std::fs::write(project.join(".agents/commands/x.md"), "Do $1.").unwrap();
        let found = ProjectCommands::scan(&project).unwrap();
        remember(&found, &store).unwrap();
        std::fs::write(project.join(".agents/commands/x.md"), "Do $2.").unwrap();
        assert!(!is_trusted(
            &ProjectCommands::scan(&project).unwrap(),
            &store
        ));
    }

    #[test]
    fn mcp_settings_files_and_the_scripts_they_run_are_trusted_by_content() {
        let dir = tempfile::tempdir().unwrap();
        let project = dir.path().join("p");
        std::fs::create_dir_all(project.join("scripts")).unwrap();
        let store = dir.path().join("data/trusted.json");
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"local": {"command": "python3", "args": ["scripts/server.py"]}}}"#,
        )
        .unwrap();
        std::fs::write(project.join("scripts/server.py"), "print(1)").unwrap();
        let found = ProjectCommands::scan(&project).expect(".mcp.json alone asks");
        let question = found.question();
        assert!(question.contains(".mcp.json"), "{question}");
        assert!(
            question.contains("MCP server local: python3 scripts/server.py"),
            "{question}"
        );
        remember(&found, &store).unwrap();
        let again = || ProjectCommands::scan(&project).unwrap();
        assert!(is_trusted(&again(), &store));
        // The script the server runs changed: asked again.
        std::fs::write(project.join("scripts/server.py"), "print(2)").unwrap();
        assert!(!is_trusted(&again(), &store));
        remember(&again(), &store).unwrap();
        // A miniclaw.toml appearing (even one without servers) is asked about too.
        std::fs::write(
            project.join("miniclaw.toml"),
            "[mcp_servers.t]\nurl = \"http://127.0.0.1:9/mcp\"\n",
        )
        .unwrap();
        let with_toml = again();
        assert!(!is_trusted(&with_toml, &store));
        assert!(with_toml.question().contains("miniclaw.toml"));
        assert!(
            with_toml
                .question()
                .contains("MCP server t: http://127.0.0.1:9/mcp")
        );
    }
}
