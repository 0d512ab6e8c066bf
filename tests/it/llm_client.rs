//! The streaming client against the scripted local model server: request shape, streams,
//! retries, errors, timeouts, and the key kept out of every text.

use crate::support;

use std::time::{Duration, Instant};

use miniclaw::llm::{
    ChatMessage, ClientEvent, Completion, FinishReason, LlmClient, LlmError, Preset, RetryPolicy,
    Role, StreamEvent, ToolSchema,
};
use serde_json::json;
use support::mock_server::Piece;
use support::{MockServer, Reply, SseBuilder};
use tokio_util::sync::CancellationToken;

const KEY: &str = "sk-test-SECRET-0123456789";

fn fast_retry(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        base_delay: Duration::from_millis(10),
        max_delay: Duration::from_millis(40),
    }
}

fn client(url: &str) -> LlmClient {
    LlmClient::new(url, Some(KEY.into()))
        .unwrap()
        .with_retry(fast_retry(3))
        .with_idle_timeout(Duration::from_millis(300))
}

fn user(text: &str) -> ChatMessage {
    ChatMessage {
        role: Role::User,
        content: Some(text.into()),
        reasoning_content: None,
        tool_calls: None,
        tool_call_id: None,
    }
}

fn clock_tool() -> ToolSchema {
    ToolSchema {
        name: "clock".into(),
        description: "Tells the time.".into(),
        parameters: json!({"type": "object", "properties": {"tz": {"type": "string"}}}),
    }
}

/// Runs one chat and returns the result with everything reported on the way, panicking on a hang.
async fn run(
    client: &LlmClient,
    preset: Preset,
    tools: &[ToolSchema],
) -> (Result<Completion, LlmError>, Vec<ClientEvent>) {
    let mut events = Vec::new();
    let mut on_event = |e: ClientEvent| events.push(e);
    let messages = [user("hi")];
    let cancel = CancellationToken::new();
    let chat = client.chat(&preset, &messages, tools, &cancel, &mut on_event);
    let result = tokio::time::timeout(Duration::from_secs(20), chat)
        .await
        .expect("the client hung");
    (result.map_err(|e| e.error), events)
}

fn retries(events: &[ClientEvent]) -> Vec<(u32, u32, Duration, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Retrying {
                attempt,
                max_attempts,
                delay,
                reason,
                ..
            } => Some((*attempt, *max_attempts, *delay, reason.clone())),
            ClientEvent::Stream(_) | ClientEvent::Queued { .. } => None,
        })
        .collect()
}

fn assert_key_absent(text: &str) {
    assert!(!text.contains(KEY), "the key leaked into: {text}");
    assert!(
        !text.contains("SECRET"),
        "part of the key leaked into: {text}"
    );
}

#[tokio::test]
async fn flash_request_carries_model_thinking_off_streaming_tools_and_bearer_key() {
    let server = MockServer::start(vec![SseBuilder::answer("Hello there.")]).await;
    let (result, _) = run(&client(&server.url()), Preset::Flash, &[clock_tool()]).await;
    assert_eq!(result.unwrap().content, "Hello there.");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.method, "POST");
    assert_eq!(r.path, "/chat/completions");
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    let body = r.json();
    assert_eq!(body["model"], "deepseek-flash");
    assert_eq!(body["thinking"], json!({"type": "disabled"}));
    assert!(body.get("reasoning_effort").is_none());
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["messages"], json!([{"role": "user", "content": "hi"}]));
    assert_eq!(
        body["tools"],
        json!([{"type": "function", "function": {
            "name": "clock",
            "description": "Tells the time.",
            "parameters": {"type": "object", "properties": {"tz": {"type": "string"}}},
        }}])
    );
}

