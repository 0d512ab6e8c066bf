//! The streamed chat's own HTTP/1.1 reader (`llm::direct`) against hostile servers, through the
//! real binary: a head or a chunk line that never ends, a key that would split the request.
//! Each run ends with a clear error that names no key, and nothing the key holds becomes a
//! header of its own.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use crate::headless_bin::{headless, text};

const KEY: &str = "sk-hostile-server-test-key-42";

/// A server on 127.0.0.1 answering every request with `reply`; it passes each request's text on.
fn hostile(reply: &'static [u8]) -> (String, mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (seen, requests) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let seen = seen.clone();
            std::thread::spawn(move || serve(stream, reply, &seen));
        }
    });
    (url, requests)
}

fn serve(mut stream: TcpStream, reply: &[u8], seen: &mpsc::Sender<String>) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            _ => return,
        }
    }
    let _ = seen.send(String::from_utf8_lossy(&got).into_owned());
    // The reply in pieces, as a slow server would send it; a client that stops reading or
    // closes ends it.
    for piece in reply.chunks(16 * 1024) {
        if stream.write_all(piece).is_err() {
            return;
        }
    }
    // Held open: only the client's own limits end the exchange.
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
}

/// A head whose one header goes on for 200 KB, never ending.
fn endless_head() -> &'static [u8] {
    let mut head = b"HTTP/1.1 200 OK\r\nx-filler: ".to_vec();
    head.resize(head.len() + 200 * 1024, b'a');
    head.leak()
}

/// A chunked body whose first size line goes on for 200 KB.
fn endless_chunk_line() -> &'static [u8] {
    let mut reply =
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n10;"
            .to_vec();
    reply.resize(reply.len() + 200 * 1024, b'a');
    reply.leak()
}

#[test]
fn a_head_or_a_chunk_line_without_end_fails_the_run_clearly_without_the_key() {
    for (what, reply, says) in [
        ("an endless head", endless_head(), "a response head over"),
        (
            "an endless chunk size line",
            endless_chunk_line(),
            "a chunk size line without an end",
        ),
    ] {
        let (url, requests) = hostile(reply);
        let ws = tempfile::tempdir().unwrap();
        let out = headless(ws.path(), &url)
            .env("DEEPSEEK_API_KEY", KEY)
            .args(["-p", "hello"])
            .output()
            .unwrap();
        let stderr = text(&out.stderr);
        assert!(!out.status.success(), "{what}: the run failed\n{stderr}");
        assert!(
            stderr.contains("malformed response") && stderr.contains(says),
            "{what}: {stderr}"
        );
        assert!(
            !stderr.contains(KEY),
            "{what}: the key in an error: {stderr}"
        );
        assert!(
            !text(&out.stdout).contains(KEY),
            "{what}: the key on stdout"
        );
        let request = requests.recv_timeout(Duration::from_secs(5)).unwrap();
        assert!(
            request.contains(&format!("authorization: Bearer {KEY}\r\n")),
            "{request}"
        );
    }
}

#[test]
fn a_key_with_a_line_break_is_refused_before_any_byte_is_sent() {
    let (url, requests) = hostile(b"HTTP/1.1 500 Never\r\ncontent-length: 0\r\n\r\n");
    let ws = tempfile::tempdir().unwrap();
    let out = headless(ws.path(), &url)
        .env("DEEPSEEK_API_KEY", "sk-split\r\nx-injected: yes")
        .args(["-p", "hello"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        !stderr.contains("x-injected"),
        "the key is not repeated: {stderr}"
    );
    match requests.recv_timeout(Duration::from_millis(500)) {
        Err(_) => {}
        Ok(request) => panic!("a request was sent: {request}"),
    }
}
