//! One `chat.completion.chunk` JSON text -> the stream events it carries.

use std::borrow::Cow;

use serde::Deserialize;

use super::types::{FinishReason, StreamEvent, Usage};

/// Why a chunk could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// Not JSON of the chunk shape.
    #[error("{reason} in {snippet}")]
    Invalid {
        /// What the JSON parser said.
        reason: String,
        /// The start of the offending text.
        snippet: String,
    },
    /// The server reported an error inside the stream.
    #[error("the server reported an error mid-stream: {0}")]
    ServerError(String),
}

/// A text borrowed from the chunk where it holds no escapes: most of a stream's texts are
/// appended to the text before them (see `decode_chunk_into`), so they need no `String` of their
/// own. (serde borrows a `Cow` only as a field's whole type, not inside an `Option`: hence this
/// wrapper.)
#[derive(Deserialize)]
#[serde(transparent)]
struct Text<'a>(#[serde(borrow)] Cow<'a, str>);

impl Text<'_> {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

#[derive(Deserialize)]
struct WireChunk<'a> {
    #[serde(default, borrow)]
    choices: Option<Vec<WireChoice<'a>>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct WireChoice<'a> {
    #[serde(default, borrow)]
    delta: Option<WireDelta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Text<'a>>,
}

#[derive(Deserialize)]
struct WireDelta<'a> {
    #[serde(default, borrow)]
    reasoning_content: Option<Text<'a>>,
    /// What Ollama, vLLM and OpenRouter call the reasoning (some send both names).
    #[serde(default, borrow)]
    reasoning: Option<Text<'a>>,
    #[serde(default, borrow)]
    content: Option<Text<'a>>,
    #[serde(default)]
    tool_calls: Option<Vec<WireToolCall>>,
}

#[derive(Deserialize)]
struct WireToolCall {
    #[serde(default)]
    index: Option<usize>,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    function: Option<WireFunction>,
}

#[derive(Deserialize)]
struct WireFunction {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    arguments: Option<String>,
}

#[derive(Deserialize)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
    #[serde(default)]
    total_tokens: u64,
    #[serde(default)]
    prompt_cache_hit_tokens: u64,
    #[serde(default)]
    prompt_cache_miss_tokens: u64,
    #[serde(default)]
    completion_tokens_details: Option<WireCompletionDetails>,
}

#[derive(Deserialize)]
struct WireCompletionDetails {
    #[serde(default)]
    reasoning_tokens: Option<u64>,
}

/// The longest piece of a bad chunk quoted in an error.
const SNIPPET_CHARS: usize = 200;

/// Decodes one chunk's data text into events: reasoning, content, tool-call fragments, finish, usage.
pub fn decode_chunk(data: &str) -> Result<Vec<StreamEvent>, ChunkError> {
    let mut events = Vec::new();
    decode_chunk_into(data, &mut events)?;
    Ok(events)
}

/// [`decode_chunk`] appending to `events` (a stream's reader keeps one list for a batch of
/// chunks); nothing is appended when the chunk is bad. A text that follows a text of the same
/// kind (answer after answer, reasoning after reasoning) is joined to it: a fast stream's batch
/// then travels on as one event of each kind it holds, not one a token.
pub fn decode_chunk_into(data: &str, events: &mut Vec<StreamEvent>) -> Result<(), ChunkError> {
    let chunk: WireChunk = serde_json::from_str(data).map_err(|e| ChunkError::Invalid {
        reason: e.to_string(),
        snippet: snippet(data),
    })?;
    if let Some(error) = chunk.error.filter(|e| !e.is_null()) {
        let message = error
            .get("message")
            .and_then(|m| m.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| snippet(&error.to_string()));
        return Err(ChunkError::ServerError(message));
    }
    for choice in chunk.choices.unwrap_or_default() {
        if let Some(delta) = choice.delta {
            push_delta(delta, events);
        }
        if let Some(reason) = choice.finish_reason.filter(|r| !r.is_empty()) {
            events.push(StreamEvent::Finish(FinishReason::parse(&reason.0)));
        }
    }
    if let Some(u) = chunk.usage {
        events.push(StreamEvent::Usage(Usage {
            prompt_tokens: u.prompt_tokens,
            completion_tokens: u.completion_tokens,
            total_tokens: u.total_tokens,
            prompt_cache_hit_tokens: u.prompt_cache_hit_tokens,
            prompt_cache_miss_tokens: u.prompt_cache_miss_tokens,
            reasoning_tokens: u
                .completion_tokens_details
                .and_then(|d| d.reasoning_tokens)
                .unwrap_or(0),
        }));
    }
    Ok(())
}

