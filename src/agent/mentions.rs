//! `@path` mentions in a prompt: each names a workspace text file whose content goes to the
//! model with the prompt, so it need not call `read_text_file` first.
//!
//! A mention is `@` at the start of the prompt or after white space or an opening bracket,
//! followed by a path up to the next white space (`@"a b.txt"` for a path with spaces);
//! punctuation that ends a sentence (`@notes.md.`) is dropped when the path with it is not a
//! file. Files are read through the same sandbox rules as the tools (never a `.env*` file or
//! MiniClaw's own, never outside the workspace, never through a link that leads out), each cut
//! at [`MAX_FILE_BYTES`] and all of them at [`MAX_TOTAL_BYTES`], the cut noted. A mention that
//! cannot be attached (missing, hidden, binary, outside) stays in the prompt as typed; the
//! model is told why in the attachments block, and the person in a notice.

use serde::{Deserialize, Serialize};

use crate::tools::Sandbox;
use crate::tools::files::read_text;

/// The most bytes of one file attached.
pub const MAX_FILE_BYTES: usize = 64 * 1024;
/// The most bytes attached to one prompt, all files together.
pub const MAX_TOTAL_BYTES: usize = 160 * 1024;
/// Mentions after this many in one prompt are left as typed.
pub const MAX_MENTIONS: usize = 20;

/// Characters that may end a sentence after a mention (`see @notes.md.`).
const TRAILING: &[char] = &['.', ',', ';', ':', '!', '?', ')', ']', '}', '\'', '"'];

/// A prompt whose content carries files it mentioned: how it was typed, and which mentions
/// were attached. Kept with the prompt in the history, so a reopened session shows the prompt
/// as typed while the model keeps seeing the files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attached {
    /// The prompt as the person typed it (the message's content adds the files).
    pub typed: String,
    /// The mentions whose files are attached, as written after `@` (`notes.md`, `"a b.txt"`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<String>,
}

/// A prompt with its mentions resolved.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expanded {
    /// What goes to the model: the prompt, then the attachments block.
    pub content: String,
    /// Set when the prompt mentioned anything (attached or not).
    pub attached: Option<Attached>,
    /// One line per mention that was cut or not attached, for the person.
    pub notes: Vec<String>,
}

/// One `@` mention as found in the prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mention {
    /// The text after `@`, as written (quotes kept).
    pub written: String,
    /// The path it names (quotes taken off).
    pub path: String,
}

/// The mentions of `prompt`, in order, each once. Fenced code blocks are skipped: a pasted
/// snippet's `@decorator` lines are code, not mentions.
pub fn find(prompt: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    let mut fenced = false;
    for line in prompt.split('\n') {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        for mention in in_line(line) {
            if !found.iter().any(|m| m.written == mention.written) {
                found.push(mention);
            }
        }
    }
    found
}

/// The mentions of one line.
fn in_line(line: &str) -> Vec<Mention> {
    let mut found = Vec::new();
    let mut previous: Option<char> = None;
    let mut chars = line.char_indices();
    while let Some((at, c)) = chars.next() {
        let starts = previous.is_none_or(|p| p.is_whitespace() || "([{".contains(p));
        previous = Some(c);
        if c != '@' || !starts {
            continue;
        }
        let rest = &line[at + 1..];
        let written = match rest.strip_prefix('"') {
            Some(quoted) => match quoted.find('"') {
                Some(end) => &rest[..end + 2],
                None => continue,
            },
            None => rest.split(char::is_whitespace).next().unwrap_or(""),
        };
        let path = written.trim_matches('"');
        if path.is_empty() {
            continue;
        }
        // Past the mention, so an `@` inside it starts nothing.
        for _ in 0..written.chars().count() {
            previous = chars.next().map(|(_, c)| c);
        }
        found.push(Mention {
            written: written.to_string(),
            path: path.to_string(),
        });
    }
    found
}

/// Resolves the mentions of `prompt` against the workspace: the content to send, what to keep
/// in the history, and notes for the person. A prompt without mentions comes back as it is.
pub fn expand(sandbox: &Sandbox, prompt: &str) -> Expanded {
    let mentions = find(prompt);
    if mentions.is_empty() {
        return Expanded {
            content: prompt.to_string(),
            ..Default::default()
        };
    }
    let mut block = Block::default();
    for (i, mention) in mentions.iter().enumerate() {
        if i == MAX_MENTIONS {
            block.refuse(
                mention,
                &format!("only the first {MAX_MENTIONS} mentions are read"),
            );
            continue;
        }
        block.attach(sandbox, mention);
    }
    Expanded {
        content: format!("{prompt}\n\n{}", block.render()),
        attached: Some(Attached {
            typed: prompt.to_string(),
            mentions: block.attached,
        }),
        notes: block.notes,
    }
}

