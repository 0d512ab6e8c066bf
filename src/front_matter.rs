//! The YAML front matter of a Markdown file (`SKILL.md`, a custom slash command): a `---` line,
//! `key: value` lines, a closing `---`, then the body.
//!
//! Only the subset such files use is read: plain, single- and double-quoted values, `>` and `|`
//! block scalars, and plain values continued on indented lines. Nested maps and lists
//! (`metadata:`, `allowed-tools:` as a list) are skipped, not refused, so files written for
//! other agents parse unchanged. Values are kept as text; what a key means is the reader's
//! business. A whole YAML crate would accept far more than these files need (anchors, tags,
//! documents) and still not accept what Claude Code's own files hold: `argument-hint: [a] [b]`
//! is not valid YAML, but it is a plain value here. A leaf: it imports nothing of MiniClaw.

use std::collections::BTreeMap;

/// Why a front matter could not be read; the line is counted from 1 (the opening `---`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrontMatterError {
    /// The opening `---` has no closing `---`.
    #[error("the front matter opened by `---` on line 1 is never closed by another `---`")]
    Unclosed,
    /// A top-level line is not `key: value`.
    #[error("line {line} of the front matter is not `key: value`")]
    NotKeyValue {
        /// Its number.
        line: usize,
    },
    /// A quoted value has no closing quote on its line.
    #[error("line {line} of the front matter opens a quote it does not close")]
    UnclosedQuote {
        /// Its number.
        line: usize,
    },
}

/// A file split into its front matter and its body.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Document<'a> {
    /// Whether the file opened with a front matter at all.
    pub has_front_matter: bool,
    /// The top-level keys with text values (the first of a key given twice).
    pub fields: BTreeMap<String, String>,
    /// What follows the closing `---` (the whole file without a front matter).
    pub body: &'a str,
}

impl Document<'_> {
    /// The value of `key`, when it is given and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .get(key)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }
}

/// Splits `text` into front matter and body. A file that does not start with a `---` line has
/// no front matter: all of it is the body.
pub fn parse(text: &str) -> Result<Document<'_>, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = LineIter::new(text);
    match lines.next() {
        Some((_, first)) if is_fence(first) => {}
        _ => {
            return Ok(Document {
                body: text,
                ..Document::default()
            });
        }
    }
    let mut header: Vec<(usize, &str)> = Vec::new();
    let body = loop {
        let Some((number, line)) = lines.next() else {
            return Err(FrontMatterError::Unclosed);
        };
        if is_fence(line) || line.trim_end() == "..." {
            break lines.rest();
        }
        header.push((number, line));
    };
    Ok(Document {
        has_front_matter: true,
        fields: fields(&header)?,
        body,
    })
}

/// Whether a line is the `---` fence (trailing blanks and a CR allowed).
fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Lines with their numbers (from 1) and what remains after the last one taken.
struct LineIter<'a> {
    text: &'a str,
    at: usize,
    number: usize,
}

impl<'a> LineIter<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            text,
            at: 0,
            number: 0,
        }
    }

    /// The text after the lines taken so far.
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }
}

impl<'a> Iterator for LineIter<'a> {
    type Item = (usize, &'a str);

    fn next(&mut self) -> Option<Self::Item> {
        let rest = self.rest();
        if rest.is_empty() {
            return None;
        }
        let (line, taken) = match rest.find('\n') {
            Some(i) => (&rest[..i], i + 1),
            None => (rest, rest.len()),
        };
        self.at += taken;
        self.number += 1;
        Some((self.number, line.strip_suffix('\r').unwrap_or(line)))
    }
}

/// Whether a line is indented (a nested entry, a block scalar's line, a continuation).
fn indented(line: &str) -> bool {
    line.starts_with([' ', '\t'])
}

/// Whether a line says nothing (blank or a comment).
fn blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// The top-level `key: value` pairs of the header lines.
fn fields(header: &[(usize, &str)]) -> Result<BTreeMap<String, String>, FrontMatterError> {
    let mut out = BTreeMap::new();
    let mut i = 0;
    while i < header.len() {
        let (number, line) = header[i];
        i += 1;
        // Lines that belong to something skipped (a nested map, a list) are skipped with it.
        if blank(line) || indented(line) || line.starts_with("- ") || line == "-" {
            continue;
        }
        let (key, raw) = split_key(line).ok_or(FrontMatterError::NotKeyValue { line: number })?;
        // The indented lines after the key: its block scalar, continuation or nested entries.
        let start = i;
        while i < header.len() && (indented(header[i].1) || header[i].1.trim().is_empty()) {
            i += 1;
        }
        let more: Vec<&str> = header[start..i].iter().map(|(_, l)| *l).collect();
        let Some(value) = value(raw, &more, number)? else {
            continue;
        };
        out.entry(key.to_string()).or_insert(value);
    }
    Ok(out)
}

/// `key: rest` split at the first `:` that ends the key (followed by a blank or the line's
/// end); keys may hold `-`, `_`, `.` and letters, as YAML's plain keys do.
fn split_key(line: &str) -> Option<(&str, &str)> {
    let mut from = 0;
    while let Some(pos) = line[from..].find(':') {
        let at = from + pos;
        let after = &line[at + 1..];
        if after.is_empty() || after.starts_with([' ', '\t']) {
            let key = line[..at].trim();
            let key = unquote_key(key);
            return (!key.is_empty()).then_some((key, after.trim()));
        }
        from = at + 1;
    }
    None
}

/// A key written in quotes, without them.
fn unquote_key(key: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = key.strip_prefix(q).and_then(|k| k.strip_suffix(q)) {
            return inner;
        }
    }
    key
}

