use serde_json::json;

use super::*;
use crate::llm::types::{FunctionCall, ToolCall};

fn message(role: Role, content: &str) -> ChatMessage {
    text_message(role, content.to_string())
}

fn schema() -> ToolSchema {
    ToolSchema {
        name: "read_file".into(),
        description: "Reads a file.".into(),
        parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
    }
}

#[test]
fn the_history_is_written_as_tags_and_responses() {
    let call = |id: &str, path: &str| ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: json!({"path": path}).to_string(),
        },
    };
    let mut assistant = message(Role::Assistant, "Reading both.");
    assistant.reasoning_content = Some(String::new());
    assistant.tool_calls = Some(vec![call("a", "x.txt"), call("b", "y.txt")]);
    let mut first = message(
        Role::Tool,
        r#"{"ok":true,"tool":"read_file","content":"X"}"#,
    );
    first.tool_call_id = Some("a".into());
    let mut second = message(
        Role::Tool,
        r#"{"ok":false,"tool":"read_file","error":"no"}"#,
    );
    second.tool_call_id = Some("b".into());
    let sent = render(
        &[
            message(Role::System, "Be brief."),
            message(Role::User, "read x and y"),
            assistant,
            first,
            second,
            message(Role::User, "continue"),
        ],
        &[schema()],
    );
    let roles: Vec<Role> = sent.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [Role::System, Role::User, Role::Assistant, Role::User]
    );
    let system = sent[0].content.as_deref().unwrap();
    assert!(system.starts_with("Be brief.\n\n# Tools"), "{system}");
    assert!(system.contains("## read_file\nReads a file.\nArguments: {\"type\":\"object\""));
    assert_eq!(
        sent[2].content.as_deref(),
        Some(
            "Reading both.\n<tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"x.txt\"}}</tool_call>\n\
             <tool_call>{\"name\":\"read_file\",\"arguments\":{\"path\":\"y.txt\"}}</tool_call>"
        )
    );
    assert_eq!(
        sent[3].content.as_deref(),
        Some(
            "<tool_response>{\"ok\":true,\"tool\":\"read_file\",\"content\":\"X\"}</tool_response>\n\
             <tool_response>{\"ok\":false,\"tool\":\"read_file\",\"error\":\"no\"}</tool_response>\n\ncontinue"
        )
    );
    assert!(sent.iter().all(|m| m.tool_calls.is_none()
        && m.tool_call_id.is_none()
        && m.reasoning_content.is_none()));
}

#[test]
fn without_tools_nothing_is_added_and_a_missing_system_prompt_is_made() {
    let plain = render(&[message(Role::User, "hi")], &[]);
    assert_eq!(plain, [message(Role::User, "hi")]);
    let made = render(&[message(Role::User, "hi")], &[schema()]);
    assert_eq!(made[0].role, Role::System);
    assert!(made[0].content.as_deref().unwrap().starts_with("# Tools"));
}

#[test]
fn what_is_rendered_reads_back_as_the_same_calls() {
    let schemas = [schema()];
    let mut assistant = message(Role::Assistant, "");
    let original = ToolCall {
        id: "a".into(),
        kind: "function".into(),
        function: FunctionCall {
            name: "read_file".into(),
            arguments: r#"{"path":"目录/a b.txt","n":[1,2]}"#.into(),
        },
    };
    assistant.tool_calls = Some(vec![original.clone()]);
    let sent = render(&[assistant], &schemas);
    let mut parser = TagParser::new();
    let mut pieces = parser.push(sent[1].content.as_deref().unwrap());
    pieces.extend(parser.finish());
    assert_eq!(
        pieces,
        [Piece::Call {
            name: original.function.name,
            arguments: original.function.arguments,
        }]
    );
}