/// Adds the events of one delta; empty or null texts add nothing.
fn push_delta(delta: WireDelta<'_>, events: &mut Vec<StreamEvent>) {
    let reasoning = delta.reasoning_content.filter(|t| !t.is_empty());
    if let Some(text) = reasoning.or(delta.reasoning.filter(|t| !t.is_empty())) {
        match events.last_mut() {
            Some(StreamEvent::Reasoning(before)) => before.push_str(&text.0),
            _ => events.push(StreamEvent::Reasoning(text.0.into_owned())),
        }
    }
    if let Some(text) = delta.content.filter(|t| !t.is_empty()) {
        match events.last_mut() {
            Some(StreamEvent::Content(before)) => before.push_str(&text.0),
            _ => events.push(StreamEvent::Content(text.0.into_owned())),
        }
    }
    for (position, call) in delta.tool_calls.unwrap_or_default().into_iter().enumerate() {
        // Servers that omit `index` send one call per array slot.
        let index = call.index.unwrap_or(position);
        let id = call.id.filter(|s| !s.is_empty());
        let (name, arguments) = match call.function {
            Some(f) => (
                f.name.filter(|s| !s.is_empty()),
                f.arguments.unwrap_or_default(),
            ),
            None => (None, String::new()),
        };
        if id.is_none() && name.is_none() && arguments.is_empty() {
            continue;
        }
        events.push(StreamEvent::ToolCallFragment {
            index,
            id,
            name,
            arguments,
        });
    }
}

/// The first characters of `text`, for error messages.
fn snippet(text: &str) -> String {
    let mut s: String = text.chars().take(SNIPPET_CHARS).collect();
    if s.len() < text.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_without_escapes_is_borrowed_and_one_with_them_is_not() {
        let delta: WireDelta<'_> =
            serde_json::from_str(r#"{"content":"plain","reasoning_content":"a\nb"}"#).unwrap();
        assert!(matches!(delta.content, Some(Text(Cow::Borrowed("plain")))));
        assert!(matches!(delta.reasoning_content, Some(Text(Cow::Owned(ref t))) if t == "a\nb"));
    }

    #[test]
    fn texts_of_a_kind_that_follow_each_other_are_joined_across_chunks() {
        let chunk = |delta: &str| format!(r#"{{"choices":[{{"delta":{delta}}}]}}"#);
        let mut events = Vec::new();
        for delta in [
            r#"{"reasoning_content":"a"}"#,
            r#"{"reasoning_content":"b\n\u00e9"}"#,
            r#"{"content":"c"}"#,
            r#"{"content":"\"d\""}"#,
            r#"{"reasoning_content":"e"}"#,
            r#"{"tool_calls":[{"index":0,"id":"x","function":{"name":"clock","arguments":""}}]}"#,
            r#"{"content":"f"}"#,
        ] {
            decode_chunk_into(&chunk(delta), &mut events).unwrap();
        }
        let texts: Vec<_> = events
            .iter()
            .map(|e| match e {
                StreamEvent::Reasoning(t) => format!("R:{t}"),
                StreamEvent::Content(t) => format!("C:{t}"),
                _ => "call".into(),
            })
            .collect();
        assert_eq!(texts, ["R:ab\né", "C:c\"d\"", "R:e", "call", "C:f"]);
    }

    #[test]
    fn empty_and_null_texts_produce_nothing() {
        let events = decode_chunk(
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"reasoning_content":""},"finish_reason":null}],"usage":null}"#,
        )
        .unwrap();
        assert!(events.is_empty());
    }

    #[test]
    fn reasoning_is_read_under_either_name_once() {
        let one = |delta: &str| decode_chunk(&format!(r#"{{"choices":[{{"delta":{delta}}}]}}"#));
        let expected = vec![StreamEvent::Reasoning("hm".into())];
        assert_eq!(one(r#"{"reasoning":"hm"}"#).unwrap(), expected);
        let both = one(r#"{"reasoning_content":"hm","reasoning":"hm"}"#).unwrap();
        assert_eq!(both, expected);
    }

    #[test]
    fn a_final_chunk_gives_finish_then_usage() {
        let events = decode_chunk(
            r#"{"choices":[{"delta":{"content":""},"finish_reason":"insufficient_system_resource"}],
               "usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7,"prompt_cache_hit_tokens":1,
               "prompt_cache_miss_tokens":2,"completion_tokens_details":{"reasoning_tokens":5}}}"#,
        )
        .unwrap();
        assert_eq!(
            events,
            vec![
                StreamEvent::Finish(FinishReason::InsufficientSystemResource),
                StreamEvent::Usage(Usage {
                    prompt_tokens: 3,
                    completion_tokens: 4,
                    total_tokens: 7,
                    prompt_cache_hit_tokens: 1,
                    prompt_cache_miss_tokens: 2,
                    reasoning_tokens: 5,
                }),
            ]
        );
    }

    #[test]
    fn tool_call_fragments_keep_index_id_and_name() {
        let events = decode_chunk(
            r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}}]}"#,
        )
        .unwrap();
        assert_eq!(
            events,
            vec![StreamEvent::ToolCallFragment {
                index: 1,
                id: Some("c1".into()),
                name: Some("f".into()),
                arguments: String::new(),
            }]
        );
    }

    #[test]
    fn bad_json_and_error_objects_are_errors() {
        assert!(matches!(
            decode_chunk("{not json"),
            Err(ChunkError::Invalid { .. })
        ));
        let err = decode_chunk(r#"{"error":{"message":"overloaded"}}"#).unwrap_err();
        assert!(err.to_string().contains("overloaded"));
    }
}
