//! The rules of `run_shell_command`: which commands, which flags, which paths. Everything not
//! allowed here is refused with a reason before any process starts.

use std::path::{Component, Path, PathBuf};

/// The commands that may run.
pub const ALLOWED_COMMANDS: [&str; 7] = ["pwd", "ls", "cat", "head", "tail", "wc", "rg"];

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

/// What a flag's value must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Value {
    /// A whole number, maybe signed (`tail -n +5`).
    Number,
    /// Any text without shell syntax (a glob, a type name).
    Text,
    /// A path inside the workspace.
    Path,
    /// A search pattern (rg `-e`): makes every positional a path.
    Pattern,
}

/// One allowed flag.
struct Flag {
    short: Option<char>,
    long: Option<&'static str>,
    value: Option<Value>,
}

const fn b(short: char, long: &'static str) -> Flag {
    Flag {
        short: Some(short),
        long: if long.is_empty() { None } else { Some(long) },
        value: None,
    }
}

const fn bl(long: &'static str) -> Flag {
    Flag {
        short: None,
        long: Some(long),
        value: None,
    }
}

const fn v(short: char, long: &'static str, value: Value) -> Flag {
    Flag {
        short: Some(short),
        long: if long.is_empty() { None } else { Some(long) },
        value: Some(value),
    }
}

const fn vl(long: &'static str, value: Value) -> Flag {
    Flag {
        short: None,
        long: Some(long),
        value: Some(value),
    }
}

/// A flag refused with a specific reason.
struct Forbidden {
    short: Option<char>,
    long: &'static str,
    why: &'static str,
}

const FOLLOWS_LINKS: &str = "it follows symbolic links, which may lead outside the workspace";
const FOLLOWS_FOREVER: &str = "it follows the file forever";

const PWD_FLAGS: &[Flag] = &[b('L', "logical"), b('P', "physical")];

const LS_FLAGS: &[Flag] = &[
    b('a', "all"),
    b('A', "almost-all"),
    b('l', ""),
    b('h', "human-readable"),
    b('R', "recursive"),
    b('1', ""),
    b('t', ""),
    b('S', ""),
    b('r', "reverse"),
    b('F', "classify"),
    b('d', "directory"),
    b('i', "inode"),
    b('s', "size"),
    b('p', ""),
    b('X', ""),
    b('U', ""),
    b('v', ""),
    b('G', "no-group"),
    b('n', "numeric-uid-gid"),
    bl("group-directories-first"),
    bl("full-time"),
    vl("sort", Value::Text),
];
const LS_FORBIDDEN: &[Forbidden] = &[
    Forbidden {
        short: Some('L'),
        long: "dereference",
        why: FOLLOWS_LINKS,
    },
    Forbidden {
        short: Some('H'),
        long: "dereference-command-line",
        why: FOLLOWS_LINKS,
    },
];

const CAT_FLAGS: &[Flag] = &[
    b('n', "number"),
    b('b', "number-nonblank"),
    b('s', "squeeze-blank"),
    b('E', "show-ends"),
    b('T', "show-tabs"),
    b('A', "show-all"),
    b('v', "show-nonprinting"),
    b('e', ""),
    b('t', ""),
];

const HEAD_FLAGS: &[Flag] = &[
    v('n', "lines", Value::Number),
    v('c', "bytes", Value::Number),
    b('q', "quiet"),
    bl("silent"),
    b('v', "verbose"),
];

const TAIL_FLAGS: &[Flag] = HEAD_FLAGS;
const TAIL_FORBIDDEN: &[Forbidden] = &[
    Forbidden {
        short: Some('f'),
        long: "follow",
        why: FOLLOWS_FOREVER,
    },
    Forbidden {
        short: Some('F'),
        long: "retry",
        why: FOLLOWS_FOREVER,
    },
    Forbidden {
        short: Some('s'),
        long: "sleep-interval",
        why: FOLLOWS_FOREVER,
    },
    Forbidden {
        short: None,
        long: "pid",
        why: FOLLOWS_FOREVER,
    },
];

const WC_FLAGS: &[Flag] = &[
    b('l', "lines"),
    b('w', "words"),
    b('c', "bytes"),
    b('m', "chars"),
    b('L', "max-line-length"),
];
const WC_FORBIDDEN: &[Forbidden] = &[Forbidden {
    short: None,
    long: "files0-from",
    why: "it reads file names from a file, bypassing the path checks",
}];

