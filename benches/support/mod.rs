//! Inputs shared by the benches and the bench examples: a long markdown answer cut into
//! tokens, and sessions of many turns (with or without large tool outputs).
#![allow(dead_code)]

use miniclaw::agent::{Message, Session};
use miniclaw::llm::{FunctionCall, ToolCall};

/// The marker that ends every generated answer (the TUI bench polls the screen for it).
pub fn end_marker(tokens: usize) -> String {
    format!("END-OF-ANSWER-{tokens}")
}

const WORDS: [&str; 16] = [
    "the", "stream", "renders", "markdown", "while", "tokens", "arrive", "quickly,", "and",
    "every", "frame", "stays", "cheap", "because", "caches", "work.",
];

/// A markdown answer of about `tokens` tokens (headings, paragraphs, lists, code, tables),
/// as the pieces a model streams: one token each, newlines included.
pub fn answer_tokens(tokens: usize) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens + 64);
    let mut section = 0usize;
    let budget = tokens.saturating_sub(3);
    while out.len() < budget {
        section += 1;
        out.push(format!("## Section {section}\n\n"));
        for i in 0..60 {
            out.push(format!("{} ", WORDS[(i + section) % WORDS.len()]));
            if i % 20 == 19 {
                out.push("**bold** ".into());
            }
        }
        out.push("\n\n".into());
        for item in 0..4 {
            out.push(format!("- item {item} "));
            for w in 0..6 {
                out.push(format!("{} ", WORDS[(w + item) % WORDS.len()]));
            }
            out.push("`code`\n".into());
        }
        out.push("\n".into());
        if section.is_multiple_of(5) {
            out.push("```rust\n".into());
            for l in 0..6 {
                out.push(format!("let x{l} = {l} * 2; "));
                out.push("// comment\n".into());
            }
            out.push("```\n\n".into());
        }
        if section.is_multiple_of(7) {
            out.push("| name | value |\n".into());
            out.push("|---|---|\n".into());
            for r in 0..3 {
                out.push(format!("| row {r} | "));
                out.push(format!("{} |\n", r * 7));
            }
            out.push("\n".into());
        }
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
    s.push(Message::tool(
        id,
        format!(
            r#"{{"ok":true,"tool":"read_text_file","path":"src/file{n}.rs","content":{escaped}}}"#
        ),
    ));
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
