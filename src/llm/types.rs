//! Wire types of the chat-completions API, as sent and as put together from a stream.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One function call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The id the tool result must quote back.
    pub id: String,
    /// Always `"function"`.
    #[serde(rename = "type", default = "function_kind")]
    pub kind: String,
    /// Name and JSON-encoded arguments.
    pub function: FunctionCall,
}

fn function_kind() -> String {
    "function".to_string()
}

/// The name and raw JSON arguments of a call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FunctionCall {
    /// The tool's name.
    pub name: String,
    /// The arguments as the model wrote them (a JSON text, maybe invalid).
    pub arguments: String,
}

/// The role of a message on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions that open the conversation.
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool's result.
    Tool,
}

/// A message as sent to the API.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatMessage {
    /// Who speaks.
    pub role: Role,
    /// Text; `None` only for an assistant message that only calls tools.
    pub content: Option<String>,
    /// Thinking-mode reasoning, sent back on assistant messages when tools are in play.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    /// Calls the assistant made.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// For a tool message: the call it answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
}

/// A tool as the model sees it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// One paragraph telling the model what it does.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

/// Token counts the server reported for one response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Tokens in the request.
    pub prompt_tokens: u64,
    /// Tokens generated.
    pub completion_tokens: u64,
    /// Their sum.
    pub total_tokens: u64,
    /// Prompt tokens served from DeepSeek's context cache.
    #[serde(default)]
    pub prompt_cache_hit_tokens: u64,
    /// Prompt tokens not in the cache.
    #[serde(default)]
    pub prompt_cache_miss_tokens: u64,
    /// Completion tokens spent on reasoning.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Adds another response's counts to these (a turn spans several responses).
    pub fn add(&mut self, other: &Usage) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.total_tokens += other.total_tokens;
        self.prompt_cache_hit_tokens += other.prompt_cache_hit_tokens;
        self.prompt_cache_miss_tokens += other.prompt_cache_miss_tokens;
        self.reasoning_tokens += other.reasoning_tokens;
    }
}

/// Why the model stopped generating.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// A natural end.
    Stop,
    /// The output hit the token limit.
    Length,
    /// The output was filtered.
    ContentFilter,
    /// The model wants tools run.
    ToolCalls,
    /// DeepSeek ran out of capacity mid-answer.
    InsufficientSystemResource,
    /// Anything else a compatible server says.
    #[serde(untagged)]
    Other(String),
}

impl FinishReason {
    /// Parses the wire string.
    pub fn parse(s: &str) -> Self {
        match s {
            "stop" => Self::Stop,
            "length" => Self::Length,
            "content_filter" => Self::ContentFilter,
            "tool_calls" => Self::ToolCalls,
            "insufficient_system_resource" => Self::InsufficientSystemResource,
            other => Self::Other(other.to_string()),
        }
    }
}

/// One thing a stream said, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum StreamEvent {
    /// A piece of reasoning (never empty).
    Reasoning(String),
    /// A piece of the answer (never empty).
    Content(String),
    /// A fragment of a tool call: id and name come on the first fragment of an index.
    ToolCallFragment {
        /// Which call, when several arrive interleaved.
        index: usize,
        /// The call id, on the first fragment.
        id: Option<String>,
        /// The tool name, on the first fragment.
        name: Option<String>,
        /// More of the JSON arguments.
        arguments: String,
    },
    /// Why generation stopped.
    Finish(FinishReason),
    /// Token counts (the last chunk).
    Usage(Usage),
}

/// A whole response, put together from its stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completion {
    /// The answer text.
    pub content: String,
    /// The reasoning text.
    pub reasoning: String,
    /// The calls, in index order.
    pub tool_calls: Vec<ToolCall>,
    /// Why it stopped (`None` if the server never said).
    pub finish_reason: Option<FinishReason>,
    /// Token counts, when reported.
    pub usage: Option<Usage>,
}