const RG_FLAGS: &[Flag] = &[
    b('i', "ignore-case"),
    b('s', "case-sensitive"),
    b('S', "smart-case"),
    b('w', "word-regexp"),
    b('x', "line-regexp"),
    b('F', "fixed-strings"),
    b('v', "invert-match"),
    b('n', "line-number"),
    b('N', "no-line-number"),
    b('c', "count"),
    b('l', "files-with-matches"),
    bl("files-without-match"),
    b('o', "only-matching"),
    bl("hidden"),
    bl("no-ignore"),
    b('u', "unrestricted"),
    bl("no-heading"),
    bl("heading"),
    bl("column"),
    b('H', "with-filename"),
    b('I', "no-filename"),
    bl("vimgrep"),
    bl("json"),
    bl("stats"),
    bl("files"),
    bl("type-list"),
    b('U', "multiline"),
    bl("trim"),
    bl("no-messages"),
    b('q', "quiet"),
    bl("count-matches"),
    b('b', "byte-offset"),
    bl("no-config"),
    v('e', "regexp", Value::Pattern),
    v('f', "file", Value::Path),
    v('g', "glob", Value::Text),
    vl("iglob", Value::Text),
    v('t', "type", Value::Text),
    v('T', "type-not", Value::Text),
    v('m', "max-count", Value::Number),
    v('A', "after-context", Value::Number),
    v('B', "before-context", Value::Number),
    v('C', "context", Value::Number),
    vl("max-depth", Value::Number),
    vl("max-filesize", Value::Text),
    vl("sort", Value::Text),
    vl("sortr", Value::Text),
    v('M', "max-columns", Value::Number),
    v('r', "replace", Value::Text),
    v('j', "threads", Value::Number),
    vl("ignore-file", Value::Path),
];
const RG_FORBIDDEN: &[Forbidden] = &[
    Forbidden {
        short: None,
        long: "pre",
        why: "it runs a program on every file",
    },
    Forbidden {
        short: None,
        long: "pre-glob",
        why: "it belongs to --pre, which runs a program on every file",
    },
    Forbidden {
        short: Some('z'),
        long: "search-zip",
        why: "it runs decompression programs",
    },
    Forbidden {
        short: Some('L'),
        long: "follow",
        why: FOLLOWS_LINKS,
    },
];

/// A command's flags and how it takes positionals.
struct Policy {
    flags: &'static [Flag],
    forbidden: &'static [Forbidden],
    takes_positionals: bool,
    /// rg: the first positional is the pattern unless `-e`, `-f` or `--files` gave one.
    pattern_first: bool,
}

fn policy(command: &str) -> Option<Policy> {
    let p = |flags, forbidden, takes_positionals, pattern_first| Policy {
        flags,
        forbidden,
        takes_positionals,
        pattern_first,
    };
    Some(match command {
        "pwd" => p(PWD_FLAGS, &[], false, false),
        "ls" => p(LS_FLAGS, LS_FORBIDDEN, true, false),
        "cat" => p(CAT_FLAGS, &[], true, false),
        "head" => p(HEAD_FLAGS, &[], true, false),
        "tail" => p(TAIL_FLAGS, TAIL_FORBIDDEN, true, false),
        "wc" => p(WC_FLAGS, WC_FORBIDDEN, true, false),
        "rg" => p(RG_FLAGS, RG_FORBIDDEN, true, true),
        _ => return None,
    })
}

/// A command that passed every rule, ready to start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckedCommand {
    /// One of [`ALLOWED_COMMANDS`].
    pub program: String,
    /// The arguments, unchanged.
    pub args: Vec<String>,
    /// The real working folder (inside the workspace).
    pub working_dir: PathBuf,
}

