//! Builders for model streams in the shape DeepSeek sends (see ../shared/fixtures/sse/).
#![allow(dead_code)]

use std::time::Duration;

use serde_json::{Value, json};

use super::mock_server::{Piece, Reply, Until};

/// Builds one streamed response, chunk by chunk.
#[derive(Default, Clone)]
pub struct SseBuilder {
    pieces: Vec<Piece>,
}

/// One `data:` event with every field DeepSeek sends, so a client parses as much per event
/// as it does from the real service.
fn chunk(delta: Value, finish: Option<&str>, usage: Option<Value>) -> String {
    let body = json!({
        "id": "cca85624-4056-401f-b220-d77601d1f70d",
        "object": "chat.completion.chunk",
        "created": 1764664568,
        "model": "deepseek-v4-flash",
        "system_fingerprint": "fp_eaab8d114b_prod0820_fp8_kvcache",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        "usage": usage,
    });
    format!("data: {body}\n\n")
}

impl SseBuilder {
    /// An empty stream.
    pub fn new() -> Self {
        Self::default()
    }

    fn data(mut self, text: String) -> Self {
        self.pieces.push(Piece::Bytes(text.into_bytes()));
        self
    }

    /// Raw bytes, as they are.
    pub fn raw(mut self, bytes: &[u8]) -> Self {
        self.pieces.push(Piece::Bytes(bytes.to_vec()));
        self
    }

    /// The opening chunk: role and an empty reasoning delta (which must open nothing).
    pub fn role(self) -> Self {
        self.data(chunk(
            json!({"role": "assistant", "content": null, "reasoning_content": ""}),
            None,
            None,
        ))
    }

    /// Reasoning, one chunk per piece.
    pub fn reasoning(mut self, pieces: &[&str]) -> Self {
        for p in pieces {
            self = self.data(chunk(
                json!({"content": null, "reasoning_content": p}),
                None,
                None,
            ));
        }
        self
    }

    /// Answer text, one chunk per piece.
    pub fn content(mut self, pieces: &[&str]) -> Self {
        for p in pieces {
            self = self.data(chunk(
                json!({"content": p, "reasoning_content": null}),
                None,
                None,
            ));
        }
        self
    }

    /// Answer text cut into chunks of `size` characters.
    pub fn content_in_pieces(self, text: &str, size: usize) -> Self {
        let chars: Vec<char> = text.chars().collect();
        let pieces: Vec<String> = chars
            .chunks(size.max(1))
            .map(|c| c.iter().collect())
            .collect();
        let refs: Vec<&str> = pieces.iter().map(String::as_str).collect();
        self.content(&refs)
    }

    /// One tool call whose arguments arrive in pieces of `size` characters (id and name first).
    pub fn tool_call(
        self,
        index: usize,
        id: &str,
        name: &str,
        arguments: &Value,
        size: usize,
    ) -> Self {
        let args = arguments.to_string();
        let mut s = self.data(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]}),
            None,
            None,
        ));
        let chars: Vec<char> = args.chars().collect();
        for piece in chars.chunks(size.max(1)) {
            let piece: String = piece.iter().collect();
            s = s.data(chunk(
                json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                None,
                None,
            ));
        }
        s
    }

    /// A tool call whose raw argument text is given as is (e.g. not JSON).
    pub fn tool_call_raw(self, index: usize, id: &str, name: &str, raw_arguments: &str) -> Self {
        self.data(chunk(
            json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": raw_arguments}}]}),
            None,
            None,
        ))
    }

    /// The last chunk: `finish_reason` with usage on it, as DeepSeek sends it.
    pub fn finish(self, reason: &str) -> Self {
        let usage = json!({
            "prompt_tokens": 120, "completion_tokens": 30, "total_tokens": 150,
            "prompt_cache_hit_tokens": 100, "prompt_cache_miss_tokens": 20,
            "completion_tokens_details": {"reasoning_tokens": 5}
        });
        self.data(chunk(
            json!({"content": "", "reasoning_content": null}),
            Some(reason),
            Some(usage),
        ))
    }

    /// An SSE comment line, as DeepSeek sends while waiting for capacity.
    pub fn keep_alive(self) -> Self {
        self.data(": keep-alive\n\n".to_string())
    }

    /// A pause before the next piece.
    pub fn pause(mut self, ms: u64) -> Self {
        self.pieces.push(Piece::Pause(Duration::from_millis(ms)));
        self
    }

    /// Holds the stream here, what came before it sent, until `until` holds (a `Gate` opened, a
    /// file written): a turn waits for the test instead of the test guessing a pause.
    pub fn until(mut self, until: Until) -> Self {
        self.pieces.push(Piece::Until(until));
        self
    }

    /// Waits until `offset` after the reply began before the next piece.
    pub fn at(mut self, offset: Duration) -> Self {
        self.pieces.push(Piece::At(offset));
        self
    }

    /// Prints `label <unix ms>` on the server's stdout when reached.
    pub fn note(mut self, label: &str) -> Self {
        self.pieces.push(Piece::Note(label.to_string()));
        self
    }

    /// `data: [DONE]`.
    pub fn done(self) -> Self {
        self.data("data: [DONE]\n\n".to_string())
    }

    /// Every byte written on its own, as its own HTTP chunk (a read may end anywhere: inside a
    /// tag, a JSON string or a character).
    pub fn byte_by_byte(self) -> Self {
        let mut pieces = Vec::new();
        for piece in self.pieces {
            match piece {
                Piece::Bytes(bytes) => {
                    for b in bytes {
                        pieces.push(Piece::Bytes(vec![b]));
                        pieces.push(Piece::Flush);
                    }
                }
                other => pieces.push(other),
            }
        }
        Self { pieces }
    }

    /// The stream as a reply.
    pub fn build(self) -> Reply {
        Reply::Stream(self.pieces)
    }

    /// A complete plain answer: role, the text in pieces, `stop`, `[DONE]`.
    pub fn answer(text: &str) -> Reply {
        Self::new()
            .role()
            .content_in_pieces(text, 7)
            .finish("stop")
            .done()
            .build()
    }

    /// A complete response that calls one tool.
    pub fn calls(id: &str, name: &str, arguments: Value) -> Reply {
        Self::new()
            .role()
            .tool_call(0, id, name, &arguments, 5)
            .finish("tool_calls")
            .done()
            .build()
    }

    /// A complete response that calls each `(name, arguments)` at once (ids `call_0`, …).
    pub fn calls_all(list: &[(&str, Value)]) -> Reply {
        let mut b = Self::new().role();
        for (i, (name, args)) in list.iter().enumerate() {
            b = b.tool_call(i, &format!("call_{i}"), name, args, 9);
        }
        b.finish("tool_calls").done().build()
    }
}
