//! Stream events -> the whole `Completion` they describe.

use std::collections::BTreeMap;

use super::types::{Completion, FunctionCall, StreamEvent, ToolCall};

/// A tool call being put together from its fragments.
#[derive(Debug, Default)]
struct PartialCall {
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

/// Collects stream events in order and yields the completion they add up to.
#[derive(Debug, Default)]
pub struct Accumulator {
    completion: Completion,
    /// Calls by (stream index, how many calls that index had before).
    calls: BTreeMap<(usize, usize), PartialCall>,
    /// The stream's `index` -> the generation it currently feeds.
    slots: BTreeMap<usize, usize>,
}

impl Accumulator {
    /// An empty accumulator.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds one event.
    pub fn push(&mut self, event: &StreamEvent) {
        match event {
            StreamEvent::Reasoning(text) => self.completion.reasoning.push_str(text),
            StreamEvent::Content(text) => self.completion.content.push_str(text),
            StreamEvent::ToolCallFragment {
                index,
                id,
                name,
                arguments,
            } => {
                // Some servers send every call at index 0, one after another: a fragment with a
                // new id at an index that already has a call starts a new call.
                let generation = *self.slots.entry(*index).or_insert(0);
                let current = self
                    .calls
                    .get(&(*index, generation))
                    .and_then(|c| c.id.as_ref());
                let generation = match (current, id) {
                    (Some(old), Some(new)) if old != new => generation + 1,
                    _ => generation,
                };
                self.slots.insert(*index, generation);
                let call = self.calls.entry((*index, generation)).or_default();
                // id and name come once, on the first fragment; a repeat must not replace them.
                if call.id.is_none() {
                    call.id.clone_from(id);
                }
                if call.name.is_none() {
                    call.name.clone_from(name);
                }
                call.arguments.push_str(arguments);
            }
            StreamEvent::Finish(reason) => self.completion.finish_reason = Some(reason.clone()),
            StreamEvent::Usage(usage) => self.completion.usage = Some(*usage),
        }
    }

    /// The completion so far, tool calls in index order (and in arrival order within an index).
    pub fn finish(self) -> Completion {
        let mut completion = self.completion;
        completion.tool_calls = self
            .calls
            .into_iter()
            .map(|((index, generation), call)| ToolCall {
                // A call without an id could not be answered; give it a stable one.
                id: call.id.unwrap_or_else(|| match generation {
                    0 => format!("call_{index}"),
                    g => format!("call_{index}_{g}"),
                }),
                kind: "function".to_string(),
                function: FunctionCall {
                    name: call.name.unwrap_or_default(),
                    arguments: call.arguments,
                },
            })
            .collect();
        completion
    }
}

#[cfg(test)]
mod slot_tests {
    use super::*;

    #[test]
    fn calls_sent_one_after_another_at_the_same_index_stay_apart() {
        let mut acc = Accumulator::new();
        for (id, name, args) in [("a", "f", "{\"x\":1}"), ("b", "g", "{\"y\":2}")] {
            acc.push(&StreamEvent::ToolCallFragment {
                index: 0,
                id: Some(id.into()),
                name: Some(name.into()),
                arguments: String::new(),
            });
            acc.push(&StreamEvent::ToolCallFragment {
                index: 0,
                id: None,
                name: None,
                arguments: args.into(),
            });
        }
        let calls = acc.finish().tool_calls;
        assert_eq!(calls.len(), 2);
        assert_eq!(
            (calls[0].id.as_str(), calls[0].function.arguments.as_str()),
            ("a", "{\"x\":1}")
        );
        assert_eq!(
            (calls[1].id.as_str(), calls[1].function.name.as_str()),
            ("b", "g")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::types::FinishReason;

    fn fragment(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> StreamEvent {
        StreamEvent::ToolCallFragment {
            index,
            id: id.map(str::to_string),
            name: name.map(str::to_string),
            arguments: args.to_string(),
        }
    }

    #[test]
    fn interleaved_calls_are_joined_by_index_and_ordered() {
        let mut acc = Accumulator::new();
        for e in [
            StreamEvent::Reasoning("think".into()),
            fragment(1, Some("b"), Some("second"), ""),
            fragment(0, Some("a"), Some("first"), "{\"x\""),
            fragment(1, None, None, "{}"),
            fragment(0, None, None, ":1}"),
            StreamEvent::Content("hi".into()),
            StreamEvent::Finish(FinishReason::ToolCalls),
        ] {
            acc.push(&e);
        }
        let c = acc.finish();
        assert_eq!(c.reasoning, "think");
        assert_eq!(c.content, "hi");
        assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
        let names: Vec<_> = c
            .tool_calls
            .iter()
            .map(|t| t.function.name.as_str())
            .collect();
        assert_eq!(names, ["first", "second"]);
        assert_eq!(c.tool_calls[0].function.arguments, "{\"x\":1}");
        assert_eq!(c.tool_calls[1].function.arguments, "{}");
        assert_eq!(c.tool_calls[1].id, "b");
    }
}
