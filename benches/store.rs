//! Loading and saving history, the sandbox path check and SSE parsing of one delta.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use miniclaw::agent::EventSink;
use miniclaw::agent::history::{self, CompactionPolicy, HistoryStore, HistoryWriter};
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

/// Turns and output size of the case: a 1,000-turn history whose turns each hold a
/// 256 KB tool output (about 270 MB on disk).
const TURNS: usize = 1_000;
const OUTPUT: usize = 256 * 1024;

/// Starts over from the snapshot alone: the journal removed, the history loaded (which the
/// store then continues, as the agent does after start).
fn reload(path: &Path) -> miniclaw::agent::Session {
    std::fs::remove_file(history::journal_path(path)).ok();
    history::load(path).unwrap().session
}

fn history_with_tool_outputs(c: &mut Criterion) {
    // In the build folder, not /tmp: a tmpfs there would make every sync free.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = dir.path().join("history.json");
    let escaped = support::escaped_file_text(OUTPUT);
    let session = support::session_with_tools(TURNS, OUTPUT);
    history::save(&path, &session).unwrap();
    drop(session);
    let mut g = c.benchmark_group("history_1000_turns_256k_outputs");
    g.sample_size(10).warm_up_time(Duration::from_secs(1));

    // One step's save as the writer thread does it: the call and its 256 KB output appended
    // to the journal and synced (fdatasync). Each sample continues a fresh load, so the journal
    // stays well below the size that folds it in.
    g.measurement_time(Duration::from_secs(8));
    g.bench_function("step_save", |b| {
        b.iter_custom(|iters| {
            let mut session = reload(&path);
            let mut store = HistoryStore::open(&path);
            let mut spent = Duration::ZERO;
            for i in 0..iters as usize {
                support::tool_step(&mut session, TURNS + i, &escaped);
                let started = Instant::now();
                store.save(&session).unwrap();
                spent += started.elapsed();
            }
            spent
        })
    });

    // What a step's save costs the async runtime: comparing ids, copying the new messages and
    // queueing them (the file work above happens on the writer's thread meanwhile).
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    g.bench_function("step_save_on_the_runtime", |b| {
        b.iter_custom(|iters| {
            let mut session = reload(&path);
            let mut writer = HistoryWriter::start(HistoryStore::open(&path)).unwrap();
            let events = EventSink::discard();
            let mut spent = Duration::ZERO;
            for i in 0..iters as usize {
                support::tool_step(&mut session, TURNS + i, &escaped);
                let started = Instant::now();
                writer.save(&session, &events);
                spent += started.elapsed();
                runtime.block_on(writer.flush());
            }
            spent
        })
    });

    // The slow paths, once in a while: writing the whole history (a new session, or folding
    // the journal in), and loading it with a journal of 100 steps.
    g.sampling_mode(SamplingMode::Flat)
        .measurement_time(Duration::from_secs(20));
    let session = reload(&path);
    g.bench_function("whole_save", |b| {
        b.iter(|| history::save(&path, &session).unwrap())
    });
    drop(session);
    g.bench_function("fold_journal_of_one_step", |b| {
        b.iter_custom(|iters| {
            let mut spent = Duration::ZERO;
            for i in 0..iters as usize {
                let mut session = reload(&path);
                let mut store = HistoryStore::open(&path).with_policy(CompactionPolicy {
                    small_history_bytes: 0,
                    max_journal_percent: 0,
                });
                support::tool_step(&mut session, TURNS + i, &escaped);
                let started = Instant::now();
                store.save(&session).unwrap();
                spent += started.elapsed();
            }
            spent
        })
    });
    let mut session = reload(&path);
    let mut store = HistoryStore::open(&path);
    for i in 0..100 {
        support::tool_step(&mut session, TURNS + i, &escaped);
        store.save(&session).unwrap();
    }
    drop((store, session));
    g.bench_function("load_with_journal_of_100_steps", |b| {
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

criterion_group!(
    benches,
    history_io,
    history_with_tool_outputs,
    sandbox,
    sse_delta
);
criterion_main!(benches);
