//! Properties of the text-tag parser: however a model's answer is cut into deltas, the same
//! text, reasoning, calls and broken tags come out as when it is fed whole; and calls written
//! between plain text are found exactly, in order.

use miniclaw::llm::text_protocol::{Piece, TagParser};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Feeds `stream` cut at `cuts` (character positions), then ends it; adjacent texts joined.
fn parse_cut(stream: &str, cuts: &[usize]) -> Vec<Piece> {
    let chars: Vec<(usize, char)> = stream.char_indices().collect();
    let mut points: Vec<usize> = cuts
        .iter()
        .map(|c| {
            chars
                .get(c % (chars.len() + 1))
                .map_or(stream.len(), |(i, _)| *i)
        })
        .collect();
    points.sort_unstable();
    let mut parser = TagParser::new();
    let mut pieces = Vec::new();
    let mut start = 0;
    for p in points.into_iter().chain([stream.len()]) {
        pieces.extend(parser.push(&stream[start..p]));
        start = p;
    }
    pieces.extend(parser.finish());
    join(pieces)
}

fn join(pieces: Vec<Piece>) -> Vec<Piece> {
    let mut joined: Vec<Piece> = Vec::new();
    for piece in pieces {
        match (joined.last_mut(), piece) {
            (Some(Piece::Text(a)), Piece::Text(b)) => a.push_str(&b),
            (Some(Piece::Reasoning(a)), Piece::Reasoning(b)) => a.push_str(&b),
            (_, piece) => joined.push(piece),
        }
    }
    joined
}

/// Short texts rich in what the parser must look at twice.
fn tricky_text() -> impl Strategy<Value = String> {
    let atoms = prop::sample::select(vec![
        "<",
        ">",
        "<tool",
        "_call",
        "<tool_call>",
        "</tool_call>",
        "<think>",
        "</think>",
        "```",
        "~~~",
        "\n",
        " ",
        "    ",
        "\"",
        "\\",
        "{",
        "}",
        "a",
        "一",
        "é",
        "😀",
        "json",
        "{\"name\": \"t\"}",
        "{\"name\": \"t\", \"arguments\": {\"k\": \"v\"}}",
    ]);
    prop::collection::vec(atoms, 0..40).prop_map(|a| a.concat())
}

/// A plain value for an argument, with the characters a JSON string must get right.
fn value() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "x",
            " ",
            "</tool_call>",
            "\"",
            "\\",
            "\n",
            "一",
            "<",
            "`",
        ]),
        0..6,
    )
    .prop_map(|a| a.concat())
}

/// A call: its name, its arguments, and how it is written.
fn call() -> impl Strategy<Value = (String, Map<String, Value>, String)> {
    let name = prop::sample::select(vec!["read_file", "probe", "mcp__srv__x"]);
    let args = prop::collection::btree_map("[a-z]{1,3}", value(), 0..3);
    let key = prop::sample::select(vec!["arguments", "parameters", "args"]);
    let pad = prop::sample::select(vec!["", " ", "\n"]);
    (name, args, key, pad).prop_map(|(name, args, key, pad)| {
        let args: Map<String, Value> = args
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let body = serde_json::json!({"name": name, key: Value::Object(args.clone())});
        let tag = format!("<tool_call>{pad}{body}{pad}</tool_call>");
        (name.to_string(), args, tag)
    })
}

/// Plain text that holds nothing the parser looks at.
fn plain() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9 .,一é😀\n]{0,20}"
}

proptest! {
    #![proptest_config(crate::proptest_config(512))]

    #[test]
    fn any_cutting_gives_what_the_whole_stream_gives(
        stream in tricky_text(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let whole = parse_cut(&stream, &[]);
        prop_assert_eq!(parse_cut(&stream, &cuts), whole);
    }

    #[test]
    fn every_single_character_delta_gives_the_same(stream in tricky_text()) {
        let every: Vec<usize> = (0..stream.chars().count()).collect();
        prop_assert_eq!(parse_cut(&stream, &every), parse_cut(&stream, &[]));
    }

    #[test]
    fn calls_between_plain_text_are_found_exactly(
        parts in prop::collection::vec((plain(), call()), 0..5),
        tail in plain(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        let mut stream = String::new();
        let mut expected = Vec::new();
        for (text, (name, args, tag)) in &parts {
            stream.push_str(text);
            stream.push_str(tag);
            if !text.is_empty() {
                expected.push(Piece::Text(text.clone()));
            }
            expected.push(Piece::Call {
                name: name.clone(),
                arguments: Value::Object(args.clone()).to_string(),
            });
        }
        stream.push_str(&tail);
        if !tail.is_empty() {
            expected.push(Piece::Text(tail.clone()));
        }
        prop_assert_eq!(parse_cut(&stream, &cuts), join(expected));
    }

    #[test]
    fn raw_tag_text_never_reaches_the_answer(
        stream in tricky_text(),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        // Outside code fences, what is text never holds a whole opening tag.
        if !stream.contains("```") && !stream.contains("~~~") {
            for piece in parse_cut(&stream, &cuts) {
                if let Piece::Text(text) = piece {
                    prop_assert!(!text.contains("<tool_call>"), "{:?}", text);
                }
            }
        }
    }
}