#[tokio::test]
async fn pro_request_enables_thinking_with_high_effort_and_omits_empty_tools() {
    let server = MockServer::start(vec![SseBuilder::answer("ok")]).await;
    let (result, _) = run(&client(&server.url()), Preset::Pro, &[]).await;
    result.unwrap();
    let body = server.requests()[0].json();
    assert_eq!(body["model"], "deepseek-v4-pro");
    assert_eq!(body["thinking"], json!({"type": "enabled"}));
    assert_eq!(body["reasoning_effort"], "high");
    assert!(body.get("tools").is_none());
}

#[tokio::test]
async fn a_built_stream_with_keep_alives_and_interleaved_calls_is_reported_and_put_together() {
    let interleaved = |index: usize, args: &str| {
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [
            {"index": index, "function": {"arguments": args}}]}, "finish_reason": null}]});
        format!("data: {chunk}\n\n")
    };
    let stream = SseBuilder::new()
        .keep_alive()
        .role()
        .keep_alive()
        .reasoning(&["Let me ", "think."])
        .keep_alive()
        .content(&["Checking ", "both."])
        .tool_call_raw(0, "call_a", "clock", "")
        .tool_call_raw(1, "call_b", "read_file", "")
        .raw(interleaved(1, "{\"path\":").as_bytes())
        .raw(interleaved(0, "{\"tz\":").as_bytes())
        .keep_alive()
        .raw(interleaved(1, "\"a.txt\"}").as_bytes())
        .raw(interleaved(0, "\"UTC\"}").as_bytes())
        .finish("tool_calls")
        .done()
        .build();
    let server = MockServer::start(vec![stream]).await;
    let (result, events) = run(&client(&server.url()), Preset::Pro, &[clock_tool()]).await;
    let c = result.unwrap();
    assert_eq!(c.reasoning, "Let me think.");
    assert_eq!(c.content, "Checking both.");
    assert_eq!(c.finish_reason, Some(FinishReason::ToolCalls));
    let calls: Vec<_> = c
        .tool_calls
        .iter()
        .map(|t| {
            (
                t.id.as_str(),
                t.function.name.as_str(),
                t.function.arguments.as_str(),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("call_a", "clock", r#"{"tz":"UTC"}"#),
            ("call_b", "read_file", r#"{"path":"a.txt"}"#)
        ]
    );
    let usage = c.usage.unwrap();
    assert_eq!(
        (
            usage.prompt_cache_hit_tokens,
            usage.prompt_cache_miss_tokens,
            usage.reasoning_tokens
        ),
        (100, 20, 5)
    );

    // Reported in order, with nothing empty; the stream came in one write, so the texts of a
    // kind that follow each other came as one.
    let stream = streamed(&events);
    assert_eq!(stream[0], StreamEvent::Reasoning("Let me think.".into()));
    assert_eq!(stream[1], StreamEvent::Content("Checking both.".into()));
    assert!(matches!(stream[2], StreamEvent::ToolCallFragment { .. }));
    assert!(matches!(stream.last(), Some(StreamEvent::Usage(_))));
    assert!(retries(&events).is_empty());
}

/// The stream's events among everything reported.
fn streamed(events: &[ClientEvent]) -> Vec<StreamEvent> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Stream(s) => Some(s.clone()),
            ClientEvent::Retrying { .. } | ClientEvent::Queued { .. } => None,
        })
        .collect()
}

#[tokio::test]
async fn texts_that_arrive_together_come_as_one_event_and_a_pause_separates_them() {
    // Each token its own SSE event and HTTP chunk, as a fast server sends them; what one read
    // takes is passed on as one text of each kind, in order, and nothing is held past its batch.
    let stream = SseBuilder::new()
        .role()
        .reasoning(&["Weigh", "ing ", "it."])
        .content(&["One, ", "two, "])
        .pause(150)
        .content(&["three."])
        .reasoning(&["Then ", "more."])
        .finish("stop")
        .done()
        .build();
    let server = MockServer::start(vec![stream]).await;
    let (result, events) = run(&client(&server.url()), Preset::Pro, &[]).await;
    let c = result.unwrap();
    assert_eq!(c.content, "One, two, three.");
    assert_eq!(c.reasoning, "Weighing it.Then more.");
    let texts: Vec<_> = streamed(&events)
        .into_iter()
        .filter(|e| matches!(e, StreamEvent::Content(_) | StreamEvent::Reasoning(_)))
        .collect();
    assert_eq!(
        texts,
        [
            StreamEvent::Reasoning("Weighing it.".into()),
            StreamEvent::Content("One, two, ".into()),
            StreamEvent::Content("three.".into()),
            StreamEvent::Reasoning("Then more.".into()),
        ]
    );
}

