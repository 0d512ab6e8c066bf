use super::*;

/// Everything a whole stream gives, adjacent texts joined.
fn parse(stream: &str) -> Vec<Piece> {
    let mut parser = TagParser::new();
    let mut pieces = parser.push(stream);
    pieces.extend(parser.finish());
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

fn text(t: &str) -> Piece {
    Piece::Text(t.into())
}

fn call(name: &str, arguments: &str) -> Piece {
    Piece::Call {
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn text_before_a_tag_is_the_thought_and_tags_in_a_row_are_calls() {
    let pieces = parse(
        "I will read both.\n<tool_call>{\"name\": \"read\", \"arguments\": {\"p\": \"a\"}}</tool_call>\n\
         <tool_call>{\"name\": \"read\", \"parameters\": {\"p\": \"b\"}}</tool_call>",
    );
    assert_eq!(
        pieces,
        [
            text("I will read both.\n"),
            call("read", r#"{"p":"a"}"#),
            text("\n"),
            call("read", r#"{"p":"b"}"#),
        ]
    );
}

#[test]
fn a_closing_tag_inside_a_json_string_does_not_end_the_call() {
    let pieces = parse(
        r#"<tool_call>{"name": "write", "arguments": {"text": "say </tool_call> and \"<tool_call>\""}}</tool_call>"#,
    );
    assert_eq!(
        pieces,
        [call(
            "write",
            r#"{"text":"say </tool_call> and \"<tool_call>\""}"#
        )]
    );
}

#[test]
fn tags_in_a_fenced_code_block_are_text() {
    let shown = "Call it like this:\n```\n<tool_call>{\"name\": \"x\"}</tool_call>\n```\n";
    let stream = format!(
        "{shown}~~~~\n<tool_call>{{}}</tool_call>\n~~~\n~~~~\nThen <tool_call>{{\"name\": \"y\"}}</tool_call>"
    );
    let pieces = parse(&stream);
    assert_eq!(
        pieces,
        [
            text(&format!(
                "{shown}~~~~\n<tool_call>{{}}</tool_call>\n~~~\n~~~~\nThen "
            )),
            call("y", "{}"),
        ]
    );
    // Indented by four spaces, a run of backticks opens no fence.
    let pieces = parse("    ```\n<tool_call>{\"name\": \"z\"}</tool_call>");
    assert_eq!(pieces[1], call("z", "{}"));
}

#[test]
fn broken_and_unclosed_tags_become_broken_pieces_never_text() {
    let pieces = parse(
        "Reading.<tool_call>{\"name\": \"read\", \"arguments\": {</tool_call> and <tool_call>{\"name\": \"x\"}",
    );
    assert_eq!(pieces.len(), 4, "{pieces:?}");
    assert_eq!(pieces[0], text("Reading."));
    assert_eq!(pieces[2], text(" and "));
    let Piece::Broken { raw, problem } = &pieces[1] else {
        panic!("{pieces:?}");
    };
    assert_eq!(
        raw,
        "<tool_call>{\"name\": \"read\", \"arguments\": {</tool_call>"
    );
    assert!(problem.contains("not valid JSON"), "{problem}");
    let Piece::Broken { raw, problem } = &pieces[3] else {
        panic!("{pieces:?}");
    };
    assert_eq!(raw, "<tool_call>{\"name\": \"x\"}");
    assert!(problem.contains("not closed"), "{problem}");
}

#[test]
fn a_call_opened_before_the_last_one_closed_leaves_that_one_broken() {
    let pieces = parse("<tool_call>{\"name\": \"a\"}\n<tool_call>{\"name\": \"b\"}</tool_call>");
    assert!(
        matches!(&pieces[0], Piece::Broken { raw, .. } if raw == "<tool_call>{\"name\": \"a\"}\n")
    );
    assert_eq!(pieces[1], call("b", "{}"));
}

#[test]
fn a_broken_string_ends_at_its_line() {
    // The quote is never closed: the line break ends the string, so the closing tag counts.
    let pieces = parse("<tool_call>{\"name\": \"a\n}</tool_call>after");
    assert!(matches!(&pieces[0], Piece::Broken { .. }), "{pieces:?}");
    assert_eq!(pieces[1], text("after"));
}

#[test]
fn think_blocks_are_reasoning_and_their_tags_are_not_calls() {
    let pieces = parse(
        "\n<think>maybe <tool_call>{\"name\": \"no\"}</tool_call> </thin</think>Sure.<tool_call>{\"name\": \"yes\"}</tool_call><think>x</think>",
    );
    assert_eq!(
        pieces,
        [
            text("\n"),
            Piece::Reasoning("maybe <tool_call>{\"name\": \"no\"}</tool_call> </thin".into()),
            text("Sure."),
            call("yes", "{}"),
            text("<think>x</think>"),
        ]
    );
}

#[test]
fn what_only_looked_like_a_tag_is_text() {
    let stream = "a < b, <tool and <tool_cal<tool_call";
    assert_eq!(parse(stream), [text(stream)]);
}

#[test]
fn held_text_streams_out_once_decided() {
    let mut parser = TagParser::new();
    assert_eq!(parser.push("Hello <to"), [text("Hello ")]);
    assert_eq!(parser.push("day"), [text("<today")]);
    assert_eq!(parser.push(" <tool_c"), [text(" ")]);
    assert!(parser.push("all>{\"name\":").is_empty());
    assert_eq!(parser.push("\"t\"}</tool_call>"), [call("t", "{}")]);
    assert_eq!(parser.finish(), []);
}
