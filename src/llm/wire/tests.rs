//! The connections' thread against a real HTTP/1.1 server on 127.0.0.1 that writes each piece
//! of its body as its own chunk, in its own write, with Nagle's algorithm off.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

use reqwest::StatusCode;

use super::*;

/// Generous: a loaded machine is slow, but a test that hangs must still fail.
const DEADLINE: Duration = Duration::from_secs(20);

/// Accepts one connection and reads the request's head (the tests send no body).
async fn accept(listener: &TcpListener) -> TcpStream {
    let (mut socket, _) = listener.accept().await.expect("accept");
    socket.set_nodelay(true).expect("nodelay");
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = socket.read(&mut byte).await.expect("read the request");
        assert!(n > 0, "the request ended before its head did");
        head.push(byte[0]);
    }
    socket
}

async fn listen() -> (TcpListener, String) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/stream", listener.local_addr().expect("addr"));
    (listener, url)
}

async fn write_head(socket: &mut TcpStream, status: &str, extra: &str) -> std::io::Result<()> {
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/event-stream\r\n{extra}transfer-encoding: chunked\r\n\r\n"
    );
    socket.write_all(head.as_bytes()).await
}

/// One chunk of a chunked body, in one write.
async fn write_piece(socket: &mut TcpStream, piece: &str) -> std::io::Result<()> {
    let chunk = format!("{:x}\r\n{piece}\r\n", piece.len());
    socket.write_all(chunk.as_bytes()).await
}

fn piece(i: usize) -> String {
    format!("data: {{\"n\":{i}}}\n\n")
}

fn get(url: &str) -> RequestBuilder {
    reqwest::Client::new().get(url)
}

/// The reply to a GET of `url`, its head within the deadline.
async fn reply_in_time(url: &str) -> Reply {
    tokio::time::timeout(DEADLINE, send(get(url)))
        .await
        .expect("a head in time")
        .expect("a reply")
}

/// The body's next batch within the deadline (`late` says what did not come), `None` at its end.
async fn batch_in_time(body: &mut Body, late: &str) -> Option<Bytes> {
    tokio::time::timeout(DEADLINE, body.chunk())
        .await
        .expect(late)
        .expect("no transport error")
}

#[tokio::test]
async fn pieces_written_during_a_pause_arrive_whole_in_one_batch() {
    let (listener, url) = listen().await;
    let (received_first, mut first_received) = mpsc::channel::<()>(1);
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        write_head(&mut socket, "200 OK", "").await.expect("head");
        write_piece(&mut socket, &piece(0)).await.expect("piece");
        // The rest is written while the connections' thread sleeps after the first batch.
        first_received.recv().await;
        for i in 1..=40 {
            write_piece(&mut socket, &piece(i)).await.expect("piece");
        }
        socket.write_all(b"0\r\n\r\n").await.expect("end");
    });
    let reply = reply_in_time(&url).await;
    assert_eq!(reply.status, StatusCode::OK);
    let mut body = reply.body;
    let mut batches = Vec::new();
    while let Some(batch) = batch_in_time(&mut body, "a batch in time").await {
        if batches.is_empty() {
            received_first.send(()).await.expect("the server waits");
        }
        batches.push(batch);
    }
    server.await.expect("the server ran");
    let whole: Vec<u8> = batches.iter().flat_map(|b| b.to_vec()).collect();
    let expected: String = (0..=40).map(piece).collect();
    assert_eq!(String::from_utf8_lossy(&whole), expected);
    // 41 writes; one batch for the first, and the 40 that came during its pause together (a
    // few more if the machine was slow enough to spread them over several pauses).
    assert!(
        batches.len() < 12,
        "41 pieces came in {} batches: they were not gathered",
        batches.len()
    );
}

#[tokio::test]
async fn an_error_status_comes_back_with_its_headers_and_body() {
    let (listener, url) = listen().await;
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        write_head(&mut socket, "429 Too Many Requests", "retry-after: 7\r\n")
            .await
            .expect("head");
        write_piece(&mut socket, "{\"error\":")
            .await
            .expect("piece");
        write_piece(&mut socket, "\"slow down\"}")
            .await
            .expect("piece");
        socket.write_all(b"0\r\n\r\n").await.expect("end");
    });
    let reply = send(get(&url)).await.expect("a reply");
    assert_eq!(reply.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(
        reply.headers.get("retry-after").map(|v| v.as_bytes()),
        Some(&b"7"[..])
    );
    let mut body = reply.body;
    let mut text = Vec::new();
    while let Some(batch) = body.chunk().await.expect("no transport error") {
        text.extend_from_slice(&batch);
    }
    assert_eq!(text, b"{\"error\":\"slow down\"}");
    server.await.expect("the server ran");
}

#[tokio::test]
async fn dropping_the_body_closes_the_connection() {
    let (listener, url) = listen().await;
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        write_head(&mut socket, "200 OK", "").await.expect("head");
        // Writes until the client is gone: a write then fails.
        for i in 0.. {
            if write_piece(&mut socket, &piece(i)).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    });
    let reply = send(get(&url)).await.expect("a reply");
    let mut body = reply.body;
    let first = body.chunk().await.expect("no transport error");
    assert!(first.is_some(), "a first batch");
    drop(body);
    tokio::time::timeout(DEADLINE, server)
        .await
        .expect("the server's writes failed once the body was dropped")
        .expect("the server ran");
}

