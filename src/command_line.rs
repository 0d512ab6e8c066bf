//! Reads a shell command line (what `run_command` hands to `sh -c`) into its simple commands,
//! so a prefix rule can be checked against each of them. The reading is deliberately narrow:
//! anything whose effect depends on running something first or on the shell's state
//! (`$(...)`, backticks, process substitution, a variable in command position, here-documents,
//! subshells, groups, function definitions, compound keywords, leading assignments, unbalanced
//! quotes) is [`Unreadable`], and such a line always asks. A leaf: it imports nothing of
//! MiniClaw.

/// One word of a simple command, quotes removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    /// The word as the shell passes it, when it does not expand.
    pub text: String,
    /// Whether the shell changes it before the command sees it (`$VAR`, `${x}`, a glob, `~`,
    /// braces): such a word never equals a rule's word.
    pub expands: bool,
}

/// One simple command of a line: its words, redirections left out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimpleCommand {
    /// Its words, the command's name first.
    pub words: Vec<Word>,
}

impl SimpleCommand {
    /// The words' text (for showing and for tests).
    pub fn texts(&self) -> Vec<&str> {
        self.words.iter().map(|w| w.text.as_str()).collect()
    }
}

/// Why a command line cannot be read with certainty.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unreadable {
    /// `$(...)`, `$((...))` or backticks: a command runs to make the line.
    #[error("it runs a command to make its own words ($(...) or backticks)")]
    Substitution,
    /// `<(...)` or `>(...)`.
    #[error("it uses process substitution (<(...) or >(...))")]
    ProcessSubstitution,
    /// `<<` or `<<<`.
    #[error("it has a here-document (<<)")]
    HereDocument,
    /// A quote without its end.
    #[error("a quote is not closed")]
    UnbalancedQuote,
    /// `(`, `)`: a subshell, a function definition, a `case` pattern.
    #[error("it has a subshell or a function definition (parentheses)")]
    Subshell,
    /// A keyword or group that makes a compound command (`{`, `if`, `for`, `!`, ...).
    #[error("it has a compound command (`{0}`)")]
    Compound(String),
    /// `VAR=value cmd`.
    #[error("it starts with a variable assignment (`{0}`)")]
    Assignment(String),
    /// A command name the shell makes at run time (`$CMD`, `${x}`, a glob).
    #[error("its command name `{0}` is only known when it runs")]
    ExpandedName(String),
    /// `${...}` holding something more than a name.
    #[error("it has an expansion MiniClaw does not read (`${{...}}` with more than a name)")]
    Expansion,
    /// `$'...'` or `$"..."`.
    #[error("it uses $'...' or $\"...\" quoting")]
    DollarQuote,
    /// A redirection without its target.
    #[error("a redirection has no target")]
    Redirection,
    /// Nothing to run.
    #[error("it is empty")]
    Empty,
}

/// Words that make a compound command when they stand first.
const COMPOUND: &[&str] = &[
    "{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "case", "esac", "while",
    "until", "for", "in", "select", "function", "[[", "]]", "coproc",
];

/// Splits `line` into its simple commands (on `&&`, `||`, `;`, `|`, `&`, newlines), each one's
/// words with quotes removed and redirections left out; or why it cannot be read.
pub fn split(line: &str) -> Result<Vec<SimpleCommand>, Unreadable> {
    let mut reader = Reader {
        chars: line.chars().collect(),
        at: 0,
    };
    let mut parts: Vec<SimpleCommand> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    loop {
        reader.skip_blanks();
        let Some(c) = reader.peek() else { break };
        match c {
            '\n' | ';' | '&' | '|' => {
                reader.at += 1;
                // `&&`, `||`, `;;`, `|&` are one separator; `&>` is a redirection (bash).
                if c == '&' && reader.peek() == Some('>') {
                    reader.at -= 1;
                    reader.redirection()?;
                    continue;
                }
                if matches!(
                    (c, reader.peek()),
                    ('&', Some('&')) | ('|', Some('|' | '&'))
                ) {
                    reader.at += 1;
                }
                finish(&mut parts, &mut words)?;
            }
            '(' | ')' => return Err(Unreadable::Subshell),
            '#' => reader.skip_comment(),
            '<' | '>' => reader.redirection()?,
            _ => {
                let word = reader.word()?;
                // `2>file`, `2>&1`: digits right before a redirection name a descriptor.
                if matches!(reader.peek(), Some('<' | '>'))
                    && !word.quoted_or_expanded
                    && !word.text.is_empty()
                    && word.text.chars().all(|c| c.is_ascii_digit())
                {
                    reader.redirection()?;
                    continue;
                }
                words.push(word.into_word());
            }
        }
    }
    finish(&mut parts, &mut words)?;
    if parts.is_empty() {
        return Err(Unreadable::Empty);
    }
    Ok(parts)
}

