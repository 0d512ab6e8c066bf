//! Property: however a byte stream is cut into reads, the parser yields the same frames and events
//! as when it is fed whole (cuts inside multi-byte UTF-8, between CR and LF, anywhere).

use miniclaw::llm::StreamEvent;
use miniclaw::llm::chunk::decode_chunk;
use miniclaw::llm::sse::{Frame, SseParser};
use proptest::prelude::*;

const DEEPSEEK: &str =
    include_str!("../fixtures/sse/deepseek-reasoner-thinking-then-tool-call.sse");
const OPENAI: &str = include_str!("../fixtures/sse/openai-two-parallel-tool-calls.sse");

/// The logical lines of a stream with multi-byte text, comments and a multi-line event.
fn synthetic_lines() -> Vec<String> {
    let chunk = |delta: &str| {
        format!(r#"data: {{"choices":[{{"index":0,"delta":{delta},"finish_reason":null}}]}}"#)
    };
    vec![
        ": keep-alive".into(),
        String::new(),
        chunk(r#"{"reasoning_content":"Größe 天气 🌦️ ok"}"#),
        String::new(),
        ": keep-alive".into(),
        String::new(),
        // One JSON object split over two data lines: joined with "\n", which JSON accepts.
        r#"data: {"choices":[{"index":0,"delta":"#.into(),
        r#"data: {"content":"é€😀 done"},"finish_reason":"stop"}]}"#.into(),
        String::new(),
        "data: [DONE]".into(),
        String::new(),
    ]
}

/// Joins lines with the chosen terminators (0 = LF, 1 = CRLF, 2 = CR), cycling through `ends`.
fn join(lines: &[String], ends: &[u8]) -> Vec<u8> {
    let mut out: Vec<u8> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        out.extend_from_slice(line.as_bytes());
        let end: &[u8] = match ends.get(i % ends.len().max(1)).copied().unwrap_or(0) {
            1 => b"\r\n",
            2 => b"\r",
            // A CR then an empty line ended by LF would read as one CRLF: the input itself would
            // mean something else, so that combination is written as CRLF.
            _ if line.is_empty() && out.last() == Some(&b'\r') => b"\r\n",
            _ => b"\n",
        };
        out.extend_from_slice(end);
    }
    out
}

/// Frames from feeding `bytes` split at `cuts`.
fn frames_cut(bytes: &[u8], cuts: &[usize]) -> Vec<Frame> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    points.sort_unstable();
    let mut parser = SseParser::new();
    let mut frames = Vec::new();
    let mut start = 0;
    for p in points.into_iter().chain([bytes.len()]) {
        frames.extend(parser.push(&bytes[start..p]));
        start = p;
    }
    frames
}

fn events(frames: &[Frame]) -> Vec<StreamEvent> {
    frames
        .iter()
        .filter_map(|f| match f {
            Frame::Data(d) => Some(decode_chunk(d).expect("valid chunk")),
            Frame::Done | Frame::Comment => None,
        })
        .flatten()
        .collect()
}

#[test]
fn the_synthetic_stream_means_what_it_says() {
    let whole = SseParser::new().push(&join(&synthetic_lines(), &[0]));
    assert_eq!(whole.last(), Some(&Frame::Done));
    let ev = events(&whole);
    assert_eq!(ev[0], StreamEvent::Reasoning("Größe 天气 🌦️ ok".into()));
    assert_eq!(ev[1], StreamEvent::Content("é€😀 done".into()));
    assert_eq!(ev.len(), 3);
}

proptest! {
    #![proptest_config(crate::proptest_config(256))]

    #[test]
    fn any_cut_of_the_synthetic_stream_gives_the_same_frames(
        ends in prop::collection::vec(0u8..3, 1..12),
        cuts in prop::collection::vec(any::<usize>(), 0..40),
    ) {
        let reference = SseParser::new().push(&join(&synthetic_lines(), &[0]));
        let bytes = join(&synthetic_lines(), &ends);
        prop_assert_eq!(&SseParser::new().push(&bytes), &reference);
        prop_assert_eq!(&frames_cut(&bytes, &cuts), &reference);
    }

    #[test]
    fn every_single_byte_cut_gives_the_same_frames(ends in prop::collection::vec(0u8..3, 1..12)) {
        let bytes = join(&synthetic_lines(), &ends);
        let all_cuts: Vec<usize> = (0..=bytes.len()).collect();
        prop_assert_eq!(frames_cut(&bytes, &all_cuts), SseParser::new().push(&bytes));
    }

    #[test]
    fn any_cut_of_the_recorded_streams_gives_the_same_events(
        cuts in prop::collection::vec(any::<usize>(), 0..200),
        crlf in any::<bool>(),
    ) {
        for text in [DEEPSEEK, OPENAI] {
            let reference = events(&SseParser::new().push(text.as_bytes()));
            let text = if crlf { text.replace('\n', "\r\n") } else { text.to_string() };
            let cut = frames_cut(text.as_bytes(), &cuts);
            prop_assert_eq!(cut.last(), Some(&Frame::Done));
            prop_assert_eq!(events(&cut), reference);
        }
    }
}