/// The text value of a key from its line's rest and the indented lines after it; `None` for a
/// value that is not text (a nested map or list, or nothing at all).
fn value(raw: &str, more: &[&str], line: usize) -> Result<Option<String>, FrontMatterError> {
    if raw.is_empty() || raw.starts_with('#') {
        // A nested map or list follows, or the value is empty: not text.
        return Ok(None);
    }
    if let Some(style) = block_style(raw) {
        return Ok(Some(block(style, more)));
    }
    if let Some(inner) = raw.strip_prefix('"') {
        return double_quoted(inner)
            .map(Some)
            .ok_or(FrontMatterError::UnclosedQuote { line });
    }
    if let Some(inner) = raw.strip_prefix('\'') {
        return single_quoted(inner)
            .map(Some)
            .ok_or(FrontMatterError::UnclosedQuote { line });
    }
    // A plain value, continued on indented lines (folded with single spaces).
    let mut text = strip_comment(raw).to_string();
    for next in more.iter().map(|l| l.trim()).filter(|l| !l.is_empty()) {
        text.push(' ');
        text.push_str(strip_comment(next));
    }
    Ok(Some(text))
}

/// A plain value without a trailing ` # comment`.
fn strip_comment(text: &str) -> &str {
    match text.find(" #") {
        Some(i) => text[..i].trim_end(),
        None => text,
    }
}

/// `|` keeps line breaks, `>` folds them into spaces.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Block {
    Literal,
    Folded,
}

/// The block scalar a value's indicator opens (`|`, `>`, with `-`, `+` or a digit after it).
fn block_style(raw: &str) -> Option<Block> {
    let raw = strip_comment(raw);
    let style = match raw.chars().next()? {
        '|' => Block::Literal,
        '>' => Block::Folded,
        _ => return None,
    };
    raw[1..]
        .chars()
        .all(|c| matches!(c, '-' | '+') || c.is_ascii_digit())
        .then_some(style)
}

/// A block scalar's text: its lines without their common indentation, kept or folded, without
/// trailing line breaks (what a one-line description or hint wants).
fn block(style: Block, lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let lines: Vec<&str> = lines
        .iter()
        .map(|l| l.get(indent..).unwrap_or("").trim_end())
        .collect();
    let text = match style {
        Block::Literal => lines.join("\n"),
        Block::Folded => {
            let mut out = String::new();
            for (i, line) in lines.iter().enumerate() {
                if i > 0 {
                    let empty = line.is_empty() || lines[i - 1].is_empty();
                    out.push(if empty { '\n' } else { ' ' });
                }
                out.push_str(line);
            }
            out
        }
    };
    text.trim_end().to_string()
}

/// A double-quoted value after its opening quote, with YAML's escapes; `None` when unclosed.
fn double_quoted(inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'e' => out.push('\u{1b}'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).ok()?;
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
                'x' => {
                    let hex: String = chars.by_ref().take(2).collect();
                    let code = u32::from_str_radix(&hex, 16).ok()?;
                    out.push(char::from_u32(code).unwrap_or('\u{fffd}'));
                }
                other => out.push(other),
            },
            other => out.push(other),
        }
    }
    None
}

