//! The TUI's hot paths: one streamed delta (answer, reasoning, tool output), one frame
//! (conversation, timeline, status line), markdown rendering and wrapping. Ratio budgets are
//! benchmarked side by side in one group.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

#[path = "support/mod.rs"]
mod support;

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use miniclaw::agent::{AgentEvent, AgentState};
use miniclaw::llm::Preset;
use miniclaw::tui::{Screen, Theme, TuiOptions, render_markdown, wrap_lines};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::layout::Rect;
use serde_json::json;

const W: u16 = 160;
const H: u16 = 45;

/// The tests' fixed options (workspace, preset, theme), so benches draw what the snapshots show.
fn options() -> TuiOptions {
    TuiOptions {
        workspace: "/home/me/project".into(),
        preset: Preset::Flash,
        max_steps: 10,
        mouse: true,
        theme: Theme::dark(),
        notices: vec![],
        tools: vec![],
        recent_models: vec![],
        resume_picker: false,
        approval: miniclaw::approval::ApprovalMode::Auto,
        approval_source: miniclaw::approval::ApprovalSource::Default,
        run_command: Ok(()),
        skills: Default::default(),
        custom_commands: Default::default(),
    }
}

fn screen() -> Rect {
    Rect::new(0, 0, W, H)
}

/// A state in the middle of streaming an answer that already has `lines` source lines.
fn streaming_state(lines: usize) -> Screen {
    let mut s = Screen::new(&options());
    let now = Instant::now();
    s.send("write a long answer", now);
    s.event(AgentEvent::State(AgentState::Thinking), now);
    s.event(AgentEvent::StepStarted { step: 1, max: 10 }, now);
    s.event(AgentEvent::ContentDelta(support::answer_lines(lines)), now);
    s.prepare(screen());
    s
}

/// Handling one delta: the event itself and the re-render it causes before the next frame.
fn per_delta(c: &mut Criterion) {
    let tokens = support::answer_tokens(4000);
    let mut g = c.benchmark_group("per_delta");
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for lines in [10usize, 10_000] {
        g.bench_with_input(BenchmarkId::new("lines", lines), &lines, |b, &lines| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    // A fresh answer every few hundred deltas keeps its size at `lines`.
                    let mut s = streaming_state(lines);
                    let batch = (iters - done).min(300);
                    let start = Instant::now();
                    for i in 0..batch {
                        let t = &tokens[(done + i) as usize % tokens.len()];
                        s.event(AgentEvent::ContentDelta(t.clone()), start);
                        s.prepare(screen());
                    }
                    total += start.elapsed();
                    done += batch;
                    black_box(&s);
                }
                total
            })
        });
    }
    g.finish();
}

/// A state with `messages` conversation entries loaded from history.
fn history_state(messages: usize) -> Screen {
    let mut s = Screen::new(&options());
    s.show_session(&support::session(messages / 2), std::time::Instant::now());
    s.prepare(screen());
    s
}

/// A state whose timeline holds `steps` finished tool steps.
fn timeline_state(steps: usize) -> Screen {
    let mut s = Screen::new(&options());
    let now = Instant::now();
    for i in 0..steps {
        let id = format!("c{i}");
        for e in [
            AgentEvent::StepStarted {
                step: i + 1,
                max: 10,
            },
            AgentEvent::StepFinished(miniclaw::events::StepEnd::Thought),
            AgentEvent::ToolCallStarted {
                id: id.clone(),
                name: "read_text_file".into(),
                arguments: json!({"path": format!("src/file{i}.rs")}).to_string(),
            },
            AgentEvent::ToolFinished {
                id,
                name: "read_text_file".into(),
                result: json!({"ok": true, "content": "fn main() {}\n".repeat(4)}).into(),
                outcome: miniclaw::events::CallOutcome::Ok,
                approved: false,
                duration: Some(Duration::from_millis(3)),
            },
        ] {
            s.event(e, now);
        }
    }
    s.prepare(screen());
    s
}

fn frame(c: &mut Criterion, group: &str, sizes: [usize; 2], make: fn(usize) -> Screen) {
    let mut g = c.benchmark_group(group);
    g.sample_size(20).measurement_time(Duration::from_secs(3));
    let now = Instant::now();
    for n in sizes {
        let mut s = make(n);
        let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
        g.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| {
                s.prepare(screen());
                s.draw(&mut term, now).unwrap();
            })
        });
    }
    g.finish();
}

/// One whole frame (layout + draw) with 10 and 10,000 conversation messages.
fn frame_conversation(c: &mut Criterion) {
    frame(
        c,
        "frame_conversation_messages",
        [10, 10_000],
        history_state,
    );
}

/// One whole frame with 10 and 1,000 finished steps in the timeline.
fn frame_timeline(c: &mut Criterion) {
    frame(c, "frame_timeline_steps", [10, 1_000], timeline_state);
}