#[tokio::test]
async fn a_429_with_retry_after_waits_that_long_capped_then_succeeds() {
    let server = MockServer::start(vec![
        Reply::error_retry_after(429, "Rate limit reached", 0),
        Reply::error_retry_after(429, "Rate limit reached", 3600),
        SseBuilder::answer("finally"),
    ])
    .await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "finally");
    let r = retries(&events);
    assert_eq!(r.len(), 2);
    assert_eq!((r[0].0, r[0].1, r[0].2), (2, 3, Duration::ZERO));
    // An hour is capped at max_delay.
    assert_eq!((r[1].0, r[1].1, r[1].2), (3, 3, Duration::from_millis(40)));
    assert!(
        r[0].3.contains("429") && r[0].3.contains("Rate limit reached"),
        "{}",
        r[0].3
    );
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn a_429_without_retry_after_backs_off_with_jitter_then_succeeds() {
    let server = MockServer::start(vec![
        Reply::error(429, "slow down"),
        SseBuilder::answer("ok"),
    ])
    .await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "ok");
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    assert!(
        r[0].2 >= Duration::from_millis(5) && r[0].2 <= Duration::from_millis(10),
        "{:?}",
        r[0].2
    );
}

#[tokio::test]
async fn server_errors_500_and_503_are_retried() {
    let server = MockServer::start(vec![
        Reply::error(500, "internal"),
        Reply::error(503, "overloaded"),
        SseBuilder::answer("ok"),
    ])
    .await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "ok");
    let attempts: Vec<_> = retries(&events).iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(attempts, [(2, 3), (3, 3)]);
    assert!(retries(&events)[1].3.contains("overloaded (503)"));
    // Every attempt sends the same JSON body, with its content type.
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.body == requests[0].body));
    assert!(requests[0].json()["messages"].is_array());
    assert!(
        requests[0]
            .headers
            .iter()
            .any(|(k, v)| k == "content-type" && v == "application/json")
    );
}

#[tokio::test]
async fn retries_stop_at_max_attempts_with_the_last_error() {
    let server = MockServer::start(vec![
        Reply::error(503, "busy 1"),
        Reply::error(503, "busy 2"),
        Reply::error(503, "busy 3"),
        SseBuilder::answer("never reached"),
    ])
    .await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Http { status: 503, .. }), "{err:?}");
    assert!(err.to_string().contains("busy 3"));
    assert_eq!(retries(&events).len(), 2);
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test]
async fn client_errors_are_not_retried_and_name_the_cause_with_the_servers_message() {
    let cases = [
        (400, "Invalid request: messages missing", "invalid"),
        (
            401,
            "Authentication Fails, Your api key is invalid",
            "API key",
        ),
        (402, "Insufficient Balance", "top up"),
        (422, "Invalid parameter: temperature", "parameters"),
    ];
    for (status, message, cause) in cases {
        let server = MockServer::start(vec![
            Reply::error(status, message),
            SseBuilder::answer("no"),
        ])
        .await;
        let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
        let err = result.unwrap_err();
        match &err {
            LlmError::Http {
                status: s,
                message: m,
            } => {
                assert_eq!(*s, status);
                assert_eq!(m, message);
            }
            other => panic!("{status}: unexpected {other:?}"),
        }
        let text = err.to_string();
        assert!(
            text.contains(message) && text.contains(cause) && text.contains(&status.to_string()),
            "{text}"
        );
        assert_eq!(server.requests().len(), 1, "{status} was retried");
        assert!(retries(&events).is_empty());
    }
}

