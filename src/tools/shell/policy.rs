//! The rules of `run_shell_command`: no shell syntax anywhere, an allowed command, only the flags
//! of its table (`flags`), and every path inside the workspace (`paths`). Everything not allowed
//! is refused with a reason before any process starts.

use std::path::{Path, PathBuf};

use super::flags::{CommandFlags, MAX_THREADS, ValueKind};
use super::paths::check_path;
use super::refusal::Refusal;

/// Characters that mean something to a shell; refused anywhere so nothing can be smuggled in.
const SHELL_CHARS: [(char, &str); 10] = [
    ('|', "`|`"),
    (';', "`;`"),
    ('&', "`&`"),
    ('>', "`>`"),
    ('<', "`<`"),
    ('`', "a backquote"),
    ('$', "`$`"),
    ('\n', "a newline"),
    ('\r', "a carriage return"),
    ('\0', "a NUL byte"),
];

/// A command that passed every rule, ready to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedCommand {
    /// One of [`ALLOWED_COMMANDS`](super::flags::ALLOWED_COMMANDS).
    pub program: String,
    /// The arguments, unchanged (as shown).
    pub args: Vec<String>,
    /// The arguments the program is started with: `args`, and for `rg` the exclusions of
    /// hidden files (see `hidden`) after the model's own flags, where they win.
    pub run_args: Vec<String>,
    /// The real working folder (inside the workspace).
    pub working_dir: PathBuf,
}

/// Checks a request against every rule; the error is the reason it was refused.
pub fn check(
    root: &Path,
    command: &str,
    args: &[String],
    working_dir: &str,
) -> Result<CheckedCommand, Refusal> {
    let root = root.canonicalize().map_err(Refusal::WorkspaceUnusable)?;
    no_shell_syntax("the command", command)?;
    let Some(flags) = CommandFlags::of(command) else {
        return Err(Refusal::NotAllowed(command.to_string()));
    };
    for arg in args {
        no_shell_syntax(&format!("argument `{}`", arg.escape_debug()), arg)?;
    }
    no_shell_syntax("working_dir", working_dir)?;
    let cwd = check_working_dir(&root, working_dir)?;
    let mut reader = FlagReader {
        command,
        flags: &flags,
        root: &root,
        cwd: &cwd,
        pattern_given: false,
        options_end: None,
    };
    let positionals = reader.read_all(args)?;
    let pattern_given = reader.pattern_given;
    let options_end = reader.options_end;
    check_positionals(
        &root,
        &cwd,
        command,
        &flags,
        args,
        &positionals,
        pattern_given,
    )?;
    Ok(CheckedCommand {
        program: command.to_string(),
        args: args.to_vec(),
        run_args: run_args(command, args, options_end, &own_globs(&root, &cwd)),
        working_dir: cwd,
    })
}

/// The argument vector to start `command` with. `rg` walks folders itself: every name that
/// `hidden` hides is excluded by glob, in any letter case and at any depth (a glob sees a path as
/// written, so MiniClaw's own names are left out below the root too), after all of the model's
/// flags, since a later glob wins over an earlier one; and links are never followed.
fn run_args(
    command: &str,
    args: &[String],
    options_end: Option<usize>,
    own: &[String],
) -> Vec<String> {
    if command != "rg" {
        return args.to_vec();
    }
    let at = options_end.unwrap_or(args.len());
    let mut run: Vec<String> = args.get(..at).unwrap_or(args).to_vec();
    run.extend(
        crate::tools::hidden::EXCLUDE_GLOBS
            .iter()
            .map(|glob| format!("--iglob=!{glob}"))
            .chain(own.iter().cloned()),
    );
    run.push("--no-follow".into());
    run.extend(args.get(at..).unwrap_or_default().iter().cloned());
    run
}

/// `rg` globs (anchored at the folder it runs in) leaving out MiniClaw's own folders beneath it.
fn own_globs(root: &Path, cwd: &Path) -> Vec<String> {
    crate::tools::hidden::own_folders_in(root)
        .iter()
        .filter_map(|f| f.strip_prefix(cwd).ok())
        .map(|rel| format!("--glob=!/{}", rel.to_string_lossy()))
        .collect()
}

/// The real folder a command runs in (empty means the workspace).
fn check_working_dir(root: &Path, working_dir: &str) -> Result<PathBuf, Refusal> {
    let working_dir = if working_dir.trim().is_empty() {
        "."
    } else {
        working_dir
    };
    let cwd = check_path(root, root, working_dir)?;
    if !cwd.is_dir() {
        return Err(Refusal::NotAFolder(working_dir.to_string()));
    }
    Ok(cwd)
}

/// Checks what is left after the flags: whether the command takes positionals, rg's pattern, and
/// that every path positional stays in the workspace.
fn check_positionals(
    root: &Path,
    cwd: &Path,
    command: &str,
    flags: &CommandFlags,
    args: &[String],
    positionals: &[&str],
    pattern_given: bool,
) -> Result<(), Refusal> {
    if !flags.takes_positionals && !positionals.is_empty() {
        return Err(Refusal::TakesNoArguments(command.to_string()));
    }
    let lists_files = args.iter().any(|a| a == "--files" || a == "--type-list");
    let paths = if flags.pattern_first && !pattern_given && !lists_files {
        let Some((_pattern, paths)) = positionals.split_first() else {
            return Err(Refusal::NeedsPattern);
        };
        paths
    } else {
        positionals
    };
    for p in paths {
        check_path(root, cwd, p)?;
    }
    Ok(())
}

