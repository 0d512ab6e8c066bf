//! A scripted model server for trying MiniClaw by hand, screenshots and benchmarks — the same
//! server the tests use. It prints its URL, then serves until killed.
//!
//! ```sh
//! cargo run --example mock_model_server -- demo            # tool calls, then a markdown answer
//! cargo run --example mock_model_server -- long 20000 2000 # a 20,000-token answer at 2,000 tokens/s
//! cargo run --example mock_model_server -- think           # slow reasoning, then a short answer
//! cargo run --example mock_model_server -- fix-test        # run_command: test, fix calc.py, test again
//! cargo run --example mock_model_server -- command-edit    # run_command changes files (for /undo)
//! cargo run --example mock_model_server -- think-long 20000 2000 # 20,000 tokens of reasoning
//! cargo run --example mock_model_server -- long 20000 2000 --event-writes # one write per event
//! DEEPSEEK_API_KEY=x DEEPSEEK_BASE_URL=<printed url> cargo run --release
//! ```

#![allow(clippy::unwrap_used, clippy::expect_used)] // A developer tool: it stops at any surprise.

#[path = "../tests/support/mod.rs"]
mod support;

#[path = "../benches/support/mod.rs"]
mod bench_support;

use std::time::Duration;

use serde_json::json;
use support::{MockServer, Reply, SseBuilder};

const ANSWER: &str = "Here is what I found in the workspace:\n\n\
| file | lines | note |\n|---|---|---|\n| hello.txt | 3 | a greeting |\n| notes.md | 12 | 你好，MiniClaw 🦀 |\n\n\
## Next steps\n\n1. Read `notes.md` in full.\n2. Summarise it.\n\n\
```rust\nfn main() {\n    println!(\"hello\");\n}\n```\n\nThe sum is $2^8 + 1 = 257$.";

