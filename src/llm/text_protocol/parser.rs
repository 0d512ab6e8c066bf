//! The text-tag protocol's stream parser: content deltas in; thought text, `<think>` reasoning,
//! whole calls and broken tags out. It holds back only what may still become a tag, so text
//! streams on, and what it finds is the same however the stream is cut.
//!
//! `<tool_call>` opens a call anywhere outside a fenced code block; the call ends at the first
//! `</tool_call>` outside a JSON string (a raw line break ends a string: JSON strings cannot hold
//! one, so that string was broken). `<think>` before any other text opens reasoning, up to
//! `</think>` (local reasoning models write it into the content).

use super::call::{CLOSE, OPEN, read_call, unclosed_problem};
const THINK_OPEN: &str = "<think>";
const THINK_CLOSE: &str = "</think>";

/// What the parser found, in stream order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Text outside tags: the thought before calls, or the answer.
    Text(String),
    /// Reasoning written inside `<think>…</think>`.
    Reasoning(String),
    /// A call that reads well.
    Call {
        /// The tool's name.
        name: String,
        /// Its arguments as a JSON object's text.
        arguments: String,
    },
    /// A tag that is not a usable call: its text as written, and what is wrong with it.
    Broken {
        /// The tag as the model wrote it (closing tag included when there was one).
        raw: String,
        /// What is wrong, in words for the model.
        problem: String,
    },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Mode {
    #[default]
    Text,
    Think,
    Call,
}

/// Where a line of text stands with respect to code fences.
#[derive(Clone, Copy, Debug)]
enum Line {
    /// At the start of a line, after this many spaces.
    Start(usize),
    /// In a run of fence characters at the start of a line.
    Run(char, usize),
    /// After a run that closes the open fence if only spaces follow.
    Closing,
    /// Anywhere else.
    Rest,
}

/// Fenced code blocks (```` ``` ```` or `~~~`, as CommonMark opens and closes them).
#[derive(Debug)]
struct Fences {
    /// The open fence's character and length.
    open: Option<(char, usize)>,
    line: Line,
}

impl Default for Fences {
    fn default() -> Self {
        Self {
            open: None,
            line: Line::Start(0),
        }
    }
}

impl Fences {
    /// Takes one character of text; returns whether it lies inside a fenced block.
    fn feed(&mut self, c: char) -> bool {
        let blank = matches!(c, ' ' | '\t' | '\r');
        if c == '\n' {
            match self.line {
                Line::Run(ch, n) => self.end_run(ch, n),
                Line::Closing => self.open = None,
                _ => {}
            }
            self.line = Line::Start(0);
            return self.open.is_some();
        }
        self.line = match self.line {
            Line::Start(k) if c == ' ' && k < 3 => Line::Start(k + 1),
            Line::Start(_) if c == '`' || c == '~' => Line::Run(c, 1),
            Line::Run(ch, n) if c == ch => Line::Run(ch, n + 1),
            Line::Run(ch, n) if n >= 3 => match self.open {
                // An opening fence: what follows on its line is the info string.
                None => {
                    self.open = Some((ch, n));
                    Line::Rest
                }
                Some((open, len)) if open == ch && n >= len && blank => Line::Closing,
                Some(_) => Line::Rest,
            },
            Line::Closing if blank => Line::Closing,
            _ => Line::Rest,
        };
        self.open.is_some()
    }

    /// A run of fence characters ended its line.
    fn end_run(&mut self, ch: char, n: usize) {
        if n < 3 {
            return;
        }
        match self.open {
            None => self.open = Some((ch, n)),
            Some((open, len)) if open == ch && n >= len => self.open = None,
            Some(_) => {}
        }
    }
}

/// Whether the call being read is inside a JSON string.
#[derive(Clone, Copy, Debug, Default)]
struct JsonScan {
    in_string: bool,
    escaped: bool,
}

/// The stream parser of one response.
#[derive(Debug, Default)]
pub struct TagParser {
    mode: Mode,
    /// Text or reasoning that may be the start of a tag, held back until it is decided.
    held: String,
    /// The open call's text so far.
    body: String,
    json: JsonScan,
    fences: Fences,
    /// Whether any text but white space came yet (`<think>` opens only before).
    seen_text: bool,
    out: Vec<Piece>,
}