#[tokio::test]
async fn a_non_json_error_body_is_quoted_trimmed() {
    let body = format!("<html>Bad Gateway {}</html>", "x".repeat(2000));
    let server = MockServer::start(vec![Reply::Status {
        status: 400,
        headers: vec![],
        body,
    }])
    .await;
    let (result, _) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let text = result.unwrap_err().to_string();
    assert!(text.contains("<html>Bad Gateway"));
    assert!(text.len() < 600, "{}", text.len());
}

#[tokio::test]
async fn connection_refused_is_retried_then_reported() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    let (result, events) = run(&client(&url), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    // The connection's own error stays in the chain, under the plain-words message.
    let source = std::error::Error::source(&err).expect("the transport error's source");
    assert!(source.to_string().contains("refused"), "{source}");
    let text = err.to_string();
    assert!(
        text.contains("could not connect to http://127.0.0.1:"),
        "{text}"
    );
    assert!(text.to_lowercase().contains("refused"), "{text}");
    let attempts: Vec<_> = retries(&events).iter().map(|r| r.0).collect();
    assert_eq!(attempts, [2, 3]);
}

/// The waits told while a request sat in the server's queue.
fn queued(events: &[ClientEvent]) -> Vec<(Duration, bool)> {
    events
        .iter()
        .filter_map(|e| match e {
            ClientEvent::Queued { waited, started } => Some((*waited, *started)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn keep_alives_before_the_first_data_keep_a_queued_request_alive_and_are_told() {
    // DeepSeek under load: keep-alives for longer than the idle timeout (300 ms), then the answer.
    let mut stream = SseBuilder::new();
    for _ in 0..10 {
        stream = stream.keep_alive().pause(100);
    }
    let queued_then_answered = stream
        .role()
        .content(&["Served at last."])
        .finish("stop")
        .done()
        .build();
    let server = MockServer::start(vec![queued_then_answered]).await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "Served at last.");
    assert!(retries(&events).is_empty(), "not abandoned, not retried");
    assert_eq!(server.requests().len(), 1);
    let waits = queued(&events);
    assert_eq!(waits.iter().filter(|(_, started)| !started).count(), 10);
    assert!(
        waits.windows(2).all(|w| w[0].0 <= w[1].0),
        "the wait grows: {waits:?}"
    );
    let (last, started) = *waits.last().unwrap();
    assert!(started, "told once more when the answer starts");
    assert!(last >= Duration::from_millis(900), "{last:?}");
}

#[tokio::test]
async fn a_request_queued_past_the_bound_fails_with_a_clear_error_at_once() {
    let mut stream = SseBuilder::new();
    for _ in 0..40 {
        stream = stream.keep_alive().pause(100);
    }
    let server = MockServer::start(vec![stream.done().build()]).await;
    let client = client(&server.url()).with_queue_limit(Duration::from_millis(700));
    let started = Instant::now();
    let (result, events) = run(&client, Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::QueuedTooLong(_)), "{err:?}");
    assert!(
        err.to_string().contains("without starting it (it is busy)"),
        "{err}"
    );
    // Queued ten minutes already: another attempt would queue again.
    assert!(retries(&events).is_empty());
    assert_eq!(server.requests().len(), 1);
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(600) && waited < Duration::from_millis(3000),
        "{waited:?}"
    );
}

#[tokio::test]
async fn keep_alives_after_the_first_data_do_not_keep_a_stream_alive() {
    let mut stream = SseBuilder::new().role().content(&["Half"]);
    for _ in 0..30 {
        stream = stream.keep_alive().pause(100);
    }
    let stalled = stream.done().build();
    let server = MockServer::start(vec![stalled.clone(), stalled.clone(), stalled]).await;
    let started = Instant::now();
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(
        matches!(err, LlmError::IdleTimeout(d) if d == Duration::from_millis(300)),
        "{err:?}"
    );
    assert!(started.elapsed() < Duration::from_millis(3000));
    assert!(queued(&events).is_empty(), "data came first: never queued");
}

#[tokio::test]
async fn slow_data_within_the_idle_timeout_is_fine() {
    let stream = SseBuilder::new()
        .role()
        .pause(200)
        .content(&["a"])
        .pause(200)
        .content(&["b"])
        .pause(200)
        .finish("stop")
        .done()
        .build();
    let server = MockServer::start(vec![stream]).await;
    let (result, _) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "ab");
}

