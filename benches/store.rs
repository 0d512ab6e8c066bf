//! Loading and saving history, the sandbox path check and SSE parsing of one delta.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use miniclaw::agent::history;
use miniclaw::llm::chunk::decode_chunk;
use miniclaw::llm::sse::{Frame, SseParser};
use miniclaw::tools::Sandbox;

fn history_io(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("history.json");
    let session = support::session(1_000);
    let mut g = c.benchmark_group("history_1000_turns");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.bench_function("save", |b| {
        b.iter(|| history::save(&path, &session).unwrap())
    });
    history::save(&path, &session).unwrap();
    g.bench_function("load", |b| {
        b.iter(|| black_box(history::load(&path).unwrap()))
    });
    g.finish();
}

fn sandbox(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src/deep/er")).unwrap();
    std::fs::write(dir.path().join("src/deep/er/file.rs"), "x").unwrap();
    let sb = Sandbox::new(dir.path()).unwrap();
    let mut g = c.benchmark_group("sandbox");
    g.sample_size(20).measurement_time(Duration::from_secs(2));
    g.bench_function("resolve_read_existing", |b| {
        b.iter(|| black_box(sb.resolve_read("src/deep/er/file.rs").unwrap()))
    });
    g.bench_function("resolve_write_new", |b| {
        b.iter(|| black_box(sb.resolve_write("src/deep/er/new.rs").unwrap()))
    });
    g.bench_function("refuse_escape", |b| {
        b.iter(|| black_box(sb.resolve_read("src/../../etc/passwd").is_err()))
    });
    g.finish();
}

/// One DeepSeek-shaped content chunk through the SSE parser and the chunk decoder.
fn sse_delta(c: &mut Criterion) {
    let chunk = "data: {\"id\":\"mock-1\",\"object\":\"chat.completion.chunk\",\"created\":1764664568,\"model\":\"deepseek-v4-flash\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"tokens \",\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null}\n\n";
    let mut parser = SseParser::new();
    c.bench_function("sse_parse_and_decode_one_delta", |b| {
        b.iter(|| {
            for frame in parser.push(chunk.as_bytes()) {
                if let Frame::Data(d) = frame {
                    black_box(decode_chunk(&d).unwrap());
                }
            }
        })
    });
}

criterion_group!(benches, history_io, sandbox, sse_delta);
criterion_main!(benches);
