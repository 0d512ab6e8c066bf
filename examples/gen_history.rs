//! Writes a history file of N prompt + answer turns for the start-up and memory benchmarks:
//! `cargo run --release --example gen_history -- WORKSPACE 1000`; with a third argument, each
//! turn first reads a file of that many bytes (a tool call and its output):
//! `… -- WORKSPACE 1000 262144`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // A developer tool: it stops at any surprise.

#[path = "../benches/support/mod.rs"]
mod support;

use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(workspace) = args.first().map(PathBuf::from) else {
        eprintln!("usage: gen_history WORKSPACE [TURNS] [TOOL_OUTPUT_BYTES]");
        std::process::exit(2);
    };
    let turns = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1_000);
    let session = match args.get(2).and_then(|a| a.parse().ok()) {
        Some(output_bytes) => support::session_with_tools(turns, output_bytes),
        None => support::session(turns),
    };
    let path = workspace.join(miniclaw::agent::history::HISTORY_FILE);
    if let Err(e) = miniclaw::agent::history::save(&path, &session) {
        eprintln!("gen_history: {e}");
        std::process::exit(1);
    }
    println!("{}", path.display());
}