#[tokio::test]
async fn dropping_the_request_before_its_head_closes_the_connection() {
    let (listener, url) = listen().await;
    let (accepted, mut was_accepted) = mpsc::channel::<()>(1);
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        accepted.send(()).await.expect("the test waits");
        // Never answers; the connection must be closed from the other end.
        let mut rest = [0u8; 64];
        loop {
            match socket.read(&mut rest).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    });
    let request = send(get(&url));
    tokio::select! {
        _ = request => panic!("the server never answers"),
        _ = was_accepted.recv() => {}
    }
    tokio::time::timeout(DEADLINE, server)
        .await
        .expect("the connection was closed once the request was dropped")
        .expect("the server ran");
}

#[tokio::test]
async fn a_refused_connection_is_an_http_error() {
    let (listener, url) = listen().await;
    drop(listener);
    match send(get(&url)).await {
        Err(SendError::Http(e)) => assert!(e.is_connect(), "{e:?}"),
        Err(other) => panic!("not reqwest's refusal: {other:?}"),
        Ok(reply) => panic!("an answer from a closed port: {}", reply.status),
    }
}

#[tokio::test]
async fn a_pause_told_before_the_wait_began_does_not_end_it() {
    let pace = Pace::default();
    // Told during the last session, after its pause was decided: kept by `Notify` as a permit.
    pace.tell();
    let wait = pace.wait();
    tokio::pin!(wait);
    assert!(
        futures::FutureExt::now_or_never(&mut wait).is_none(),
        "the old telling ended the wait"
    );
    pace.tell();
    tokio::time::timeout(DEADLINE, wait)
        .await
        .expect("a new telling ends the wait");
}

#[tokio::test]
async fn a_fast_stream_is_handed_over_at_most_every_hand_over_pace() {
    let (listener, url) = listen().await;
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        write_head(&mut socket, "200 OK", "").await.expect("head");
        // A server sending a piece every 2 ms: about 300 ms of stream.
        let mut tick = tokio::time::interval(Duration::from_millis(2));
        for i in 0..150 {
            tick.tick().await;
            write_piece(&mut socket, &piece(i)).await.expect("piece");
        }
        socket.write_all(b"0\r\n\r\n").await.expect("end");
    });
    let reply = reply_in_time(&url).await;
    let mut body = reply.body;
    let mut whole = Vec::new();
    let mut received = Vec::new();
    while let Some(batch) = batch_in_time(&mut body, "a batch in time").await {
        received.push(std::time::Instant::now());
        whole.extend_from_slice(&batch);
    }
    server.await.expect("the server ran");
    let expected: String = (0..150).map(piece).collect();
    assert_eq!(String::from_utf8_lossy(&whole), expected);
    // Hand-overs are never closer than the pace but for the first and the body's end, so over
    // the span they came in there can be no more than the span holds paces, and those two.
    let span = received[received.len() - 1] - received[0];
    let most = (span.as_millis() / HAND_OVER_PACE.as_millis()) as usize + 3;
    assert!(
        received.len() <= most,
        "{} batches in {span:?}: handed over more often than every {HAND_OVER_PACE:?}",
        received.len()
    );
}

#[tokio::test]
async fn text_held_for_the_next_hand_over_comes_though_the_stream_pauses() {
    let (listener, url) = listen().await;
    let (told, mut tell) = mpsc::channel::<usize>(64);
    let server = tokio::spawn(async move {
        let mut socket = accept(&listener).await;
        write_head(&mut socket, "200 OK", "").await.expect("head");
        // The first piece is handed over at once; the next, arriving while the connections'
        // thread sleeps, is held for the next hand-over.
        write_piece(&mut socket, &piece(0)).await.expect("piece");
        assert_eq!(tell.recv().await, Some(0));
        write_piece(&mut socket, &piece(1)).await.expect("piece");
        // Nothing more until the reader has seen piece 1: it must come without more data.
        while let Some(n) = tell.recv().await {
            if n == 1 {
                break;
            }
        }
        socket.write_all(b"0\r\n\r\n").await.expect("end");
    });
    let reply = reply_in_time(&url).await;
    let mut body = reply.body;
    let mut whole = String::new();
    while let Some(batch) = batch_in_time(
        &mut body,
        "the held piece came in time, though nothing followed it",
    )
    .await
    {
        whole.push_str(&String::from_utf8_lossy(&batch));
        let seen = (0..2).filter(|&i| whole.contains(&piece(i))).count();
        let _ = told.send(seen - 1).await;
    }
    server.await.expect("the server ran");
    assert_eq!(whole, format!("{}{}", piece(0), piece(1)));
}

#[test]
fn a_batch_ending_an_event_stream_is_told_apart() {
    let one = |text: &str| Batch::new(Bytes::from(text.to_string()), 0);
    assert!(one("data: {\"a\":1}\n\ndata: [DONE]\n\n").ends_stream());
    assert!(one("data: [DONE]\r\n\r\n").ends_stream());
    let mut joined = one(&"data: {\"n\":1}\n\n".repeat(100));
    assert!(!joined.ends_stream());
    joined.push(Bytes::from_static(b"data: [DONE]\n\n"));
    assert!(joined.ends_stream());
    // Text that says [DONE] far from the batch's end is not the stream's end.
    let said = format!("data: {{\"content\":\"[DONE]\"}}\n\n{}", piece(7).repeat(4));
    assert!(!one(&said).ends_stream());
}