/// The attachments block being built.
#[derive(Default)]
struct Block {
    /// `<file>` and `<not_attached>` elements, in mention order.
    parts: Vec<String>,
    /// Mentions attached, as written.
    attached: Vec<String>,
    /// Bytes attached so far.
    used: usize,
    notes: Vec<String>,
}

impl Block {
    /// Reads the file `mention` names (or, failing that, the path without the punctuation
    /// after it) and adds it, or says why it cannot be.
    fn attach(&mut self, sandbox: &Sandbox, mention: &Mention) {
        let room = MAX_TOTAL_BYTES
            .saturating_sub(self.used)
            .min(MAX_FILE_BYTES);
        if room == 0 {
            let why = format!(
                "the attachments reached their {} KB",
                MAX_TOTAL_BYTES / 1024
            );
            self.refuse(mention, &why);
            return;
        }
        let mut failed = None;
        for candidate in candidates(mention) {
            match read(sandbox, &candidate.path, room) {
                Ok(file) => {
                    self.add(&candidate, file);
                    return;
                }
                // The last try (without the punctuation) is the path most likely meant.
                Err(e) => failed = Some((candidate, e)),
            }
        }
        if let Some((candidate, why)) = failed {
            self.refuse(&candidate, &why);
        }
    }

    /// Adds a file that was read.
    fn add(&mut self, mention: &Mention, file: File) {
        self.used += file.text.len();
        let mut part = format!(
            "<file path=\"{}\" bytes=\"{}\">\n{}",
            mention.path, file.total, file.text
        );
        if !file.text.ends_with('\n') {
            part.push('\n');
        }
        if file.cut {
            let cut = format!(
                "only the first {} of {} bytes are attached",
                thousands(file.text.len()),
                thousands(file.total)
            );
            part.push_str(&format!("[cut: {cut}; read_text_file reads more]\n"));
            self.notes.push(format!("@{}: {cut}.", mention.written));
        }
        part.push_str("</file>");
        self.parts.push(part);
        self.attached.push(mention.written.clone());
    }

    /// Notes a mention that is not attached, for the model and for the person.
    fn refuse(&mut self, mention: &Mention, why: &str) {
        self.parts.push(format!(
            "<not_attached mention=\"@{}\">{why}</not_attached>",
            mention.written
        ));
        self.notes
            .push(format!("@{} was not attached: {why}.", mention.written));
    }

    /// The block as the model reads it.
    fn render(&self) -> String {
        let intro = if self.attached.is_empty() {
            "The person mentioned these workspace paths with @, but they could not be attached:"
        } else {
            "The person attached these workspace files by mentioning them with @; their content \
             is here, so there is no need to read them again:"
        };
        format!(
            "<attached_files>\n{intro}\n\n{}\n</attached_files>",
            self.parts.join("\n\n")
        )
    }
}

/// The paths to try for a mention: as written, then without the punctuation after it.
fn candidates(mention: &Mention) -> Vec<Mention> {
    let mut out = vec![mention.clone()];
    let trimmed = mention.written.trim_end_matches(TRAILING);
    if !trimmed.is_empty() && trimmed != mention.written && !trimmed.starts_with('"') {
        out.push(Mention {
            written: trimmed.to_string(),
            path: trimmed.to_string(),
        });
    }
    out
}

/// A file read for attaching.
struct File {
    text: String,
    total: usize,
    cut: bool,
}

/// Reads a workspace text file as `read_text_file` does: the sandbox's read rules, then at
/// most `cap` bytes. The error says why in the tools' words.
fn read(sandbox: &Sandbox, path: &str, cap: usize) -> Result<File, String> {
    let real = sandbox.resolve_read(path).map_err(|e| e.to_string())?;
    let shown = sandbox.display_relative(&real);
    let (text, total, cut) = read_text(sandbox, path, &shown, cap).map_err(|e| e.to_string())?;
    Ok(File {
        text,
        total: usize::try_from(total).unwrap_or(usize::MAX),
        cut,
    })
}

/// `65536` as `65,536`.
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests;