#[tokio::test]
async fn a_stream_closed_before_done_is_asked_for_again_once_then_given_up() {
    let cut = SseBuilder::new()
        .role()
        .content(&["partial ", "answer"])
        .build();
    let server = MockServer::start(vec![
        cut.clone(),
        cut,
        SseBuilder::answer("never asked for"),
    ])
    .await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert!(matches!(result, Err(LlmError::StreamCut)), "{result:?}");
    // The text, the one restart, the text again (its pieces joined however the reads fell):
    // never a third request.
    let restart = events
        .iter()
        .position(|e| matches!(e, ClientEvent::Retrying { .. }))
        .expect("one restart");
    assert!(matches!(
        events[restart],
        ClientEvent::Retrying {
            restarts: true,
            cause: miniclaw::llm::RetryCause::StreamCut,
            ..
        }
    ));
    let text = |events: &[ClientEvent]| -> String {
        events
            .iter()
            .map(|e| match e {
                ClientEvent::Stream(StreamEvent::Content(t)) => t.as_str(),
                _ => "",
            })
            .collect()
    };
    assert_eq!(text(&events[..restart]), "partial answer", "{events:?}");
    assert_eq!(text(&events[restart + 1..]), "partial answer", "{events:?}");
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, ClientEvent::Retrying { .. }))
            .count(),
        1
    );
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn a_stream_cut_before_anything_was_shown_is_retried() {
    let empty = SseBuilder::new().keep_alive().role().build();
    let server = MockServer::start(vec![empty, SseBuilder::answer("second try")]).await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    assert_eq!(result.unwrap().content, "second try");
    let r = retries(&events);
    assert_eq!(r.len(), 1);
    assert!(
        r[0].3.contains("closed before it was complete"),
        "{}",
        r[0].3
    );
}

#[tokio::test]
async fn a_malformed_chunk_is_reported() {
    let stream = SseBuilder::new()
        .role()
        .content(&["ok so far"])
        .raw(b"data: {\"choices\": [oops\n\n")
        .done()
        .build();
    let server = MockServer::start(vec![stream]).await;
    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Malformed(_)), "{err:?}");
    // What came before the bad chunk, in the same read, was still shown.
    assert_eq!(
        streamed(&events),
        [StreamEvent::Content("ok so far".into())]
    );
    assert!(err.to_string().contains("[oops"), "{err}");
}