/// Ends the simple command being read: checked, kept unless it has no words (a lone
/// redirection, an empty part between separators).
fn finish(parts: &mut Vec<SimpleCommand>, words: &mut Vec<Word>) -> Result<(), Unreadable> {
    let words = std::mem::take(words);
    let Some(first) = words.first() else {
        return Ok(());
    };
    if COMPOUND.contains(&first.text.as_str()) {
        return Err(Unreadable::Compound(first.text.clone()));
    }
    if is_assignment(&first.text) {
        return Err(Unreadable::Assignment(first.text.clone()));
    }
    if first.expands {
        return Err(Unreadable::ExpandedName(first.text.clone()));
    }
    parts.push(SimpleCommand { words });
    Ok(())
}

/// Whether `text` reads as `NAME=value`.
fn is_assignment(text: &str) -> bool {
    let Some((name, _)) = text.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A word as read, before it is kept.
struct RawWord {
    text: String,
    expands: bool,
    /// Whether any of it was quoted, escaped or expanded (then digits before `>` are a word).
    quoted_or_expanded: bool,
}

impl RawWord {
    fn into_word(self) -> Word {
        Word {
            text: self.text,
            expands: self.expands,
        }
    }
}

/// Reads the line one character at a time.
struct Reader {
    chars: Vec<char>,
    at: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Skips spaces, tabs and escaped newlines (a line continued).
    fn skip_blanks(&mut self) {
        loop {
            match self.peek() {
                Some(' ' | '\t') => self.at += 1,
                Some('\\') if self.peek_at(1) == Some('\n') => self.at += 2,
                _ => return,
            }
        }
    }

    /// Skips a comment up to (not past) the end of its line.
    fn skip_comment(&mut self) {
        while let Some(c) = self.peek() {
            if c == '\n' {
                return;
            }
            self.at += 1;
        }
    }

    /// Reads one redirection (`>`, `>>`, `>|`, `>&`, `<`, `<>`, `<&`, `&>`, `&>>`) and its
    /// target, which is dropped.
    fn redirection(&mut self) -> Result<(), Unreadable> {
        let first = self.peek().ok_or(Unreadable::Redirection)?;
        self.at += 1;
        if first == '&' {
            // `&>` / `&>>`: the `>` follows.
            self.at += 1;
            if self.peek() == Some('>') {
                self.at += 1;
            }
        } else {
            match (first, self.peek()) {
                ('<', Some('<')) => return Err(Unreadable::HereDocument),
                (_, Some('(')) => return Err(Unreadable::ProcessSubstitution),
                ('>', Some('>' | '|' | '&')) | ('<', Some('>' | '&')) => self.at += 1,
                _ => {}
            }
        }
        self.skip_blanks();
        match self.peek() {
            None | Some('\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')') => {
                Err(Unreadable::Redirection)
            }
            Some(_) => self.word().map(|_| ()),
        }
    }

    /// Reads one word up to an unquoted blank or operator.
    fn word(&mut self) -> Result<RawWord, Unreadable> {
        let mut word = RawWord {
            text: String::new(),
            expands: false,
            quoted_or_expanded: false,
        };
        let start = self.at;
        while let Some(c) = self.peek() {
            match c {
                // A carriage return is part of a word to `sh`, as here.
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' => break,
                '(' | ')' => return Err(Unreadable::Subshell),
                '`' => return Err(Unreadable::Substitution),
                '\'' => {
                    self.at += 1;
                    word.quoted_or_expanded = true;
                    loop {
                        match self.peek() {
                            None => return Err(Unreadable::UnbalancedQuote),
                            Some('\'') => break,
                            Some(c) => word.text.push(c),
                        }
                        self.at += 1;
                    }
                    self.at += 1;
                }
                '"' => {
                    self.at += 1;
                    word.quoted_or_expanded = true;
                    self.double_quoted(&mut word)?;
                }
                '\\' => {
                    self.at += 1;
                    word.quoted_or_expanded = true;
                    match self.peek() {
                        // A line continued: nothing.
                        Some('\n') => {}
                        Some(c) => word.text.push(c),
                        // A lone backslash at the end stays itself.
                        None => {
                            word.text.push('\\');
                            continue;
                        }
                    }
                    self.at += 1;
                }
                '$' => self.dollar(&mut word)?,
                '*' | '?' | '[' | '{' | '}' => {
                    word.expands = true;
                    word.text.push(c);
                    self.at += 1;
                }
                '~' if self.at == start => {
                    word.expands = true;
                    word.text.push(c);
                    self.at += 1;
                }
                _ => {
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
        // A lone `[` is the `test` command, not a pattern.
        if word.text == "[" && !word.quoted_or_expanded {
            word.expands = false;
        }
        Ok(word)
    }

    /// Reads what is between double quotes (the opening one read), and the closing quote.
    fn double_quoted(&mut self, word: &mut RawWord) -> Result<(), Unreadable> {
        loop {
            match self.peek() {
                None => return Err(Unreadable::UnbalancedQuote),
                Some('"') => {
                    self.at += 1;
                    return Ok(());
                }
                Some('`') => return Err(Unreadable::Substitution),
                Some('$') => self.dollar(word)?,
                Some('\\') => {
                    self.at += 1;
                    match self.peek() {
                        None => return Err(Unreadable::UnbalancedQuote),
                        Some('\n') => {}
                        Some(c @ ('$' | '`' | '"' | '\\')) => word.text.push(c),
                        Some(c) => {
                            word.text.push('\\');
                            word.text.push(c);
                        }
                    }
                    self.at += 1;
                }
                Some(c) => {
                    word.text.push(c);
                    self.at += 1;
                }
            }
        }
    }

    /// Reads a `$`: a substitution cannot be read; a variable makes the word expand.
    fn dollar(&mut self, word: &mut RawWord) -> Result<(), Unreadable> {
        self.at += 1;
        match self.peek() {
            Some('(') => Err(Unreadable::Substitution),
            Some('\'' | '"') => Err(Unreadable::DollarQuote),
            Some('{') => {
                self.at += 1;
                let mut name = String::new();
                loop {
                    match self.peek() {
                        None => return Err(Unreadable::UnbalancedQuote),
                        Some('}') => break,
                        Some(c) if c.is_ascii_alphanumeric() || "_#?@*!$-".contains(c) => {
                            name.push(c)
                        }
                        Some(_) => return Err(Unreadable::Expansion),
                    }
                    self.at += 1;
                }
                self.at += 1;
                word.text.push_str(&format!("${{{name}}}"));
                word.expands = true;
                word.quoted_or_expanded = true;
                Ok(())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                word.text.push('$');
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    word.text.push(c);
                    self.at += 1;
                }
                word.expands = true;
                word.quoted_or_expanded = true;
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "#?@*!$-".contains(c) => {
                word.text.push('$');
                word.text.push(c);
                self.at += 1;
                word.expands = true;
                word.quoted_or_expanded = true;
                Ok(())
            }
            // A `$` before anything else is itself.
            _ => {
                word.text.push('$');
                Ok(())
            }
        }
    }
}

/// `text` written so the shell (and [`split`]) reads it back as one word: as it is when it
/// holds nothing special, else in single quotes.
pub fn quote(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=+,@%^".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests;
