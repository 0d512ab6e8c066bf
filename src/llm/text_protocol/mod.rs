//! The text-tag protocol, for models without function calling: the tools are described in the
//! system prompt, the model calls them as `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`
//! tags in its answer, and the results go back as one user message of
//! `<tool_response>{...}</tool_response>` blocks in call order.
//!
//! The session keeps every call in the native shape (an assistant message with its calls, a
//! tool message per result); [`render`] writes it in this protocol's shape at request time, so a
//! session can switch between protocols at any step.

mod call;
mod parser;
mod stream;

pub use call::{BROKEN_CALL, CLOSE, OPEN, broken_problem, read_call, write_call};
pub use parser::{Piece, TagParser};
pub use stream::TextCalls;

use crate::llm::types::{ChatMessage, Role, ToolSchema};

/// The opening of a result block.
pub const RESPONSE_OPEN: &str = "<tool_response>";
/// The end of a result block.
pub const RESPONSE_CLOSE: &str = "</tool_response>";

/// What the system prompt says about the tools and how to call them.
pub fn tools_prompt(tools: &[ToolSchema]) -> String {
    let mut text = String::from(
        "# Tools\n\n\
         You can call tools. To call one, write a tag holding one JSON object with the tool's \
         name and its arguments, exactly like this:\n\n\
         <tool_call>{\"name\": \"TOOL_NAME\", \"arguments\": {\"ARGUMENT\": \"VALUE\"}}</tool_call>\n\n\
         To call several tools, write several tags one after another. Stop after your last tag: \
         the results come back in the next message as <tool_response>{...}</tool_response> \
         blocks, one per call, in the order of your calls. Never put a call inside a code block. \
         When you need no tool, answer without any tag.\n\n\
         The tools (each with the JSON Schema of its arguments):\n",
    );
    for tool in tools {
        text.push_str(&format!(
            "\n## {}\n{}\nArguments: {}\n",
            tool.name, tool.description, tool.parameters
        ));
    }
    text
}

/// The conversation in this protocol's shape: the tools described in the system prompt, calls
/// as tags in the assistant's text, results as `<tool_response>` blocks in a user message
/// (merged with a prompt that follows, since some chat templates refuse two user messages in a
/// row). No reasoning is sent back.
pub fn render(messages: &[ChatMessage], tools: &[ToolSchema]) -> Vec<ChatMessage> {
    let mut out: Vec<ChatMessage> = Vec::with_capacity(messages.len() + 1);
    let prompt = (!tools.is_empty()).then(|| tools_prompt(tools));
    if let Some(prompt) = &prompt
        && messages.first().is_none_or(|m| m.role != Role::System)
    {
        out.push(text_message(Role::System, prompt.clone()));
    }
    for (i, message) in messages.iter().enumerate() {
        let text = message.content.clone().unwrap_or_default();
        match message.role {
            Role::System => {
                let text = match (&prompt, i) {
                    (Some(prompt), 0) => format!("{text}\n\n{prompt}"),
                    _ => text,
                };
                out.push(text_message(Role::System, text));
            }
            Role::Assistant => {
                let mut parts: Vec<String> = Vec::new();
                let text = text.trim_end();
                if !text.is_empty() {
                    parts.push(text.to_string());
                }
                let calls = message.tool_calls.iter().flatten();
                parts.extend(calls.map(write_call));
                out.push(text_message(Role::Assistant, parts.join("\n")));
            }
            Role::Tool => {
                let block = format!("{RESPONSE_OPEN}{text}{RESPONSE_CLOSE}");
                push_user(&mut out, block, "\n");
            }
            Role::User => push_user(&mut out, text, "\n\n"),
        }
    }
    out
}

fn text_message(role: Role, content: String) -> ChatMessage {
    ChatMessage {
        role,
        content: Some(content),
        reasoning_content: None,
        tool_calls: None,
        tool_call_id: None,
    }
}

/// Adds user text, joined to the message before when that is the user's too.
fn push_user(out: &mut Vec<ChatMessage>, text: String, separator: &str) {
    if let Some(last) = out.last_mut().filter(|m| m.role == Role::User) {
        let content = last.content.get_or_insert_with(String::new);
        content.push_str(separator);
        content.push_str(&text);
        return;
    }
    out.push(text_message(Role::User, text));
}

#[cfg(test)]
mod tests;
