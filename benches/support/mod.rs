//! Inputs shared by the benches and the bench examples: a long markdown answer cut into
//! tokens, and sessions of many turns (with or without large tool outputs).
#![allow(dead_code)]

use miniclaw::agent::{Message, Session};
use miniclaw::llm::{FunctionCall, ToolCall};

/// The marker that ends every generated answer (the TUI bench polls the screen for it).
pub fn end_marker(tokens: usize) -> String {
    format!("END-OF-ANSWER-{tokens}")
}

const PROSE: [&str; 8] = [
    "The renderer keeps the finished blocks of an answer and re-lays only the one that is still open,",
    "so a long reply costs about the same per token at its end as at its start.",
    "When a **code block** grows, each new line is highlighted once and kept;",
    "a table is measured again only when a row changes a column's width.",
    "See `src/markdown/stream.rs` for the cache, and the [design notes](https://example.com/notes) for why.",
    "Wrapping happens at the pane's width, which changes only when the terminal is resized.",
    "Nothing here allocates per frame unless the text it draws has changed since the last one,",
    "and the status line redraws on its own timer, never because a token arrived.",
];

const CODE: [&str; 16] = [
    "use std::collections::HashMap;",
    "",
    "/// Counts the words of `text`, case-folded.",
    "pub fn word_counts(text: &str) -> HashMap<String, usize> {",
    "    let mut counts = HashMap::new();",
    "    for word in text.split_whitespace() {",
    "        let key = word.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();",
    "        if key.is_empty() {",
    "            continue; // punctuation only",
    "        }",
    "        *counts.entry(key).or_insert(0) += 1;",
    "    }",
    "    counts",
    "}",
    "",
    "const LIMIT: usize = 4_096; // \"bytes\", not characters",
];

/// `text` cut as a BPE tokenizer cuts English and code: a leading space stays on its word,
/// words of up to six letters are one token and longer ones split every four, and every
/// punctuation mark, run of spaces or newline is a token of its own.
pub fn tokenize(text: &str, out: &mut Vec<String>) {
    let is_word = |c: char| c.is_alphanumeric() || c == '_';
    let mut rest = text;
    while let Some(first) = rest.chars().next() {
        let spaces = rest.len() - rest.trim_start_matches(' ').len();
        let take = if spaces == 1 && rest[1..].starts_with(is_word) {
            1 + word_piece(&rest[1..], is_word)
        } else if spaces > 0 {
            spaces
        } else if is_word(first) {
            word_piece(rest, is_word)
        } else if first == '\n' {
            rest.len() - rest.trim_start_matches('\n').len()
        } else {
            // Markup merges: `##`, `**`, "```", `|---` are one token each.
            rest.char_indices()
                .take(4)
                .take_while(|&(_, c)| !is_word(c) && !c.is_whitespace())
                .last()
                .map_or(1, |(i, c)| i + c.len_utf8())
        };
        out.push(rest[..take].to_string());
        rest = &rest[take..];
    }
}

/// The bytes of the first token of the word `text` starts with: all of a word of up to six
/// characters, four characters of a longer one.
fn word_piece(text: &str, is_word: impl Fn(char) -> bool) -> usize {
    let word = text.find(|c: char| !is_word(c)).unwrap_or(text.len());
    let chars = text[..word].chars().count();
    let keep = if chars <= 6 { chars } else { 4 };
    text[..word]
        .char_indices()
        .nth(keep)
        .map_or(word, |(i, _)| i)
}

/// Section `n` of a markdown answer, ~200 tokens: a heading, a paragraph with inline markup,
/// a list, then a 16-line fenced code block (odd `n`) or a four-row table (even `n`).
fn section(n: usize) -> String {
    let mut s = format!("## {n}. How the cache stays warm\n\n");
    s.push_str(PROSE[n % PROSE.len()]);
    s.push_str("\n\n");
    for item in 0..2 {
        s.push_str(&format!(
            "- **Step {item}:** {}\n",
            PROSE[(n + item + 3) % PROSE.len()]
        ));
    }
    if n % 2 == 1 {
        s.push_str("\n```rust\n");
        for line in CODE {
            s.push_str(line);
            s.push('\n');
        }
        s.push_str("```\n\n");
    } else {
        s.push_str("\n| Stage | Input | Cost per token | Notes |\n|---|---|---:|---|\n");
        for row in 0..4 {
            s.push_str(&format!(
                "| parse {row} | {} bytes | {}.{} µs | {} |\n",
                (n * 37 + row * 101) % 9000,
                row + 1,
                (n + row) % 10,
                ["cached", "re-laid", "highlighted once", "wrapped at width"][row]
            ));
        }
        s.push('\n');
    }
    s
}

/// A markdown answer of `tokens` tokens as the pieces a model streams (one token each, cut
/// by [`tokenize`]): ~200-token sections with headings, lists, inline markup, and a fenced
/// code block or a table in each, ending in [`end_marker`]. As demanding as a real answer.
pub fn answer_tokens(tokens: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens + 256);
    let budget = tokens.saturating_sub(3);
    let mut n = 0;
    while out.len() < budget {
        n += 1;
        tokenize(&section(n), &mut out);
    }
    out.truncate(budget);
    out.push("\n\n".into());
    out.push(end_marker(tokens));
    out.push("\n".into());
    out
}

