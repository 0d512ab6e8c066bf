//! The direct stream against servers on 127.0.0.1 written here byte by byte: plain and TLS,
//! kept connections, a reader that goes, and servers that misbehave.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use super::*;

const KEY: &str = "sk-direct-test-key-0123456789";

/// Reads one request (head and `content-length` body) from `stream`; its text, `None` at EOF.
fn read_request(stream: &mut impl Read) -> Option<String> {
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => got.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&got).to_string();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length: "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).ok()?;
    Some(head + &String::from_utf8_lossy(&body))
}

/// A chunk of a chunked body.
fn chunk(text: &str) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", text.len()).into_bytes();
    out.extend_from_slice(text.as_bytes());
    out.extend_from_slice(b"\r\n");
    out
}

const STREAM_HEAD: &str =
    "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";

/// Writes a short event stream, each event its own write.
fn answer_stream(stream: &mut impl Write, events: usize) {
    stream.write_all(STREAM_HEAD.as_bytes()).expect("head");
    for i in 0..events {
        stream
            .write_all(&chunk(&format!("data: {{\"n\":{i}}}\n\n")))
            .expect("an event");
        stream.flush().expect("flushed");
    }
    stream.write_all(&chunk("data: [DONE]\n\n")).expect("done");
    stream.write_all(b"0\r\n\r\n").expect("the end");
    stream.flush().expect("flushed");
}

/// A server on 127.0.0.1 that serves each accepted connection with `serve`, and tells how
/// many it accepted.
fn server(
    serve: impl Fn(usize, TcpStream) + Send + Sync + 'static,
) -> (String, std_mpsc::Receiver<usize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let url = format!(
        "http://127.0.0.1:{}/v1/chat/completions",
        listener.local_addr().expect("an address").port()
    );
    let (accepted, count) = std_mpsc::channel();
    let serve = Arc::new(serve);
    std::thread::spawn(move || {
        for (n, stream) in listener.incoming().enumerate() {
            let Ok(stream) = stream else { return };
            let _ = accepted.send(n + 1);
            let serve = serve.clone();
            std::thread::spawn(move || serve(n, stream));
        }
    });
    (url, count)
}

/// Reads a whole body: its bytes, and the error it ended with.
async fn read_all(mut body: Body) -> (Vec<u8>, Option<WireError>) {
    let mut all = Vec::new();
    loop {
        match body.chunk().await {
            Ok(Some(bytes)) => all.extend_from_slice(&bytes),
            Ok(None) => return (all, None),
            Err(e) => return (all, Some(e)),
        }
    }
}

fn events_text(events: usize) -> String {
    let mut text: String = (0..events)
        .map(|i| format!("data: {{\"n\":{i}}}\n\n"))
        .collect();
    text.push_str("data: [DONE]\n\n");
    text
}

fn route(url: &str) -> Route {
    Route::of(url, true).expect("a direct route (none while a proxy variable is set)")
}

