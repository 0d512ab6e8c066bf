//! The text protocol on a stream: content events go through the tag parser and come out as the
//! events the native protocol sends (text, reasoning, and a tool-call event per whole call), so
//! nothing after the client needs a second path for calls written as tags.

use super::call::broken_call;
use super::parser::{Piece, TagParser};
use crate::llm::types::StreamEvent;

/// Turns one response's events from a text-protocol model into native-shaped events.
#[derive(Debug, Default)]
pub struct TextCalls {
    parser: TagParser,
    calls: usize,
}

impl TextCalls {
    /// At the start of a response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes the next event; content is parsed, the rest passes as it is (reasoning streamed by
    /// the server is never searched for calls).
    pub fn push(&mut self, event: StreamEvent) -> Vec<StreamEvent> {
        match event {
            StreamEvent::Content(text) => {
                let pieces = self.parser.push(&text);
                self.events(pieces)
            }
            other => vec![other],
        }
    }

    /// The stream ended: what the parser held back, and a call left open as a broken one.
    pub fn finish(&mut self) -> Vec<StreamEvent> {
        let pieces = self.parser.finish();
        self.events(pieces)
    }

    fn events(&mut self, pieces: Vec<Piece>) -> Vec<StreamEvent> {
        pieces
            .into_iter()
            .map(|piece| match piece {
                Piece::Text(text) => StreamEvent::Content(text),
                Piece::Reasoning(text) => StreamEvent::Reasoning(text),
                Piece::Call { name, arguments } => self.call(name, arguments),
                Piece::Broken { raw, problem } => {
                    let call = broken_call(String::new(), &raw, &problem);
                    self.call(call.function.name, call.function.arguments)
                }
            })
            .collect()
    }

    /// A whole call as one fragment, with an id of its own (the model gives none).
    fn call(&mut self, name: String, arguments: String) -> StreamEvent {
        let index = self.calls;
        self.calls += 1;
        StreamEvent::ToolCallFragment {
            index,
            id: Some(format!("call_{}", uuid::Uuid::new_v4().simple())),
            name: Some(name),
            arguments,
        }
    }
}
