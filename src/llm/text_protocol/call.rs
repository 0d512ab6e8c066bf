//! One `<tool_call>` tag's content: read into a name and arguments, written back as a tag, and
//! a broken tag kept as a call of its own that the agent answers with what was wrong.

use serde_json::{Map, Value, json};

use crate::llm::types::{FunctionCall, ToolCall};

/// The tag that opens a call.
pub const OPEN: &str = "<tool_call>";
/// The tag that closes a call.
pub const CLOSE: &str = "</tool_call>";

/// The name a broken tag is kept under, so it is answered like any call (an error observation)
/// and sent back as the model wrote it. A valid function name: a session can switch to a server
/// that checks the names of earlier calls.
pub const BROKEN_CALL: &str = "invalid_tool_call";

/// What the model is told a call must look like.
const SHAPE: &str =
    r#"Write each call as <tool_call>{"name": "TOOL_NAME", "arguments": {...}}</tool_call>."#;

/// The problem of a tag that was never closed.
pub fn unclosed_problem() -> String {
    format!("the <tool_call> tag was not closed with </tool_call>, so it was not run. {SHAPE}")
}

/// Reads a tag's content: `{"name": ..., "arguments": {...}}` (`parameters` or `args` also
/// name the arguments; missing arguments are `{}`). The error says what is wrong, for the model.
pub fn read_call(content: &str) -> Result<(String, String), String> {
    let problem = |what: String| format!("the <tool_call> tag could not be used: {what}. {SHAPE}");
    let text = strip_fence(content.trim());
    if text.is_empty() {
        return Err(problem("it is empty".into()));
    }
    let value: Value = serde_json::from_str(text)
        .map_err(|e| problem(format!("its content is not valid JSON ({e})")))?;
    let Value::Object(mut call) = value else {
        return Err(problem("its content must be one JSON object".into()));
    };
    let name = match call.remove("name") {
        Some(Value::String(name)) if !name.trim().is_empty() => name.trim().to_string(),
        _ => return Err(problem("it has no \"name\" (the tool to call)".into())),
    };
    let arguments = ["arguments", "parameters", "args"]
        .iter()
        .find_map(|k| call.remove(*k));
    let arguments = match arguments {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(args)) => args,
        // Some models write the arguments as a JSON text, as the native protocol carries them.
        Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(args)) => args,
            _ => return Err(problem("\"arguments\" must be a JSON object".into())),
        },
        Some(_) => return Err(problem("\"arguments\" must be a JSON object".into())),
    };
    Ok((name, Value::Object(arguments).to_string()))
}

/// A tag's content without a code fence the model wrapped it in.
fn strip_fence(text: &str) -> &str {
    let Some(rest) = text.strip_prefix("```") else {
        return text;
    };
    let body = rest.split_once('\n').map_or("", |(_, body)| body);
    body.trim_end().strip_suffix("```").unwrap_or(body).trim()
}

/// The call a broken tag is kept as: its arguments hold the tag as written and the problem.
pub fn broken_call(id: String, raw: &str, problem: &str) -> ToolCall {
    ToolCall {
        id,
        kind: "function".into(),
        function: FunctionCall {
            name: BROKEN_CALL.into(),
            arguments: json!({"text": raw, "problem": problem}).to_string(),
        },
    }
}

/// The problem of a call kept for a broken tag (`None` for any other call).
pub fn broken_problem(call: &ToolCall) -> Option<String> {
    broken_part(call, "problem")
}

fn broken_part(call: &ToolCall, part: &str) -> Option<String> {
    if call.function.name != BROKEN_CALL {
        return None;
    }
    let value: Value = serde_json::from_str(&call.function.arguments).ok()?;
    value.get(part)?.as_str().map(str::to_string)
}

/// A call written as the model writes it: a tag, or a broken tag's text as it was.
pub fn write_call(call: &ToolCall) -> String {
    if let Some(raw) = broken_part(call, "text") {
        return raw;
    }
    let arguments = serde_json::from_str::<Value>(&call.function.arguments)
        .unwrap_or_else(|_| Value::String(call.function.arguments.clone()));
    let body = json!({"name": call.function.name, "arguments": arguments});
    format!("{OPEN}{body}{CLOSE}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_read_with_any_of_the_argument_names() {
        for text in [
            r#"{"name": "read_file", "arguments": {"path": "a.txt"}}"#,
            r#" {"name":"read_file","parameters":{"path":"a.txt"}} "#,
            r#"{"name": "read_file", "args": "{\"path\": \"a.txt\"}"}"#,
            "```json\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n```",
        ] {
            let (name, args) = read_call(text).unwrap();
            assert_eq!(name, "read_file");
            assert_eq!(args, r#"{"path":"a.txt"}"#, "{text}");
        }
        assert_eq!(read_call(r#"{"name": "now"}"#).unwrap().1, "{}");
    }

    #[test]
    fn a_broken_call_says_what_is_wrong() {
        let cases = [
            ("", "empty"),
            (r#"{"name": "x", "arguments": {"#, "not valid JSON"),
            ("[1]", "one JSON object"),
            (r#"{"arguments": {}}"#, "no \"name\""),
            (r#"{"name": "x", "arguments": 3}"#, "must be a JSON object"),
        ];
        for (text, says) in cases {
            let problem = read_call(text).unwrap_err();
            assert!(problem.contains(says), "{text}: {problem}");
            assert!(problem.contains("<tool_call>{\"name\""), "{problem}");
        }
    }

    #[test]
    fn calls_are_written_back_as_tags_and_broken_ones_as_they_were() {
        let call = ToolCall {
            id: "c1".into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "read_file".into(),
                arguments: r#"{"path":"a"}"#.into(),
            },
        };
        let tag = write_call(&call);
        assert_eq!(
            tag,
            r#"<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call>"#
        );
        assert_eq!(broken_problem(&call), None);
        let broken = broken_call("c2".into(), "<tool_call>{oops", "not closed");
        assert_eq!(write_call(&broken), "<tool_call>{oops");
        assert_eq!(broken_problem(&broken).as_deref(), Some("not closed"));
    }
}