impl TagParser {
    /// A parser at the start of a response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next content delta; returns what it decided.
    pub fn push(&mut self, delta: &str) -> Vec<Piece> {
        for c in delta.chars() {
            match self.mode {
                Mode::Text => self.feed_text(c),
                Mode::Think => self.feed_think(c),
                Mode::Call => self.feed_call(c),
            }
        }
        std::mem::take(&mut self.out)
    }

    /// The stream ended: what was held back, and a call left open as a broken one.
    pub fn finish(&mut self) -> Vec<Piece> {
        let held = std::mem::take(&mut self.held);
        match self.mode {
            Mode::Text => self.text(&held),
            Mode::Think => self.reasoning(&held),
            Mode::Call => {
                let raw = format!("{OPEN}{}", std::mem::take(&mut self.body));
                self.out.push(Piece::Broken {
                    raw,
                    problem: unclosed_problem(),
                });
            }
        }
        self.mode = Mode::Text;
        std::mem::take(&mut self.out)
    }

    fn feed_text(&mut self, c: char) {
        if !self.held.is_empty() {
            let mut candidate = std::mem::take(&mut self.held);
            candidate.push(c);
            if candidate == OPEN {
                self.open_call();
                return;
            }
            if candidate == THINK_OPEN && !self.seen_text {
                self.mode = Mode::Think;
                return;
            }
            let think = !self.seen_text && THINK_OPEN.starts_with(&candidate);
            if OPEN.starts_with(&candidate) || think {
                self.fences.feed(c);
                self.held = candidate;
                return;
            }
            // Not a tag after all: what was held is text, and `c` is looked at afresh.
            candidate.pop();
            self.text(&candidate);
        }
        let in_fence = self.fences.feed(c);
        if c == '<' && !in_fence {
            self.held.push(c);
            return;
        }
        let mut buf = [0u8; 4];
        self.text(c.encode_utf8(&mut buf));
    }

    fn feed_think(&mut self, c: char) {
        if !self.held.is_empty() || c == '<' {
            let mut candidate = std::mem::take(&mut self.held);
            candidate.push(c);
            if candidate == THINK_CLOSE {
                self.mode = Mode::Text;
                self.seen_text = true;
                return;
            }
            if THINK_CLOSE.starts_with(&candidate) {
                self.held = candidate;
                return;
            }
            candidate.pop();
            self.reasoning(&candidate);
            if c == '<' {
                self.held.push(c);
                return;
            }
        }
        let mut buf = [0u8; 4];
        self.reasoning(c.encode_utf8(&mut buf));
    }

    fn feed_call(&mut self, c: char) {
        self.body.push(c);
        let scan = &mut self.json;
        if scan.escaped {
            scan.escaped = false;
        } else if scan.in_string {
            match c {
                '\\' => scan.escaped = true,
                '"' | '\n' => scan.in_string = false,
                _ => {}
            }
        } else if c == '"' {
            scan.in_string = true;
        } else if c == '>' && self.body.ends_with(CLOSE) {
            let content = self.body[..self.body.len() - CLOSE.len()].to_string();
            self.close_call(&content);
        } else if c == '>' && self.body.ends_with(OPEN) {
            // A new call opened before this one was closed: this one is left open.
            let content = &self.body[..self.body.len() - OPEN.len()];
            self.out.push(Piece::Broken {
                raw: format!("{OPEN}{content}"),
                problem: unclosed_problem(),
            });
            self.open_call();
        }
    }

    fn open_call(&mut self) {
        self.mode = Mode::Call;
        self.body.clear();
        self.json = JsonScan::default();
    }

    fn close_call(&mut self, content: &str) {
        self.out.push(match read_call(content) {
            Ok((name, arguments)) => Piece::Call { name, arguments },
            Err(problem) => Piece::Broken {
                raw: format!("{OPEN}{content}{CLOSE}"),
                problem,
            },
        });
        self.mode = Mode::Text;
        self.body.clear();
        self.seen_text = true;
        // The tag's own text lay on this line (or ran over several): no fence starts here.
        self.fences.line = Line::Rest;
    }

    fn text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.seen_text |= !text.trim().is_empty();
        match self.out.last_mut() {
            Some(Piece::Text(t)) => t.push_str(text),
            _ => self.out.push(Piece::Text(text.to_string())),
        }
    }

    fn reasoning(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match self.out.last_mut() {
            Some(Piece::Reasoning(t)) => t.push_str(text),
            _ => self.out.push(Piece::Reasoning(text.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;
