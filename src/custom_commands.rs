//! Custom slash commands: Markdown prompt files, as Claude Code reads them.
//! `<config dir>/miniclaw/commands/NAME.md` (the person's) and, once the folder MiniClaw starts
//! in is trusted, its `.agents/commands/NAME.md`. An optional front matter gives `description`,
//! `argument-hint` and `model`; the body is the prompt, with `$ARGUMENTS` replaced by all the
//! arguments and `$1`, `$2`, … by each word. They are prompts, never code: `/NAME args` sends
//! the text as a turn, with the tools and approvals of any other turn.
//!
//! A leaf beside `front_matter`: which names are taken by built-in commands is the caller's
//! to say (`tui::commands`), so this module knows nothing of the screen.

use std::path::{Path, PathBuf};

use crate::capped_read::{Links, read_capped_string};

/// The most of a command file read; a larger one is reported and skipped.
pub const MAX_COMMAND_BYTES: u64 = 64 * 1024;
/// The most custom commands kept (the popup lists them all).
pub const MAX_COMMANDS: usize = 200;
/// The longest description and argument hint kept, in characters.
const MAX_LINE_CHARS: usize = 200;
/// The longest name.
const MAX_NAME_CHARS: usize = 64;

/// Whose a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// `<config dir>/miniclaw/commands/`.
    User,
    /// The project's `.agents/commands/` (only once the folder is trusted).
    Project,
}

impl Origin {
    /// How the popup and the notices name it.
    pub fn name(self) -> &'static str {
        match self {
            Origin::User => "user",
            Origin::Project => "project",
        }
    }
}

/// A folder of command files.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Source {
    /// Whose it is.
    pub origin: Origin,
    /// The folder holding `NAME.md` files.
    pub dir: PathBuf,
}

/// One custom command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CustomCommand {
    /// Its name (the file's stem), typed after `/`.
    pub name: String,
    /// What it does, in one clean line (`description`), if the file says.
    pub description: Option<String>,
    /// What its arguments are (`argument-hint`), in one clean line.
    pub argument_hint: Option<String>,
    /// The model or preset its turn asks for (`model`), as written.
    pub model: Option<String>,
    /// Whose it is.
    pub origin: Origin,
    /// The file it was read from.
    pub file: PathBuf,
    /// The prompt, with its placeholders.
    pub body: String,
}

impl CustomCommand {
    /// The preset its `model` asks for, when that is a preset or a configured provider's model;
    /// else none, with the notice saying why (a name MiniClaw does not know, such as a Claude
    /// Code file's `model: haiku`, would be sent to DeepSeek as it is and fail the turn).
    pub fn preset(
        &self,
        providers: &crate::llm::Providers,
    ) -> (Option<crate::llm::Preset>, Option<String>) {
        let Some(model) = self.model.as_deref() else {
            return (None, None);
        };
        let why = match providers.resolve(model) {
            Ok(crate::llm::Preset::Custom(_)) => {
                "it is not a preset or a configured provider's model".to_string()
            }
            Ok(preset) => return (Some(preset), None),
            Err(e) => e.to_string(),
        };
        let name = &self.name;
        let notice = format!(
            "/{name}: its model `{model}` is not used ({why}); the turn uses this session's model."
        );
        (None, Some(notice))
    }

    /// The prompt for `/NAME arguments`: `$ARGUMENTS` is all of them, `$1`, `$2`, … each word
    /// (a quoted phrase is one word; a missing one is empty). A prompt with no placeholder
    /// gets the arguments after it, so they are never lost.
    pub fn expand(&self, arguments: &str) -> String {
        let arguments = arguments.trim();
        let words = split_words(arguments);
        let mut out = String::with_capacity(self.body.len() + arguments.len());
        let mut used = false;
        let mut rest = self.body.as_str();
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at + 1..];
            if let Some(tail) = after.strip_prefix("ARGUMENTS") {
                out.push_str(arguments);
                used = true;
                rest = tail;
                continue;
            }
            let digits = after.chars().take_while(char::is_ascii_digit).count();
            match after[..digits].parse::<usize>() {
                Ok(n) if n > 0 => {
                    out.push_str(words.get(n - 1).map_or("", String::as_str));
                    used = true;
                    rest = &after[digits..];
                }
                _ => {
                    out.push('$');
                    rest = after;
                }
            }
        }
        out.push_str(rest);
        let mut out = out.trim().to_string();
        if !used && !arguments.is_empty() {
            out.push_str(&format!("\n\nARGUMENTS: {arguments}"));
        }
        out
    }
}