#[tokio::test]
async fn a_server_that_never_answers_times_out_instead_of_hanging() {
    let server = MockServer::start(vec![Reply::Hang, Reply::Hang]).await;
    let c = client(&server.url()).with_retry(fast_retry(2));
    let started = Instant::now();
    let (result, events) = run(&c, Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert!(matches!(err, LlmError::Transport { .. }), "{err:?}");
    assert!(err.to_string().contains("did not answer"), "{err}");
    assert_eq!(retries(&events).len(), 1);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn a_missing_key_sends_nothing() {
    let server = MockServer::start(vec![SseBuilder::answer("no")]).await;
    let c = LlmClient::new(&server.url(), None).unwrap();
    let (result, _) = run(&c, Preset::Flash, &[]).await;
    assert!(matches!(result, Err(LlmError::MissingKey)));
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn the_key_never_appears_in_errors_or_debug_output() {
    let c = client("http://127.0.0.1:9");
    let debug = format!("{c:?}");
    assert_key_absent(&debug);
    assert!(debug.contains("<redacted>"), "{debug}");
    assert_key_absent(&format!("{:?}", c.clone()));

    // A server that echoes the key back in its message.
    let server = MockServer::start(vec![
        Reply::error(401, &format!("Incorrect API key provided: {KEY}")),
        Reply::error(500, KEY),
        Reply::error(500, KEY),
        Reply::error(500, KEY),
    ])
    .await;
    let (result, _) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert_key_absent(&err.to_string());
    assert_key_absent(&format!("{err:?}"));
    assert!(
        err.to_string()
            .contains("Incorrect API key provided: <redacted>")
    );

    let (result, events) = run(&client(&server.url()), Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert_key_absent(&format!("{err} {err:?} {events:?}"));

    let (result, events) = run(&c, Preset::Flash, &[]).await;
    let err = result.unwrap_err();
    assert_key_absent(&format!("{err} {err:?} {events:?}"));
}

#[tokio::test]
async fn a_cloned_client_shares_its_setup() {
    let server =
        MockServer::start(vec![SseBuilder::answer("one"), SseBuilder::answer("two")]).await;
    let a = client(&server.url());
    let b = a.clone();
    assert_eq!(run(&a, Preset::Flash, &[]).await.0.unwrap().content, "one");
    assert_eq!(run(&b, Preset::Flash, &[]).await.0.unwrap().content, "two");
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}")))
    );
}

#[tokio::test]
async fn a_cancelled_chat_returns_at_once_with_what_had_arrived() {
    let server = MockServer::start(vec![
        SseBuilder::new()
            .role()
            .reasoning(&["Weighing it"])
            .content(&["Hello, "])
            .pause(30_000)
            .content(&["never sent"])
            .finish("stop")
            .done()
            .build(),
    ])
    .await;
    let client = client(&server.url());
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    // Cancelled as soon as the first text arrives.
    let mut on_event = move |e: ClientEvent| {
        if matches!(e, ClientEvent::Stream(StreamEvent::Content(_))) {
            trigger.cancel();
        }
    };
    let messages = [user("hi")];
    let started = Instant::now();
    let chat = client.chat(&Preset::Pro, &messages, &[], &cancel, &mut on_event);
    let err = tokio::time::timeout(Duration::from_secs(10), chat)
        .await
        .expect("cancel ends the chat")
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(matches!(err.error, LlmError::Cancelled), "{err:?}");
    assert_eq!(err.partial.content, "Hello, ");
    assert_eq!(err.partial.reasoning, "Weighing it");
}

#[tokio::test]
async fn an_event_that_never_ends_fails_at_the_cap_at_once_and_is_not_retried() {
    // 16 MiB of one line without a break, written as a server would stream it.
    let mut pieces = vec![Piece::Bytes(
        b"data: {\"choices\":[{\"delta\":{\"content\":\"".to_vec(),
    )];
    for _ in 0..256 {
        pieces.push(Piece::Bytes(vec![b'x'; 64 * 1024]));
        pieces.push(Piece::Flush);
    }
    let server = MockServer::start(vec![Reply::Stream(pieces)]).await;
    let client = client(&server.url()).with_idle_timeout(Duration::from_secs(30));
    let started = std::time::Instant::now();
    let (result, events) = run(&client, Preset::Flash, &[]).await;
    let error = result.expect_err("a body without line breaks cannot complete");
    assert!(
        matches!(error, LlmError::EventTooLarge { cap } if cap == miniclaw::llm::sse::MAX_EVENT_BYTES),
        "{error:?}"
    );
    assert!(
        error
            .to_string()
            .contains("sent an event over 4194304 bytes"),
        "{error}"
    );
    assert!(retries(&events).is_empty(), "not retried");
    assert_eq!(server.requests().len(), 1);
    // Well before the idle timeout: the cap, not the clock, ended it.
    assert!(started.elapsed() < Duration::from_secs(20));
}