/// Checks a request against every rule; the error is the reason it was refused.
pub fn check(
    root: &Path,
    command: &str,
    args: &[String],
    working_dir: &str,
) -> Result<CheckedCommand, String> {
    let root = root
        .canonicalize()
        .map_err(|e| format!("the workspace is unusable: {e}"))?;
    no_shell_syntax("the command", command)?;
    let Some(policy) = policy(command) else {
        return Err(format!(
            "`{command}` is not an allowed command; only {} may run",
            ALLOWED_COMMANDS.join(", ")
        ));
    };
    for arg in args {
        no_shell_syntax(&format!("argument `{}`", arg.escape_debug()), arg)?;
    }
    no_shell_syntax("working_dir", working_dir)?;
    let working_dir = if working_dir.trim().is_empty() {
        "."
    } else {
        working_dir
    };
    let cwd = check_path(&root, &root, working_dir)?;
    if !cwd.is_dir() {
        return Err(format!("working_dir `{working_dir}` is not a folder"));
    }

    let mut positionals: Vec<&str> = Vec::new();
    let mut pattern_given = false;
    let mut options_ended = false;
    let mut i = 0;
    while i < args.len() {
        let arg = args[i].as_str();
        i += 1;
        if options_ended || arg == "-" || !arg.starts_with('-') {
            positionals.push(arg);
            continue;
        }
        if arg == "--" {
            options_ended = true;
            continue;
        }
        let next = args.get(i).map(String::as_str);
        let used_next = if let Some(long) = arg.strip_prefix("--") {
            check_long(
                command,
                &policy,
                long,
                next,
                &root,
                &cwd,
                &mut pattern_given,
            )?
        } else {
            check_short_cluster(
                command,
                &policy,
                &arg[1..],
                next,
                &root,
                &cwd,
                &mut pattern_given,
            )?
        };
        if used_next {
            i += 1;
        }
    }

    if !policy.takes_positionals && !positionals.is_empty() {
        return Err(format!("`{command}` takes no arguments"));
    }
    let lists_files = args.iter().any(|a| a == "--files" || a == "--type-list");
    let paths = if policy.pattern_first && !pattern_given && !lists_files {
        if positionals.is_empty() {
            return Err("rg needs a pattern (the first argument that is not a flag)".into());
        }
        &positionals[1..]
    } else {
        &positionals[..]
    };
    for p in paths {
        check_path(&root, &cwd, p)?;
    }
    Ok(CheckedCommand {
        program: command.to_string(),
        args: args.to_vec(),
        working_dir: cwd,
    })
}

fn no_shell_syntax(what: &str, text: &str) -> Result<(), String> {
    match SHELL_CHARS.iter().find(|(c, _)| text.contains(*c)) {
        Some((_, name)) => Err(format!(
            "{what} contains shell syntax ({name}); commands run without a shell and such \
             characters are refused"
        )),
        None => Ok(()),
    }
}

fn forbidden_reason(command: &str, flag: &str, why: &str) -> String {
    format!("flag `{flag}` of `{command}` is refused: {why}")
}

/// Checks `--name`, `--name=value` or `--name value`; returns whether the next argument was used.
fn check_long(
    command: &str,
    policy: &Policy,
    long: &str,
    next: Option<&str>,
    root: &Path,
    cwd: &Path,
    pattern_given: &mut bool,
) -> Result<bool, String> {
    let (name, glued) = match long.split_once('=') {
        Some((n, v)) => (n, Some(v)),
        None => (long, None),
    };
    if let Some(f) = policy.forbidden.iter().find(|f| f.long == name) {
        return Err(forbidden_reason(command, &format!("--{name}"), f.why));
    }
    let Some(flag) = policy.flags.iter().find(|f| f.long == Some(name)) else {
        return Err(unknown_flag(command, &format!("--{name}"), policy));
    };
    match flag.value {
        None if glued.is_some() => Err(format!("flag `--{name}` of `{command}` takes no value")),
        None => Ok(false),
        Some(kind) => {
            let (value, used_next) = match (glued, next) {
                (Some(v), _) => (v, false),
                (None, Some(v)) => (v, true),
                (None, None) => {
                    return Err(format!("flag `--{name}` of `{command}` needs a value"));
                }
            };
            check_value(
                command,
                &format!("--{name}"),
                kind,
                value,
                root,
                cwd,
                pattern_given,
            )?;
            Ok(used_next)
        }
    }
}

/// Checks `-abc`, `-n5` or `-n 5`; returns whether the next argument was used.
fn check_short_cluster(
    command: &str,
    policy: &Policy,
    cluster: &str,
    next: Option<&str>,
    root: &Path,
    cwd: &Path,
    pattern_given: &mut bool,
) -> Result<bool, String> {
    for (pos, c) in cluster.char_indices() {
        if let Some(f) = policy.forbidden.iter().find(|f| f.short == Some(c)) {
            return Err(forbidden_reason(command, &format!("-{c}"), f.why));
        }
        let Some(flag) = policy.flags.iter().find(|f| f.short == Some(c)) else {
            return Err(unknown_flag(command, &format!("-{c}"), policy));
        };
        if let Some(kind) = flag.value {
            let rest = &cluster[pos + c.len_utf8()..];
            // `-f=/etc/passwd`: the programs drop the `=` and take the rest, while a check of
            // `=/etc/passwd` would see a harmless relative name. Refused, never reinterpreted.
            if let Some(glued) = rest.strip_prefix('=') {
                return Err(format!(
                    "refused: write `-{c} VALUE` or `-{c}VALUE`, not `-{c}={glued}`"
                ));
            }
            let (value, used_next) = if !rest.is_empty() {
                (rest, false)
            } else if let Some(v) = next {
                (v, true)
            } else {
                return Err(format!("flag `-{c}` of `{command}` needs a value"));
            };
            check_value(
                command,
                &format!("-{c}"),
                kind,
                value,
                root,
                cwd,
                pattern_given,
            )?;
            return Ok(used_next);
        }
    }
    Ok(false)
}

