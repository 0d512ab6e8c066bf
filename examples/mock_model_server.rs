//! A scripted model server for trying MiniClaw by hand, screenshots and benchmarks — the same
//! server the tests use. It prints its URL, then serves until killed.
//!
//! ```sh
//! cargo run --example mock_model_server -- demo            # tool calls, then a markdown answer
//! cargo run --example mock_model_server -- long 20000 2000 # a 20,000-token answer at 2,000 tokens/s
//! cargo run --example mock_model_server -- think           # slow reasoning, then a short answer
//! DEEPSEEK_API_KEY=x DEEPSEEK_BASE_URL=<printed url> cargo run --release
//! ```

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

/// A markdown answer of about `tokens` tokens (headings, lists, code, tables; one token a
/// chunk, ending in `END-OF-ANSWER-<tokens>`) arriving at exactly `rate` tokens/s. The server
/// prints `stream-start <unix ms>` and `stream-done <unix ms>` around it (scripts/bench-tui.sh).
fn long_answer(tokens: usize, rate: usize) -> Reply {
    let pieces = bench_support::answer_tokens(tokens);
    let per_token = Duration::from_secs(1) / rate.max(1) as u32;
    let mut b = SseBuilder::new().note("stream-start").role();
    for (i, piece) in pieces.iter().enumerate() {
        // Paced in 10 ms batches by absolute offsets, so sleeps never add up to a slower rate.
        if i % (rate / 100).max(1) == 0 {
            b = b.at(per_token * i as u32);
        }
        b = b.content(&[piece.as_str()]);
    }
    b.finish("stop").done().note("stream-done").build()
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

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().map(String::as_str).unwrap_or("demo");
    let mut script = Vec::new();
    for _ in 0..50 {
        match scenario {
            "long" => {
                let tokens = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
                let rate = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
                script.push(long_answer(tokens, rate));
            }
            "answer" => script.push(SseBuilder::answer(ANSWER)),
            "think" => script.push(thinking_answer()),
            _ => script.extend(demo_turn()),
        }
    }
    let server = MockServer::start(script).await;
    println!("{}", server.url());
    let _ = tokio::signal::ctrl_c().await;
    drop(server);
}
