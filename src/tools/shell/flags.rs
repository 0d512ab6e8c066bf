//! The flag tables of `run_shell_command`: for each allowed command, the flags it may take (and
//! what their values must be) and the flags refused with a specific reason. The rules that read
//! these tables live in `policy`.

/// The commands that may run.
pub const ALLOWED_COMMANDS: [&str; 7] = ["pwd", "ls", "cat", "head", "tail", "wc", "rg"];

/// The most search threads `rg -j` may ask for: thousands would only load the machine.
pub(super) const MAX_THREADS: u32 = 16;

/// What a flag's value must be.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum ValueKind {
    /// A whole number, maybe signed (`tail -n +5`).
    Number,
    /// Any text without shell syntax (a glob, a type name).
    Text,
    /// A path inside the workspace.
    Path,
    /// A search pattern (rg `-e`): makes every positional a path.
    Pattern,
}

/// One allowed flag: its short and long spellings, and its value if it takes one.
pub(super) struct Flag {
    pub(super) short: Option<char>,
    pub(super) long: Option<&'static str>,
    pub(super) value: Option<ValueKind>,
}

/// A flag without a value, `-s` and `--long` (an empty `long` means there is no long form).
const fn switch(short: char, long: &'static str) -> Flag {
    Flag {
        short: Some(short),
        long: if long.is_empty() { None } else { Some(long) },
        value: None,
    }
}

/// A flag without a value that only has a long form.
const fn long_switch(long: &'static str) -> Flag {
    Flag {
        short: None,
        long: Some(long),
        value: None,
    }
}

/// A flag taking a value, `-s VALUE` and `--long VALUE` (an empty `long`: no long form).
const fn with_value(short: char, long: &'static str, value: ValueKind) -> Flag {
    Flag {
        short: Some(short),
        long: if long.is_empty() { None } else { Some(long) },
        value: Some(value),
    }
}

/// A flag taking a value that only has a long form.
const fn long_with_value(long: &'static str, value: ValueKind) -> Flag {
    Flag {
        short: None,
        long: Some(long),
        value: Some(value),
    }
}

/// A flag refused with a specific reason.
pub(super) struct Forbidden {
    pub(super) short: Option<char>,
    pub(super) long: &'static str,
    pub(super) why: &'static str,
}

const FOLLOWS_LINKS: &str = "it follows symbolic links, which may lead outside the workspace";
const FOLLOWS_FOREVER: &str = "it follows the file forever";

const PWD_FLAGS: &[Flag] = &[switch('L', "logical"), switch('P', "physical")];

const LS_FLAGS: &[Flag] = &[
    switch('a', "all"),
    switch('A', "almost-all"),
    switch('l', ""),
    switch('h', "human-readable"),
    switch('R', "recursive"),
    switch('1', ""),
    switch('t', ""),
    switch('S', ""),
    switch('r', "reverse"),
    switch('F', "classify"),
    switch('d', "directory"),
    switch('i', "inode"),
    switch('s', "size"),
    switch('p', ""),
    switch('X', ""),
    switch('U', ""),
    switch('v', ""),
    switch('G', "no-group"),
    switch('n', "numeric-uid-gid"),
    long_switch("group-directories-first"),
    long_switch("full-time"),
    long_with_value("sort", ValueKind::Text),
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
    switch('n', "number"),
    switch('b', "number-nonblank"),
    switch('s', "squeeze-blank"),
    switch('E', "show-ends"),
    switch('T', "show-tabs"),
    switch('A', "show-all"),
    switch('v', "show-nonprinting"),
    switch('e', ""),
    switch('t', ""),
];

const HEAD_FLAGS: &[Flag] = &[
    with_value('n', "lines", ValueKind::Number),
    with_value('c', "bytes", ValueKind::Number),
    switch('q', "quiet"),
    long_switch("silent"),
    switch('v', "verbose"),
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
    switch('l', "lines"),
    switch('w', "words"),
    switch('c', "bytes"),
    switch('m', "chars"),
    switch('L', "max-line-length"),
];
const WC_FORBIDDEN: &[Forbidden] = &[Forbidden {
    short: None,
    long: "files0-from",
    why: "it reads file names from a file, bypassing the path checks",
}];

