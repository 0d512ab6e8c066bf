//! Inputs shared by the benches and the bench examples: a long markdown answer cut into
//! tokens, and sessions of many turns.
#![allow(dead_code)]

use miniclaw::agent::{Message, Session};

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