fn check_value(
    command: &str,
    flag: &str,
    kind: Value,
    value: &str,
    root: &Path,
    cwd: &Path,
    pattern_given: &mut bool,
) -> Result<(), String> {
    match kind {
        Value::Number => {
            let digits = value.strip_prefix(['+', '-']).unwrap_or(value);
            if digits.is_empty() || !digits.chars().all(|c| c.is_ascii_digit()) {
                return Err(format!(
                    "flag `{flag}` of `{command}` needs a whole number, not `{value}`"
                ));
            }
            // Thousands of search threads would only load the machine.
            if (flag == "-j" || flag == "--threads")
                && digits.parse::<u32>().map_or(true, |n| n > 16)
            {
                return Err(format!("refused: `{flag}` takes at most 16 threads"));
            }
        }
        Value::Text => {}
        Value::Pattern => *pattern_given = true,
        Value::Path => {
            // A pattern file also stands in for the pattern.
            *pattern_given |= flag == "-f" || flag == "--file";
            check_path(root, cwd, value)?;
        }
    }
    Ok(())
}

fn unknown_flag(command: &str, flag: &str, policy: &Policy) -> String {
    let mut allowed: Vec<String> = Vec::new();
    for f in policy.flags {
        if let Some(s) = f.short {
            allowed.push(format!("-{s}"));
        }
        if let Some(l) = f.long {
            allowed.push(format!("--{l}"));
        }
    }
    format!(
        "flag `{flag}` is not allowed for `{command}`; allowed: {}",
        if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(" ")
        }
    )
}

/// Checks one path argument; returns its real location (inside the workspace).
pub fn check_path(root: &Path, cwd: &Path, path: &str) -> Result<PathBuf, String> {
    if path.is_empty() {
        return Err("an empty path is not allowed".into());
    }
    let p = Path::new(path);
    if p.is_absolute() || path.starts_with('/') {
        return Err(format!(
            "absolute path `{path}` is refused; use a path relative to the workspace"
        ));
    }
    if path.starts_with('~') {
        return Err(format!(
            "path `{path}` is refused: `~` (the home folder) is outside the workspace"
        ));
    }
    if p.components().any(|c| c == Component::ParentDir) {
        return Err(format!("path `{path}` is refused: `..` is not allowed"));
    }
    let joined = cwd.join(p);
    if joined
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
        && joined.canonicalize().is_err()
    {
        return Err(format!(
            "path `{path}` is refused: it is a broken symbolic link"
        ));
    }
    let real = real_location(&joined);
    if !real.starts_with(root) {
        return Err(format!(
            "path `{path}` is refused: its real location is outside the workspace \
             (a symbolic link leads out)"
        ));
    }
    // A hard link may be a file outside the workspace under a name inside it.
    if let Ok(meta) = real.metadata()
        && meta.is_file()
        && std::os::unix::fs::MetadataExt::nlink(&meta) > 1
    {
        return Err(format!(
            "path `{path}` is refused: the file has other hard links, so it may be a file outside \
             the workspace"
        ));
    }
    Ok(real)
}

/// The canonical location of a path that may not exist yet: its deepest existing ancestor
/// canonicalised (symbolic links resolved), with the missing rest appended.
fn real_location(path: &Path) -> PathBuf {
    let mut missing: Vec<std::ffi::OsString> = Vec::new();
    let mut current = path.to_path_buf();
    loop {
        if let Ok(real) = current.canonicalize() {
            return missing.iter().rev().fold(real, |acc, part| acc.join(part));
        }
        match (current.file_name(), current.parent()) {
            (Some(name), Some(parent)) => {
                missing.push(name.to_os_string());
                current = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}
