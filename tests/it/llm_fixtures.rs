//! The recorded streams in tests/fixtures/sse/ must put together into exactly what the service meant,
//! both decoded directly and served over HTTP by the mock model server.

use crate::support;

use miniclaw::llm::accumulate::Accumulator;
use miniclaw::llm::chunk::decode_chunk;
use miniclaw::llm::sse::{Frame, SseParser};
use miniclaw::llm::{
    ClientEvent, Completion, FinishReason, FunctionCall, LlmClient, Preset, StreamEvent, ToolCall,
    Usage,
};
use support::{MockServer, Reply};

const DEEPSEEK: &str =
    include_str!("../fixtures/sse/deepseek-reasoner-thinking-then-tool-call.sse");
const OPENAI: &str = include_str!("../fixtures/sse/openai-two-parallel-tool-calls.sse");

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        kind: "function".into(),
        function: FunctionCall {
            name: name.into(),
            arguments: arguments.into(),
        },
    }
}

fn deepseek_expected() -> Completion {
    Completion {
        content: String::new(),
        reasoning: "The user is asking for the weather in San Francisco. I need to use the weather tool to get \
                    this information. Let me invoke the weather tool with the location parameter set to \
                    \"San Francisco\"."
            .into(),
        tool_calls: vec![call(
            "call_00_ioIn7yN9p1ZOMNpDLwd4MgAF",
            "weather",
            r#"{"location": "San Francisco"}"#,
        )],
        finish_reason: Some(FinishReason::ToolCalls),
        usage: Some(Usage {
            prompt_tokens: 339,
            completion_tokens: 83,
            total_tokens: 422,
            prompt_cache_hit_tokens: 320,
            prompt_cache_miss_tokens: 19,
            reasoning_tokens: 39,
        }),
    }
}

fn openai_expected() -> Completion {
    Completion {
        content: String::new(),
        reasoning: String::new(),
        tool_calls: vec![
            call(
                "call_JMW1whyEaYG438VE1OIflxA2",
                "GetWeatherArgs",
                r#"{"city": "Edinburgh", "country": "GB", "units": "c"}"#,
            ),
            call(
                "call_DNYTawLBoN8fj3KN6qU9N1Ou",
                "get_stock_price",
                r#"{"ticker": "AAPL", "exchange": "NASDAQ"}"#,
            ),
        ],
        finish_reason: Some(FinishReason::ToolCalls),
        usage: Some(Usage {
            prompt_tokens: 149,
            completion_tokens: 60,
            total_tokens: 209,
            ..Usage::default()
        }),
    }
}

/// Decodes a whole recorded stream without any IO; also returns whether `[DONE]` was seen.
fn decode(text: &str) -> (Vec<StreamEvent>, bool) {
    let mut events = Vec::new();
    let mut done = false;
    for frame in SseParser::new().push(text.as_bytes()) {
        match frame {
            Frame::Done => done = true,
            Frame::Data(data) => events.extend(decode_chunk(&data).expect("valid chunk")),
            Frame::Comment => {}
        }
    }
    (events, done)
}

fn accumulate(events: &[StreamEvent]) -> Completion {
    let mut acc = Accumulator::new();
    events.iter().for_each(|e| acc.push(e));
    acc.finish()
}

#[test]
fn deepseek_thinking_then_tool_call_decodes_exactly() {
    let (events, done) = decode(DEEPSEEK);
    assert!(done);
    assert_eq!(accumulate(&events), deepseek_expected());
    // The empty first reasoning delta and the empty final content produce no events.
    assert!(events.iter().all(|e| match e {
        StreamEvent::Reasoning(t) | StreamEvent::Content(t) => !t.is_empty(),
        _ => true,
    }));
    assert!(!events.iter().any(|e| matches!(e, StreamEvent::Content(_))));
    // finish and usage come last, in that order, from the same chunk.
    let n = events.len();
    assert_eq!(events[n - 2], StreamEvent::Finish(FinishReason::ToolCalls));
    assert!(matches!(events[n - 1], StreamEvent::Usage(_)));
}

#[test]
fn openai_two_parallel_calls_and_usage_only_chunk_decode_exactly() {
    let (events, done) = decode(OPENAI);
    assert!(done);
    assert_eq!(accumulate(&events), openai_expected());
    let first_fragments: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallFragment {
                index,
                id: Some(_),
                name: Some(name),
                ..
            } => Some((*index, name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        first_fragments,
        vec![
            (0, "GetWeatherArgs".to_string()),
            (1, "get_stock_price".to_string())
        ]
    );
}

/// `events` with the texts of a kind that follow each other joined: the client joins those that
/// arrive in one read, so only the joined sequence is the same however the reads fall.
fn joined(events: Vec<StreamEvent>) -> Vec<StreamEvent> {
    let mut out: Vec<StreamEvent> = Vec::new();
    for event in events {
        match (out.last_mut(), event) {
            (Some(StreamEvent::Reasoning(a)), StreamEvent::Reasoning(b))
            | (Some(StreamEvent::Content(a)), StreamEvent::Content(b)) => a.push_str(&b),
            (_, event) => out.push(event),
        }
    }
    out
}

async fn through_server(text: &str) -> (Completion, Vec<StreamEvent>) {
    let server = MockServer::start(vec![Reply::raw_sse(text)]).await;
    let client = LlmClient::new(&server.url(), Some("sk-fixture".into())).unwrap();
    let mut seen = Vec::new();
    let mut on_event = |e: ClientEvent| {
        if let ClientEvent::Stream(s) = e {
            seen.push(s);
        }
    };
    let completion = client
        .chat(
            &Preset::Pro,
            &[],
            &[],
            &tokio_util::sync::CancellationToken::new(),
            &mut on_event,
        )
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 1);
    (completion, seen)
}

#[tokio::test]
async fn deepseek_fixture_served_over_http_gives_the_same_completion() {
    let (completion, seen) = through_server(DEEPSEEK).await;
    assert_eq!(completion, deepseek_expected());
    assert_eq!(joined(seen), joined(decode(DEEPSEEK).0));
}

#[tokio::test]
async fn openai_fixture_served_over_http_gives_the_same_completion() {
    let (completion, seen) = through_server(OPENAI).await;
    assert_eq!(completion, openai_expected());
    assert_eq!(joined(seen), joined(decode(OPENAI).0));
}