const RG_FLAGS: &[Flag] = &[
    switch('i', "ignore-case"),
    switch('s', "case-sensitive"),
    switch('S', "smart-case"),
    switch('w', "word-regexp"),
    switch('x', "line-regexp"),
    switch('F', "fixed-strings"),
    switch('v', "invert-match"),
    switch('n', "line-number"),
    switch('N', "no-line-number"),
    switch('c', "count"),
    switch('l', "files-with-matches"),
    long_switch("files-without-match"),
    switch('o', "only-matching"),
    long_switch("hidden"),
    long_switch("no-ignore"),
    switch('u', "unrestricted"),
    long_switch("no-heading"),
    long_switch("heading"),
    long_switch("column"),
    switch('H', "with-filename"),
    switch('I', "no-filename"),
    long_switch("vimgrep"),
    long_switch("json"),
    long_switch("stats"),
    long_switch("files"),
    long_switch("type-list"),
    switch('U', "multiline"),
    long_switch("trim"),
    long_switch("no-messages"),
    switch('q', "quiet"),
    long_switch("count-matches"),
    switch('b', "byte-offset"),
    long_switch("no-config"),
    with_value('e', "regexp", ValueKind::Pattern),
    with_value('f', "file", ValueKind::Path),
    with_value('g', "glob", ValueKind::Text),
    long_with_value("iglob", ValueKind::Text),
    with_value('t', "type", ValueKind::Text),
    with_value('T', "type-not", ValueKind::Text),
    with_value('m', "max-count", ValueKind::Number),
    with_value('A', "after-context", ValueKind::Number),
    with_value('B', "before-context", ValueKind::Number),
    with_value('C', "context", ValueKind::Number),
    long_with_value("max-depth", ValueKind::Number),
    long_with_value("max-filesize", ValueKind::Text),
    long_with_value("sort", ValueKind::Text),
    long_with_value("sortr", ValueKind::Text),
    with_value('M', "max-columns", ValueKind::Number),
    with_value('r', "replace", ValueKind::Text),
    with_value('j', "threads", ValueKind::Number),
    long_with_value("ignore-file", ValueKind::Path),
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
pub(super) struct CommandFlags {
    pub(super) allowed: &'static [Flag],
    pub(super) forbidden: &'static [Forbidden],
    pub(super) takes_positionals: bool,
    /// rg: the first positional is the pattern unless `-e`, `-f` or `--files` gave one.
    pub(super) pattern_first: bool,
}

impl CommandFlags {
    /// The table of `command`, or `None` when it may not run.
    pub(super) fn of(command: &str) -> Option<Self> {
        let table = |allowed, forbidden, takes_positionals, pattern_first| Self {
            allowed,
            forbidden,
            takes_positionals,
            pattern_first,
        };
        Some(match command {
            "pwd" => table(PWD_FLAGS, &[], false, false),
            "ls" => table(LS_FLAGS, LS_FORBIDDEN, true, false),
            "cat" => table(CAT_FLAGS, &[], true, false),
            "head" => table(HEAD_FLAGS, &[], true, false),
            "tail" => table(TAIL_FLAGS, TAIL_FORBIDDEN, true, false),
            "wc" => table(WC_FLAGS, WC_FORBIDDEN, true, false),
            "rg" => table(RG_FLAGS, RG_FORBIDDEN, true, true),
            _ => return None,
        })
    }

    /// The allowed flag spelled `-c`.
    pub(super) fn short(&self, c: char) -> Option<&'static Flag> {
        self.allowed.iter().find(|f| f.short == Some(c))
    }

    /// The allowed flag spelled `--name`.
    pub(super) fn long(&self, name: &str) -> Option<&'static Flag> {
        self.allowed.iter().find(|f| f.long == Some(name))
    }

    /// Why `-c` is refused, when it is a forbidden flag.
    pub(super) fn forbidden_short(&self, c: char) -> Option<&'static str> {
        self.forbidden
            .iter()
            .find(|f| f.short == Some(c))
            .map(|f| f.why)
    }

    /// Why `--name` is refused, when it is a forbidden flag.
    pub(super) fn forbidden_long(&self, name: &str) -> Option<&'static str> {
        self.forbidden
            .iter()
            .find(|f| f.long == name)
            .map(|f| f.why)
    }

    /// Every allowed spelling, `-s --long ...`, or `none`.
    pub(super) fn spellings(&self) -> String {
        let mut allowed: Vec<String> = Vec::new();
        for f in self.allowed {
            if let Some(s) = f.short {
                allowed.push(format!("-{s}"));
            }
            if let Some(l) = f.long {
                allowed.push(format!("--{l}"));
            }
        }
        if allowed.is_empty() {
            "none".to_string()
        } else {
            allowed.join(" ")
        }
    }
}