fn demo_turn() -> Vec<Reply> {
    vec![
        SseBuilder::new()
            .role()
            .reasoning(&[
                "The user wants ",
                "a look at the workspace. ",
                "I will list the files first.",
            ])
            .content(&["Let me look at the workspace."])
            .tool_call(
                0,
                "call_list",
                "list_files",
                &json!({"relative_dir": "."}),
                6,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .role()
            .reasoning(&["Now write a note ", "so the file exists."])
            .tool_call(
                0,
                "call_write",
                "write_text_file",
                &json!({"relative_path": "notes.md", "content": "# Notes\n你好，MiniClaw 🦀\n"}),
                8,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .role()
            .reasoning(&["Everything is in place; ", "answer with a table."])
            .pause(200)
            .content_in_pieces(ANSWER, 12)
            .finish("stop")
            .done()
            .build(),
    ]
}

/// How a paced stream is written.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Writes {
    /// Paced in 10 ms batches, the events of a batch in one write (as they would arrive over a
    /// network).
    Batched,
    /// Every event its own write and flush at its own time, as a real server sends tokens as
    /// they are generated (the client then wakes for nearly every event).
    PerEvent,
}

/// `pieces` as one stream arriving at exactly `rate` pieces/s, each piece one chunk made by
/// `chunk` (given its index), ending in `stop` and `[DONE]`; the server prints
/// `stream-start <unix ms>` and `stream-done <unix ms>` around it (scripts/bench-tui.sh).
fn paced(
    pieces: &[String],
    rate: usize,
    writes: Writes,
    chunk: impl Fn(SseBuilder, usize, &str) -> SseBuilder,
) -> Reply {
    let per_token = Duration::from_secs(1) / rate.max(1) as u32;
    let every = match writes {
        Writes::Batched => (rate / 100).max(1),
        Writes::PerEvent => 1,
    };
    let mut b = SseBuilder::new().note("stream-start").role();
    for (i, piece) in pieces.iter().enumerate() {
        // Paced by absolute offsets, so sleeps never add up to a slower rate. The server writes
        // what is pending at each pause: a batch, or with one pause per event, that event.
        if i % every == 0 {
            b = b.at(per_token * i as u32);
        }
        b = chunk(b, i, piece);
    }
    b.finish("stop").done().note("stream-done").build()
}

/// A markdown answer of about `tokens` tokens (headings, lists, code, tables; one token a
/// chunk, ending in `END-OF-ANSWER-<tokens>`) arriving at exactly `rate` tokens/s.
fn long_answer(tokens: usize, rate: usize, writes: Writes) -> Reply {
    let pieces = bench_support::answer_tokens(tokens);
    paced(&pieces, rate, writes, |b, _, p| b.content(&[p]))
}

/// About `tokens` tokens of reasoning (plain prose in paragraphs, one word a chunk, ending in
/// `END-OF-REASONING-<tokens>`) at exactly `rate` tokens/s, then a one-line answer ending in
/// `END-OF-ANSWER-<tokens>`: what the pro preset streams before it answers.
fn long_reasoning(tokens: usize, rate: usize, writes: Writes) -> Reply {
    let mut pieces = bench_support::reasoning_tokens(tokens);
    let answer = pieces.len();
    pieces.push(format!(
        "Done thinking. {}\n",
        bench_support::end_marker(tokens)
    ));
    paced(&pieces, rate, writes, |b, i, p| {
        if i == answer {
            b.content(&[p])
        } else {
            b.reasoning(&[p])
        }
    })
}

/// A long reasoning stream, a few words every 150 ms, then a short answer: for watching the
/// reasoning pane fill.
fn thinking_answer() -> Reply {
    const THOUGHTS: &str = "The user asks whether 2^31 - 1 is prime. It is a Mersenne number, \
M31 = 2147483647. Euler proved it prime in 1772 by showing that any factor must be of the form \
62k + 1 and also congruent to 1 or 7 mod 8, which leaves few candidates up to the square root, \
about 46341. Checking those candidates one by one: 311? 2147483647 / 311 is not whole. 1117? No. \
1303? No. None of the admissible candidates divides it, so M31 is prime. I should answer briefly, \
cite Euler, and offer to verify with the calculator tool if the user wants. ";
    let words: Vec<&str> = THOUGHTS.split_inclusive(' ').collect();
    let mut b = SseBuilder::new().role();
    for piece in words.chunks(3) {
        b = b.reasoning(&[piece.concat().as_str()]).pause(150);
    }
    b.content_in_pieces(
        "**Yes.** 2³¹ − 1 = 2147483647 is a *Mersenne prime* (M31), proved prime by Euler in 1772.",
        8,
    )
    .finish("stop")
    .done()
    .build()
}

/// A test fixed with run_command, for a workspace holding `calc.py` (`return a - b`) and
/// `test_calc.py` (see `scripts/screenshots.sh`).
fn fix_test_turn() -> Vec<Reply> {
    vec![
        SseBuilder::new()
            .role()
            .content(&["Let me run the tests first."])
            .tool_call(
                0,
                "t1",
                "run_command",
                &json!({"command": "python3 -m unittest 2>&1"}),
                3,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .role()
            .content(&["`add` subtracts. Fixing it."])
            .tool_call(
                0,
                "t2",
                "replace_text_in_file",
                &json!({"relative_path": "calc.py", "old_text": "a - b", "new_text": "a + b"}),
                3,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::calls(
            "t3",
            "run_command",
            json!({"command": "python3 -m unittest 2>&1"}),
        ),
        SseBuilder::answer(
            "Fixed: `add` in `calc.py` returned `a - b`; it returns `a + b` now and the test passes.",
        ),
    ]
}

/// One command that changes files: a fix made by `sed`, a file created, one deleted, a build
/// output in a folder `.gitignore` leaves out.
fn command_edit_turn() -> Vec<Reply> {
    vec![
        SseBuilder::calls(
            "e1",
            "run_command",
            json!({"command": "sed -i 's/a - b/a + b/' calc.py && printf 'made\\n' > made.txt && rm -f old.txt && mkdir -p build && echo o > build/out.o && echo done"}),
        ),
        SseBuilder::answer("Fixed `calc.py` with sed, wrote `made.txt`, removed `old.txt`."),
    ]
}

/// What the `compact` scenario's model writes when MiniClaw asks for a summary.
const SUMMARY: &str = "## Asked\n- How the cache works, question by question (300 of them).\n## Decisions\n- Keep the answers short; cite the module.\n## Files\n- none read or changed\n## Commands\n- none run\n## Open\n- The eviction policy is still to explain.";

/// Whether a request is a compaction's summary request (its system prompt says so).
fn is_summary_request(request: &support::RecordedRequest) -> bool {
    request.body.contains("You summarize a working session")
}

#[tokio::main]
async fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    // `--event-writes`: every event of a paced stream is its own write.
    let writes = match args.iter().position(|a| a == "--event-writes") {
        Some(i) => {
            args.remove(i);
            Writes::PerEvent
        }
        None => Writes::Batched,
    };
    let scenario = args.first().map(String::as_str).unwrap_or("demo");
    let tokens = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rate = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let mut script = Vec::new();
    for _ in 0..50 {
        match scenario {
            "long" => script.push(long_answer(tokens, rate, writes)),
            "think-long" => script.push(long_reasoning(tokens, rate, writes)),
            "answer" => script.push(SseBuilder::answer(ANSWER)),
            "think" => script.push(thinking_answer()),
            "fix-test" => script.extend(fix_test_turn()),
            "command-edit" => script.extend(command_edit_turn()),
            "compact" => script.push(SseBuilder::answer(
                "Where we are: 300 questions on the cache are answered; **eviction** is next.",
            )),
            _ => script.extend(demo_turn()),
        }
    }
    let server = MockServer::start(script).await;
    // `compact`: summaries whenever asked, the demo's answer otherwise.
    if scenario == "compact" {
        server.route(is_summary_request, |_| SseBuilder::answer(SUMMARY));
    }
    println!("{}", server.url());
    let _ = tokio::signal::ctrl_c().await;
    drop(server);
}