/// The words of the arguments: split at white space, a `"…"` or `'…'` phrase kept whole.
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut quote = None;
    let mut any = false;
    for c in text.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => current.push(c),
            (None, '"' | '\'') => {
                quote = Some(c);
                any = true;
            }
            (None, c) if c.is_whitespace() => {
                if any || !current.is_empty() {
                    words.push(std::mem::take(&mut current));
                    any = false;
                }
            }
            (None, c) => current.push(c),
        }
    }
    if any || !current.is_empty() {
        words.push(current);
    }
    words
}

/// Every custom command, in name order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CustomCommands {
    list: Vec<CustomCommand>,
}

impl CustomCommands {
    /// These commands (names must differ: `load` sees to that).
    pub fn new(mut list: Vec<CustomCommand>) -> Self {
        list.sort_by(|a, b| a.name.cmp(&b.name));
        Self { list }
    }

    /// The command named `name`.
    pub fn find(&self, name: &str) -> Option<&CustomCommand> {
        self.list.iter().find(|c| c.name == name)
    }

    /// The commands, by name.
    pub fn iter(&self) -> impl Iterator<Item = &CustomCommand> {
        self.list.iter()
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }
}

/// The folders command files are read from: the person's, then the project's when trusted.
pub fn default_sources(project_trusted: bool, project: Option<&Path>) -> Vec<Source> {
    let mut sources = Vec::new();
    if let Some(config) = crate::paths::config_dir() {
        sources.push(Source {
            origin: Origin::User,
            dir: config.join("commands"),
        });
    }
    if project_trusted && let Some(project) = project {
        sources.push(Source {
            origin: Origin::Project,
            dir: project.join(".agents").join("commands"),
        });
    }
    sources
}

/// Reads the command files of `sources` (in order: an earlier one wins a name); `built_in`
/// says which names MiniClaw's own commands take. A warning for each file skipped.
pub fn load(sources: &[Source], built_in: &dyn Fn(&str) -> bool) -> (CustomCommands, Vec<String>) {
    let mut list: Vec<CustomCommand> = Vec::new();
    let mut warnings = Vec::new();
    for source in sources {
        for file in command_files(&source.dir) {
            let stem = file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let skipped = |why: String| format!("Command file {} skipped: {why}.", file.display());
            if !valid_name(&stem) {
                warnings.push(skipped(format!(
                    "its name `{}` is not lower-case letters, digits, `-`, `_` and `:` (at most {MAX_NAME_CHARS})",
                    crate::terminal_text::clean(&stem)
                )));
                continue;
            }
            if built_in(&stem) {
                warnings.push(skipped(format!("/{stem} is a built-in command")));
                continue;
            }
            if let Some(first) = list.iter().find(|c| c.name == stem) {
                warnings.push(skipped(format!(
                    "the {} command /{stem} ({}) comes first",
                    first.origin.name(),
                    first.file.display()
                )));
                continue;
            }
            if list.len() >= MAX_COMMANDS {
                warnings.push(skipped(format!(
                    "MiniClaw keeps at most {MAX_COMMANDS} commands"
                )));
                continue;
            }
            match read_command(&file, stem, source.origin) {
                Ok(command) => list.push(command),
                Err(why) => warnings.push(skipped(why)),
            }
        }
    }
    (CustomCommands::new(list), warnings)
}

/// The `*.md` files of `dir`, by name (a few past the cap, so the cap can be reported).
fn command_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    files.truncate(MAX_COMMANDS * 2);
    files
}

/// Whether a file stem may be a command name: typed after `/`, shown in the popup.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().count() <= MAX_NAME_CHARS
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '-' | '_' | ':'))
}

/// Reads one command file: never blocking on a special file, at most the cap; a project's file
/// is never a link (it could lead anywhere), the person's may be (a dotfiles repository).
fn read_command(file: &Path, name: String, origin: Origin) -> Result<CustomCommand, String> {
    let links = match origin {
        Origin::Project => Links::Refuse,
        Origin::User => Links::Follow,
    };
    let text = read_capped_string(file, MAX_COMMAND_BYTES, links).map_err(|e| e.to_string())?;
    let doc = crate::front_matter::parse(&text).map_err(|e| e.to_string())?;
    let line = |key: &str| doc.get(key).map(clean_line).filter(|v| !v.is_empty());
    let body = doc.body.trim().to_string();
    if body.is_empty() {
        return Err("it has no prompt after its front matter".into());
    }
    Ok(CustomCommand {
        description: line("description"),
        argument_hint: line("argument-hint"),
        model: line("model"),
        name,
        origin,
        file: file.to_path_buf(),
        body,
    })
}