/// The whole answer text of [`answer_tokens`].
pub fn answer_text(tokens: usize) -> String {
    answer_tokens(tokens).concat()
}

/// A markdown answer of at least `lines` source lines.
pub fn answer_lines(lines: usize) -> String {
    let mut text = String::new();
    let mut n = 200;
    while text.lines().count() < lines {
        text = answer_text(n);
        n *= 2;
    }
    let cut: Vec<&str> = text.lines().take(lines).collect();
    cut.join("\n") + "\n"
}

/// A session of `turns` prompt + markdown answer pairs.
pub fn session(turns: usize) -> Session {
    let mut s = Session::new();
    let answer = answer_text(120);
    for t in 0..turns {
        s.push(Message::user(format!(
            "Question {t}: how does the cache work?"
        )));
        s.push(Message::assistant(
            format!("Answer {t}.\n\n{answer}"),
            None,
            vec![],
        ));
    }
    s
}

/// The JSON-escaped text of a file of about `bytes` bytes (a line more at most) of source-like lines, to splice into
/// many observations without escaping it each time.
pub fn escaped_file_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 100);
    let mut n = 0usize;
    while text.len() < bytes {
        n += 1;
        text.push_str(&format!(
            "{n:>6}: let value = compute(&input, {n}); // \"quoted\" words, 内容\n"
        ));
    }
    serde_json::to_string(&text).expect("a string always encodes")
}

/// One step of a tool-using turn: the model's call to read file `n`, and the observation
/// holding `escaped` (from [`escaped_file_text`]).
pub fn tool_step(s: &mut Session, n: usize, escaped: &str) {
    let id = format!("call_{n}");
    s.push(Message::assistant(
        "",
        Some(format!("I should read src/file{n}.rs first.")),
        vec![ToolCall {
            id: id.clone(),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: format!(r#"{{"relative_path":"src/file{n}.rs"}}"#),
            },
        }],
    ));
    // As MiniClaw saves a call today: with how it ended and how long it took.
    let mut result = Message::tool_result(
        id,
        format!(
            r#"{{"ok":true,"tool":"read_text_file","path":"src/file{n}.rs","content":{escaped}}}"#
        ),
        (miniclaw::events::CallOutcome::Ok, false),
    );
    result.duration_ms = Some(12);
    s.push(result);
}

/// A session of `turns` turns that each read a file of `output_bytes` (one tool step) and
/// then answer.
pub fn session_with_tools(turns: usize, output_bytes: usize) -> Session {
    let mut s = Session::new();
    let escaped = escaped_file_text(output_bytes);
    for t in 0..turns {
        s.push(Message::user(format!(
            "Question {t}: what does file {t} do?"
        )));
        tool_step(&mut s, t, &escaped);
        s.push(Message::assistant(
            format!("Answer {t}: it computes values."),
            None,
            vec![],
        ));
    }
    s
}

/// The marker that ends every generated reasoning (the TUI bench polls the screen for it).
pub fn reasoning_marker(tokens: usize) -> String {
    format!("END-OF-REASONING-{tokens}")
}

const THOUGHTS: [&str; 12] = [
    "The user wants the totals per folder,",
    "so I should list the files first",
    "and then read the ones that matter.",
    "Wait, the notes file may be large;",
    "reading it in parts is safer.",
    "The numbers in the table do not add up:",
    "row three counts the header twice.",
    "Let me check that against the source",
    "before I claim anything,",
    "because a wrong total is worse than none.",
    "That settles the first question.",
    "Now the second one: whether the cache is stale.",
];

/// Reasoning prose without end, as the pieces a model streams: one word each, sentences, and
/// a paragraph break every eight sentences or so, as models write them.
fn thought_pieces() -> impl Iterator<Item = String> {
    (0usize..).flat_map(|sentence| {
        let words = THOUGHTS[sentence % THOUGHTS.len()].split_inclusive(' ');
        let end = if (sentence + 1) % 8 == 0 {
            " \n\n"
        } else {
            " "
        };
        words.map(str::to_string).chain([end.to_string()])
    })
}

/// Reasoning prose of about `tokens` tokens, as the pieces a model streams, ending in
/// [`reasoning_marker`]. Plain text: reasoning is not markdown.
pub fn reasoning_tokens(tokens: usize) -> Vec<String> {
    let mut out: Vec<String> = thought_pieces().take(tokens.saturating_sub(2)).collect();
    out.push("\n\n".into());
    out.push(reasoning_marker(tokens));
    out
}

/// Reasoning text of at least `bytes` bytes (the prose of [`reasoning_tokens`]).
pub fn reasoning_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 256);
    for piece in thought_pieces() {
        if text.len() >= bytes {
            break;
        }
        text.push_str(&piece);
    }
    text
}

/// Line `i` of a long-running command's output (a test run), newline included.
pub fn output_line(i: usize) -> String {
    format!(
        "test tools::search::tests::case_{i:05} ... ok ({} ms)\n",
        i % 97
    )
}

/// Command output of at least `bytes` bytes, whole lines of [`output_line`].
pub fn output_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 64);
    let mut i = 0;
    while text.len() < bytes {
        text.push_str(&output_line(i));
        i += 1;
    }
    text
}