/// The status line alone.
fn status_line(c: &mut Criterion) {
    let s = streaming_state(10);
    let mut term = Terminal::new(TestBackend::new(W, 1)).unwrap();
    let now = Instant::now();
    c.bench_function("status_line", |b| {
        b.iter(|| {
            s.draw_status(&mut term, now).unwrap();
        })
    });
}

/// Rendering a whole 20,000-token markdown answer for 94 columns (done once when it finishes;
/// the renderer wraps as it goes), and the other panes' wrapper over its lines.
fn markdown_and_wrap(c: &mut Criterion) {
    let text = support::answer_text(20_000);
    let theme = Theme::dark();
    let mut g = c.benchmark_group("markdown");
    g.sample_size(10).measurement_time(Duration::from_secs(4));
    g.bench_function("render_20k_tokens", |b| {
        b.iter(|| black_box(render_markdown(&text, 94, &theme)))
    });
    let lines = render_markdown(&text, 94, &theme);
    g.bench_function("wrap_20k_tokens_w94", |b| {
        b.iter(|| black_box(wrap_lines(&lines, 94)))
    });
    g.finish();
}

/// A turn in its first step, as after sending a prompt.
fn step_state() -> Screen {
    let mut s = Screen::new(&options());
    let now = Instant::now();
    s.send("think it through", now);
    s.event(AgentEvent::State(AgentState::Thinking), now);
    s.event(AgentEvent::StepStarted { step: 1, max: 10 }, now);
    s
}

/// A step streaming its reasoning, `kb` KB of it so far (the reasoning pane shows it).
fn reasoning_state(kb: usize) -> Screen {
    let mut s = step_state();
    let text = support::reasoning_text(kb * 1024);
    s.event(AgentEvent::ReasoningDelta(text), Instant::now());
    s
}

/// A step whose one tool call is running and has printed `kb` KB of output so far.
fn tool_output_state(kb: usize) -> Screen {
    let mut s = step_state();
    let now = Instant::now();
    for e in [
        AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "run_shell_command".into(),
            arguments: json!({"command": "cargo test"}).to_string(),
        },
        AgentEvent::ToolOutputDelta {
            id: "c1".into(),
            text: support::output_text(kb * 1024),
        },
    ] {
        s.event(e, now);
    }
    s
}

/// One more delta arrives, then a whole frame is prepared and drawn (160×45), with `kb` KB of
/// text already in the pane `make` fills; `delta(i)` is the `i`th delta.
fn per_delta_frame(
    c: &mut Criterion,
    group: &str,
    make: fn(usize) -> Screen,
    delta: impl Fn(usize) -> AgentEvent,
) {
    let mut g = c.benchmark_group(group);
    g.sample_size(20).measurement_time(Duration::from_secs(4));
    for kb in [1usize, 200] {
        g.bench_with_input(BenchmarkId::new("kb", kb), &kb, |b, &kb| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                let mut done = 0u64;
                while done < iters {
                    // A fresh state every few hundred deltas keeps the text at about `kb` KB;
                    // its first frame (every line wrapped) is drawn before the clock starts.
                    let mut s = make(kb);
                    let mut term = Terminal::new(TestBackend::new(W, H)).unwrap();
                    s.prepare(screen());
                    s.draw(&mut term, Instant::now()).unwrap();
                    let batch = (iters - done).min(300);
                    let start = Instant::now();
                    for i in 0..batch {
                        s.event(delta((done + i) as usize), start);
                        s.prepare(screen());
                        s.draw(&mut term, start).unwrap();
                    }
                    total += start.elapsed();
                    done += batch;
                    black_box(&s);
                }
                total
            })
        });
    }
    g.finish();
}

/// The reasoning pane while reasoning streams: per delta + frame at 1 KB and 200 KB of it.
fn per_delta_reasoning(c: &mut Criterion) {
    let tokens = support::reasoning_tokens(4000);
    per_delta_frame(c, "per_delta_frame_reasoning", reasoning_state, |i| {
        AgentEvent::ReasoningDelta(tokens[i % tokens.len()].clone())
    });
}

/// The tool output pane while a command prints: per delta (one line of output) + frame at
/// 1 KB and 200 KB of output.
fn per_delta_tool_output(c: &mut Criterion) {
    per_delta_frame(c, "per_delta_frame_tool_output", tool_output_state, |i| {
        AgentEvent::ToolOutputDelta {
            id: "c1".into(),
            text: support::output_line(100_000 + i),
        }
    });
}

criterion_group!(
    benches,
    per_delta,
    per_delta_reasoning,
    per_delta_tool_output,
    frame_conversation,
    frame_timeline,
    status_line,
    markdown_and_wrap
);
criterion_main!(benches);