/// A single-quoted value after its opening quote (`''` is one quote); `None` when unclosed.
fn single_quoted(inner: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\'' {
            if chars.peek() == Some(&'\'') {
                chars.next();
                out.push('\'');
            } else {
                return Some(out);
            }
        } else {
            out.push(c);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropics_skill_example_parses_unchanged() {
        let text = "---\nname: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files or when the user mentions PDFs, forms, or document extraction.\n---\n\n# PDF Processing\n\n## Quick start\n";
        let doc = parse(text).unwrap();
        assert!(doc.has_front_matter);
        assert_eq!(doc.get("name"), Some("pdf-processing"));
        assert!(
            doc.get("description")
                .unwrap()
                .starts_with("Extract text and tables from PDF files, fill forms")
        );
        assert_eq!(doc.body, "\n# PDF Processing\n\n## Quick start\n");
    }

    #[test]
    fn claude_codes_command_example_parses_unchanged() {
        let text = "---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review pull request\n---\n\nReview PR #$1 with priority $2 and assign to $3.";
        let doc = parse(text).unwrap();
        assert_eq!(
            doc.get("argument-hint"),
            Some("[pr-number] [priority] [assignee]")
        );
        assert_eq!(doc.get("description"), Some("Review pull request"));
        assert_eq!(
            doc.body,
            "\nReview PR #$1 with priority $2 and assign to $3."
        );
    }

    #[test]
    fn other_keys_lists_and_maps_do_not_break_it() {
        let text = "---\r\nname: 'it''s'\r\ndescription: \"Tab\\there \\\"q\\\" \\u00e9\"\r\nlicense: Apache-2.0\r\nallowed-tools:\r\n  - Read\r\n  - Bash(git:*)\r\nmetadata:\r\n  author: someone\r\n  version: \"1.0\"\r\n# a comment\r\nmodel: pro # the big one\r\n---\r\nBody\r\n";
        let doc = parse(text).unwrap();
        assert_eq!(doc.get("name"), Some("it's"));
        assert_eq!(doc.get("description"), Some("Tab\there \"q\" é"));
        assert_eq!(doc.get("license"), Some("Apache-2.0"));
        assert_eq!(doc.get("allowed-tools"), None);
        assert_eq!(doc.get("metadata"), None);
        assert_eq!(doc.get("author"), None, "nested keys stay nested");
        assert_eq!(doc.get("model"), Some("pro"));
        assert_eq!(doc.body, "Body\r\n");
    }

    #[test]
    fn block_scalars_and_continued_plain_values() {
        let text = "---\nfolded: >\n  one\n  two\n\n  three\nliteral: |-\n  a\n    b\nplain: starts here\n  and goes on\n---\n";
        let doc = parse(text).unwrap();
        assert_eq!(doc.get("folded"), Some("one two\n\nthree"));
        assert_eq!(doc.get("literal"), Some("a\n  b"));
        assert_eq!(doc.get("plain"), Some("starts here and goes on"));
        assert_eq!(doc.body, "");
    }

    #[test]
    fn no_front_matter_is_all_body() {
        let doc = parse("Just do $ARGUMENTS.\n").unwrap();
        assert!(!doc.has_front_matter);
        assert!(doc.fields.is_empty());
        assert_eq!(doc.body, "Just do $ARGUMENTS.\n");
        // A rule inside the text is not a front matter.
        let doc = parse("Title\n---\nmore").unwrap();
        assert!(!doc.has_front_matter);
    }

    #[test]
    fn broken_front_matter_says_what_is_wrong() {
        assert_eq!(
            parse("---\nname: x\n").unwrap_err(),
            FrontMatterError::Unclosed
        );
        assert_eq!(
            parse("---\nname: x\njust words\n---\n").unwrap_err(),
            FrontMatterError::NotKeyValue { line: 3 }
        );
        assert_eq!(
            parse("---\ndescription: \"open\n---\n").unwrap_err(),
            FrontMatterError::UnclosedQuote { line: 2 }
        );
        // A URL's colon does not end the key.
        let doc = parse("---\nsee: https://example.com/a\n---\n").unwrap();
        assert_eq!(doc.get("see"), Some("https://example.com/a"));
    }

    #[test]
    fn the_first_of_a_repeated_key_counts() {
        let doc = parse("---\nname: one\nname: two\n---\n").unwrap();
        assert_eq!(doc.get("name"), Some("one"));
    }
}