/// A front matter value as one clean line (drawn on the terminal): control characters and
/// escapes removed, white space collapsed, capped.
fn clean_line(text: &str) -> String {
    let clean = crate::terminal_text::clean(text);
    let line = clean.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= MAX_LINE_CHARS {
        return line;
    }
    let mut cut: String = line.chars().take(MAX_LINE_CHARS - 1).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    const REVIEW: &str = "---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review pull request\n---\n\nReview PR #$1 with priority $2 and assign to $3.";

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
    }

    fn sources(user: &Path, project: &Path) -> Vec<Source> {
        vec![
            Source {
                origin: Origin::User,
                dir: user.to_path_buf(),
            },
            Source {
                origin: Origin::Project,
                dir: project.to_path_buf(),
            },
        ]
    }

    #[test]
    fn claude_codes_example_expands_its_positional_arguments() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "review-pr.md", REVIEW);
        let (commands, warnings) = load(&sources(dir.path(), Path::new("/none")), &|_| false);
        assert!(warnings.is_empty(), "{warnings:?}");
        let review = commands.find("review-pr").unwrap();
        assert_eq!(review.description.as_deref(), Some("Review pull request"));
        assert_eq!(
            review.argument_hint.as_deref(),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(
            review.expand("456 high alice"),
            "Review PR #456 with priority high and assign to alice."
        );
        // Missing words are empty; a quoted phrase is one word.
        assert_eq!(
            review.expand("7 \"very high\""),
            "Review PR #7 with priority very high and assign to ."
        );
    }

    #[test]
    fn arguments_placeholder_and_files_without_front_matter() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            "fix-issue.md",
            "Fix issue $ARGUMENTS following our coding standards ($0 and $ stay).",
        );
        write(dir.path(), "plain.md", "Explain the build.\n");
        let (commands, _) = load(&sources(dir.path(), Path::new("/none")), &|_| false);
        let fix = commands.find("fix-issue").unwrap();
        assert_eq!(fix.description, None);
        assert_eq!(
            fix.expand(" 123 urgent "),
            "Fix issue 123 urgent following our coding standards ($0 and $ stay)."
        );
        let plain = commands.find("plain").unwrap();
        assert_eq!(plain.expand(""), "Explain the build.");
        assert_eq!(
            plain.expand("for ARM"),
            "Explain the build.\n\nARGUMENTS: for ARM"
        );
    }

    #[test]
    fn bad_names_built_ins_and_repeats_are_reported_and_skipped() {
        let user = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        write(user.path(), "deploy.md", "user deploy");
        write(project.path(), "deploy.md", "project deploy");
        write(project.path(), "model.md", "shadow /model");
        write(project.path(), "Bad Name.md", "x");
        write(project.path(), "git:log.md", "Show the log.");
        write(project.path(), "notes.txt", "not a command");
        write(
            project.path(),
            "broken.md",
            "---\ndescription: \"open\n---\nx",
        );
        write(
            project.path(),
            "esc.md",
            "---\ndescription: \"red \\e[31mtext\\u0007\"\n---\nDo it.",
        );
        let (commands, warnings) = load(&sources(user.path(), project.path()), &|n| n == "model");
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["deploy", "esc", "git:log"]);
        assert_eq!(commands.find("deploy").unwrap().origin, Origin::User);
        assert_eq!(commands.find("deploy").unwrap().body, "user deploy");
        assert_eq!(
            commands.find("esc").unwrap().description.as_deref(),
            Some("red text")
        );
        let all = warnings.join("\n");
        assert_eq!(warnings.len(), 4, "{all}");
        assert!(
            all.contains("deploy.md skipped: the user command /deploy"),
            "{all}"
        );
        assert!(
            all.contains("model.md skipped: /model is a built-in command"),
            "{all}"
        );
        assert!(all.contains("`Bad Name` is not lower-case"), "{all}");
        assert!(all.contains("broken.md skipped: line 2"), "{all}");
    }

    #[test]
    fn oversized_and_linked_project_files_are_not_read() {
        let project = tempfile::tempdir().unwrap();
        write(
            project.path(),
            "big.md",
            &"x".repeat(MAX_COMMAND_BYTES as usize + 1),
        );
        let elsewhere = tempfile::tempdir().unwrap();
        write(elsewhere.path(), "real.md", "planted");
        std::os::unix::fs::symlink(
            elsewhere.path().join("real.md"),
            project.path().join("link.md"),
        )
        .unwrap();
        let (commands, warnings) = load(&sources(Path::new("/none"), project.path()), &|_| false);
        assert!(commands.is_empty());
        let all = warnings.join("\n");
        assert!(all.contains("over the 65536 bytes"), "{all}");
        assert!(all.contains("is a symbolic link"), "{all}");
    }

    #[test]
    fn the_project_folder_counts_only_once_trusted() {
        let untrusted = default_sources(false, Some(Path::new("/p")));
        assert!(untrusted.iter().all(|s| s.origin == Origin::User));
        let trusted = default_sources(true, Some(Path::new("/p")));
        assert_eq!(
            trusted.last().unwrap().dir,
            Path::new("/p/.agents/commands")
        );
    }
}