#[tokio::test]
async fn a_stream_arrives_whole_and_its_connection_serves_the_next_request() {
    let (requests_tx, requests) = std_mpsc::channel();
    let (url, accepted) = server(move |_, mut stream| {
        while let Some(request) = read_request(&mut stream) {
            let _ = requests_tx.send(request);
            answer_stream(&mut stream, 40);
        }
    });
    for round in 0..3 {
        let reply = send(route(&url), KEY, b"{\"stream\":true}")
            .await
            .expect("an answer");
        assert_eq!(reply.status.as_u16(), 200);
        let (body, error) = read_all(reply.body).await;
        assert!(error.is_none(), "{error:?}");
        assert_eq!(
            String::from_utf8(body).expect("text"),
            events_text(40),
            "round {round}"
        );
        let request = requests.recv().expect("the request");
        assert!(
            request.starts_with("POST /v1/chat/completions HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(request.contains(&format!("authorization: Bearer {KEY}\r\n")));
        assert!(request.ends_with("{\"stream\":true}"), "{request}");
    }
    let connections: Vec<usize> = accepted.try_iter().collect();
    assert_eq!(connections, [1], "one connection for the three requests");
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_replaced_without_a_failure() {
    let (url, accepted) = server(|_, mut stream| {
        if read_request(&mut stream).is_some() {
            answer_stream(&mut stream, 3);
        }
        // The server closes after each answer, without saying so.
    });
    for _ in 0..3 {
        let reply = send(route(&url), KEY, b"{}").await.expect("an answer");
        let (body, error) = read_all(reply.body).await;
        assert!(error.is_none(), "{error:?}");
        assert_eq!(String::from_utf8(body).expect("text"), events_text(3));
    }
    assert_eq!(
        accepted.try_iter().count(),
        3,
        "a fresh connection each time"
    );
}

#[tokio::test]
async fn dropping_the_body_mid_stream_closes_the_connection_at_once() {
    let (closed_tx, closed) = std_mpsc::channel();
    let (url, _) = server(move |_, mut stream| {
        if read_request(&mut stream).is_none() {
            return;
        }
        stream.write_all(STREAM_HEAD.as_bytes()).expect("head");
        stream
            .write_all(&chunk("data: {\"n\":0}\n\n"))
            .expect("an event");
        // The client's close shows as the end of what it sends.
        let mut rest = Vec::new();
        let _ = stream.read_to_end(&mut rest);
        let _ = closed_tx.send(Instant::now());
    });
    let reply = send(route(&url), KEY, b"{}").await.expect("an answer");
    let mut body = reply.body;
    let first = body.chunk().await.expect("read").expect("a batch");
    assert!(first.starts_with(b"data: {\"n\":0}"));
    let dropped = Instant::now();
    drop(body);
    let seen = closed
        .recv_timeout(Duration::from_secs(5))
        .expect("the server saw the connection close");
    assert!(seen.duration_since(dropped) < Duration::from_secs(2));
}

#[tokio::test]
async fn a_cut_stream_passes_on_what_came_then_fails() {
    let (url, _) = server(|_, mut stream| {
        if read_request(&mut stream).is_some() {
            stream.write_all(STREAM_HEAD.as_bytes()).expect("head");
            stream
                .write_all(&chunk("data: {\"n\":0}\n\n"))
                .expect("an event");
            stream.write_all(b"40\r\ndata: half").expect("half a chunk");
        }
    });
    let reply = send(route(&url), KEY, b"{}").await.expect("an answer");
    let (body, error) = read_all(reply.body).await;
    assert!(body.starts_with(b"data: {\"n\":0}\n\n"), "{body:?}");
    let error = error.expect("a failure");
    let text = match &error {
        WireError::Direct(e) => e.to_string(),
        WireError::Http(e) => panic!("through reqwest: {e}"),
    };
    assert!(text.contains("broke while reading"), "{text}");
}

#[tokio::test]
async fn a_server_that_is_not_http_is_a_clear_error_without_the_key() {
    let (url, _) = server(|_, mut stream| {
        if read_request(&mut stream).is_some() {
            let _ = stream.write_all(b"SSH-2.0-OpenSSH_9.6\r\n\r\n");
        }
    });
    match send(route(&url), KEY, b"{}").await {
        Err(SendError::Direct(e)) => {
            let text = e.to_string();
            assert!(text.contains("malformed response"), "{text}");
            assert!(!text.contains(KEY));
        }
        Err(other) => panic!("another failure: {other:?}"),
        Ok(reply) => panic!("an answer: {}", reply.status),
    }
}

#[tokio::test]
async fn an_error_status_comes_with_its_body_and_headers() {
    let (url, _) = server(|_, mut stream| {
        if read_request(&mut stream).is_some() {
            let body = "{\"error\":{\"message\":\"slow down\"}}";
            let _ = write!(
                stream,
                "HTTP/1.1 429 Too Many Requests\r\nretry-after: 7\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    let reply = send(route(&url), KEY, b"{}").await.expect("an answer");
    assert_eq!(reply.status.as_u16(), 429);
    assert_eq!(
        reply
            .headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("7")
    );
    let (body, error) = read_all(reply.body).await;
    assert!(error.is_none(), "{error:?}");
    assert_eq!(body, b"{\"error\":{\"message\":\"slow down\"}}");
}

#[tokio::test]
async fn a_refused_connection_names_the_origin() {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("an address").port();
    drop(listener);
    let url = format!("http://127.0.0.1:{port}/v1/chat/completions");
    match send(route(&url), KEY, b"{}").await {
        Err(SendError::Direct(e @ Error::Connect { .. })) => {
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("could not connect to http://127.0.0.1:{port}")),
                "{text}"
            );
        }
        Err(other) => panic!("another failure: {other:?}"),
        Ok(reply) => panic!("an answer: {}", reply.status),
    }
}

#[test]
fn a_proxy_a_user_or_another_scheme_goes_through_reqwest() {
    assert!(Route::of("https://api.deepseek.com/chat/completions", true).is_some());
    assert!(Route::of("https://api.deepseek.com/chat/completions", false).is_none());
    assert!(Route::of("https://user:pw@api.deepseek.com/chat/completions", true).is_none());
    assert!(Route::of("ftp://api.deepseek.com/chat/completions", true).is_none());
    let target = target_of("https://[::1]:8443/v1/chat?x=1").expect("a target");
    assert_eq!(
        target,
        Target {
            tls: true,
            host: "[::1]".into(),
            port: 8443,
            path: "/v1/chat?x=1".into(),
        }
    );
}

/// A TLS server on 127.0.0.1 with the test authority's certificate for `localhost`; it tells
/// each request's length.
fn tls_server(events: usize) -> (String, std_mpsc::Receiver<usize>) {
    let leaf = include_bytes!("testdata/leaf.der").to_vec();
    let key = include_bytes!("testdata/leaf.key.der").to_vec();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![rustls::pki_types::CertificateDer::from(leaf)],
            rustls::pki_types::PrivateKeyDer::Pkcs8(key.into()),
        )
        .expect("the test certificate");
    let config = Arc::new(config);
    let (lengths_tx, lengths) = std_mpsc::channel();
    let lengths_tx = std::sync::Mutex::new(lengths_tx);
    let (url, _) = server(move |_, stream| {
        let Ok(conn) = rustls::ServerConnection::new(config.clone()) else {
            return;
        };
        let mut tls = rustls::StreamOwned::new(conn, stream);
        while let Some(request) = read_request(&mut tls) {
            let _ = lengths_tx.lock().expect("the lengths").send(request.len());
            answer_stream(&mut tls, events);
        }
    });
    (
        url.replace("http://127.0.0.1", "https://localhost"),
        lengths,
    )
}

#[tokio::test]
async fn a_tls_stream_is_read_against_the_roots_and_refused_without_them() {
    let (url, lengths) = tls_server(25);
    let roots = Roots::only(&[include_bytes!("testdata/ca.der").to_vec()]);
    let trusted = Route::with_roots(&url, roots).expect("a route");
    // A long conversation's request is far larger than what rustls takes at once (64 KiB).
    let large = vec![b'x'; 300 * 1024];
    for body in [&b"{}"[..], &large] {
        let reply = send(trusted.clone(), KEY, body).await.expect("an answer");
        let (answer, error) = read_all(reply.body).await;
        assert!(error.is_none(), "{error:?}");
        assert_eq!(String::from_utf8(answer).expect("text"), events_text(25));
        let length = lengths
            .recv_timeout(Duration::from_secs(5))
            .expect("the request");
        assert!(length > body.len(), "the whole body arrived: {length}");
    }
    // The built-in roots do not know the test authority.
    match send(route(&url), KEY, b"{}").await {
        Err(SendError::Direct(e @ Error::Connect { .. })) => {
            let text = e.to_string();
            assert!(text.contains("certificate"), "{text}");
            assert!(!text.contains(KEY));
        }
        Err(other) => panic!("another failure: {other:?}"),
        Ok(reply) => panic!("an untrusted server answered: {}", reply.status),
    }
}
