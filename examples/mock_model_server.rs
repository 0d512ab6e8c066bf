//! A standalone scripted model server for benchmarks: every chat request is answered with a long
//! markdown answer streamed in DeepSeek's chunk shape at a fixed token rate.
//!
//! `cargo run --release --example mock_model_server -- long 20000 2000` prints its URL, then one
//! `stream-start <unix ms>` / `stream-done <unix ms>` line per answer it streams.

#[path = "../benches/support/mod.rs"]
mod support;

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::Instant;

/// Chunks are written in batches this far apart (the rate is kept by absolute deadlines).
const BATCH: Duration = Duration::from_millis(10);

fn chunk(content: &str, finish: Option<&str>) -> String {
    let usage = finish.map(|_| {
        json!({"prompt_tokens": 120, "completion_tokens": 20000, "total_tokens": 20120,
               "prompt_cache_hit_tokens": 100, "prompt_cache_miss_tokens": 20})
    });
    let body = json!({
        "id": "mock-1", "object": "chat.completion.chunk", "created": 1764664568,
        "model": "deepseek-v4-flash",
        "choices": [{"index": 0, "delta": {"content": content, "reasoning_content": null},
                     "logprobs": null, "finish_reason": finish}],
        "usage": usage,
    });
    format!("data: {body}\n\n")
}

fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn say(line: &str) {
    let mut out = std::io::stdout();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// Reads one request (head and body); `false` when the connection closed.
async fn read_request(socket: &mut TcpStream) -> bool {
    let mut buf = Vec::new();
    let mut piece = [0u8; 8192];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                match socket.read(&mut piece).await {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => buf.extend_from_slice(&piece[..n]),
                }
            }
            return true;
        }
        match socket.read(&mut piece).await {
            Ok(0) | Err(_) => return false,
            Ok(n) => buf.extend_from_slice(&piece[..n]),
        }
    }
}

async fn write_chunk(socket: &mut TcpStream, data: &str) -> std::io::Result<()> {
    let frame = format!("{:x}\r\n{data}\r\n", data.len());
    socket.write_all(frame.as_bytes()).await
}

async fn serve(mut socket: TcpStream, tokens: usize, rate: usize) -> std::io::Result<()> {
    while read_request(&mut socket).await {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
        socket.write_all(head.as_bytes()).await?;
        let pieces = support::answer_tokens(tokens);
        let per_batch = (rate as f64 * BATCH.as_secs_f64()).max(1.0) as usize;
        let start = Instant::now();
        say(&format!("stream-start {}", unix_ms()));
        for (i, batch) in pieces.chunks(per_batch).enumerate() {
            tokio::time::sleep_until(start + BATCH * i as u32).await;
            let data: String = batch.iter().map(|t| chunk(t, None)).collect();
            write_chunk(&mut socket, &data).await?;
        }
        write_chunk(&mut socket, &chunk("", Some("stop"))).await?;
        write_chunk(&mut socket, "data: [DONE]\n\n").await?;
        socket.write_all(b"0\r\n\r\n").await?;
        socket.flush().await?;
        say(&format!("stream-done {}", unix_ms()));
    }
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().map_or("long", String::as_str);
    if scenario != "long" {
        eprintln!("usage: mock_model_server long [TOKENS] [TOKENS_PER_SECOND]");
        std::process::exit(2);
    }
    let tokens = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(20_000);
    let rate = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    say(&format!("http://{}", listener.local_addr()?));
    loop {
        let (socket, _) = listener.accept().await?;
        tokio::spawn(async move {
            let _ = serve(socket, tokens, rate).await;
        });
    }
}