fn no_shell_syntax(what: &str, text: &str) -> Result<(), Refusal> {
    match SHELL_CHARS.iter().find(|(c, _)| text.contains(*c)) {
        Some((_, name)) => Err(Refusal::ShellSyntax {
            what: what.to_string(),
            name,
        }),
        None => Ok(()),
    }
}

/// Reads a command's arguments against its flag table, checking each flag and its value.
struct FlagReader<'a> {
    command: &'a str,
    flags: &'a CommandFlags,
    root: &'a Path,
    cwd: &'a Path,
    /// Whether a flag gave rg its pattern (`-e`, `-f`), so every positional is a path.
    pattern_given: bool,
    /// Where the `--` that ends the flags is, if one does.
    options_end: Option<usize>,
}

impl FlagReader<'_> {
    /// Checks every flag; returns the positionals (everything that is not a flag or its value).
    fn read_all<'s>(&mut self, args: &'s [String]) -> Result<Vec<&'s str>, Refusal> {
        let mut positionals: Vec<&str> = Vec::new();
        let mut options_ended = false;
        let mut i = 0;
        while let Some(arg) = args.get(i).map(String::as_str) {
            i += 1;
            if options_ended || arg == "-" || !arg.starts_with('-') {
                positionals.push(arg);
                continue;
            }
            if arg == "--" {
                options_ended = true;
                self.options_end = Some(i - 1);
                continue;
            }
            let next = args.get(i).map(String::as_str);
            let used_next = match arg.strip_prefix("--") {
                Some(long) => self.long(long, next)?,
                None => self.short_cluster(&arg[1..], next)?,
            };
            if used_next {
                i += 1;
            }
        }
        Ok(positionals)
    }

    /// Checks `--name`, `--name=value` or `--name value`; returns whether the next argument was
    /// used.
    fn long(&mut self, long: &str, next: Option<&str>) -> Result<bool, Refusal> {
        let (name, glued) = match long.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (long, None),
        };
        let shown = format!("--{name}");
        if let Some(why) = self.flags.forbidden_long(name) {
            return Err(self.forbidden(shown, why));
        }
        let Some(flag) = self.flags.long(name) else {
            return Err(self.unknown(shown));
        };
        match flag.value {
            None if glued.is_some() => Err(Refusal::TakesNoValue {
                command: self.command.to_string(),
                flag: shown,
            }),
            None => Ok(false),
            Some(kind) => {
                let (value, used_next) = match (glued, next) {
                    (Some(v), _) => (v, false),
                    (None, Some(v)) => (v, true),
                    (None, None) => return Err(self.needs_value(shown)),
                };
                self.value(&shown, kind, value)?;
                Ok(used_next)
            }
        }
    }

    /// Checks `-abc`, `-n5` or `-n 5`; returns whether the next argument was used.
    fn short_cluster(&mut self, cluster: &str, next: Option<&str>) -> Result<bool, Refusal> {
        for (pos, c) in cluster.char_indices() {
            if let Some(why) = self.flags.forbidden_short(c) {
                return Err(self.forbidden(format!("-{c}"), why));
            }
            let Some(flag) = self.flags.short(c) else {
                return Err(self.unknown(format!("-{c}")));
            };
            let Some(kind) = flag.value else {
                continue;
            };
            let rest = &cluster[pos + c.len_utf8()..];
            // `-f=/etc/passwd`: the programs drop the `=` and take the rest, while a check of
            // `=/etc/passwd` would see a harmless relative name. Refused, never reinterpreted.
            if let Some(glued) = rest.strip_prefix('=') {
                return Err(Refusal::GluedEquals {
                    flag: c,
                    value: glued.to_string(),
                });
            }
            let (value, used_next) = match (rest.is_empty(), next) {
                (false, _) => (rest, false),
                (true, Some(v)) => (v, true),
                (true, None) => return Err(self.needs_value(format!("-{c}"))),
            };
            self.value(&format!("-{c}"), kind, value)?;
            return Ok(used_next);
        }
        Ok(false)
    }

    /// Checks a flag's value by its kind.
    fn value(&mut self, flag: &str, kind: ValueKind, value: &str) -> Result<(), Refusal> {
        match kind {
            ValueKind::Number => {
                let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
                if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                    return Err(Refusal::NeedsNumber {
                        command: self.command.to_string(),
                        flag: flag.to_string(),
                        value: value.to_string(),
                    });
                }
                if (flag == "-j" || flag == "--threads")
                    && digits.parse::<u32>().map_or(true, |n| n > MAX_THREADS)
                {
                    return Err(Refusal::TooManyThreads(flag.to_string()));
                }
            }
            ValueKind::Text => {}
            ValueKind::Pattern => self.pattern_given = true,
            ValueKind::Path => {
                // A pattern file also stands in for the pattern.
                self.pattern_given |= flag == "-f" || flag == "--file";
                check_path(self.root, self.cwd, value)?;
            }
        }
        Ok(())
    }

    fn forbidden(&self, flag: String, why: &'static str) -> Refusal {
        Refusal::ForbiddenFlag {
            command: self.command.to_string(),
            flag,
            why,
        }
    }

    fn unknown(&self, flag: String) -> Refusal {
        Refusal::UnknownFlag {
            command: self.command.to_string(),
            flag,
            allowed: self.flags.spellings(),
        }
    }

    fn needs_value(&self, flag: String) -> Refusal {
        Refusal::NeedsValue {
            command: self.command.to_string(),
            flag,
        }
    }
}
