//! A scripted OpenAI-compatible model server on 127.0.0.1: each request takes the next reply of
//! the script and is recorded, so tests can assert what the client sent.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One piece of a streamed body.
#[derive(Clone, Debug)]
pub enum Piece {
    /// Bytes written as they are.
    Bytes(Vec<u8>),
    /// A pause before the next piece.
    Pause(Duration),
    /// Write what came before now, without waiting (a read may end here).
    Flush,
    /// Wait until this long after the reply began (keeps a rate exact over a long stream).
    At(Duration),
    /// Print `LABEL <unix ms>` on stdout when reached (benchmarks time the stream by it).
    Note(String),
    /// Hold the stream here until the condition holds (for at most `super::wait::WAIT`): what a
    /// test must see while a turn runs, it sees before the turn can go on.
    Until(Until),
}

/// A condition a stream waits on (`SseBuilder::until`), looked at every few milliseconds.
#[derive(Clone)]
pub struct Until {
    what: String,
    ready: Arc<dyn Fn() -> bool + Send + Sync>,
}

impl Until {
    /// Waits until `ready` holds; `what` names it if it never does.
    pub fn new(what: &str, ready: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        Self {
            what: what.to_string(),
            ready: Arc::new(ready),
        }
    }
}

impl std::fmt::Debug for Until {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Until({:?})", self.what)
    }
}

/// A gate the test opens: a stream held at `gate.until()` goes on once `open` is called.
#[derive(Clone, Debug, Default)]
pub struct Gate(Arc<AtomicBool>);

impl Gate {
    /// A closed gate.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lets the streams held at it go on.
    pub fn open(&self) {
        self.0.store(true, Ordering::SeqCst);
    }

    /// The condition a stream waits on: the gate open.
    pub fn until(&self, what: &str) -> Until {
        let open = self.0.clone();
        Until::new(what, move || open.load(Ordering::SeqCst))
    }
}

/// What the server answers to one request.
#[derive(Clone, Debug)]
pub enum Reply {
    /// `200 text/event-stream` with these pieces, then the connection closes.
    Stream(Vec<Piece>),
    /// Any status with headers and a body (e.g. a JSON error).
    Status {
        /// HTTP status.
        status: u16,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: String,
    },
    /// Accept the request and send nothing until the client gives up.
    Hang,
}

impl Reply {
    /// A DeepSeek-shaped JSON error.
    pub fn error(status: u16, message: &str) -> Self {
        Reply::Status {
            status,
            headers: vec![],
            body: serde_json::json!({"error": {"message": message, "type": "error", "param": null, "code": null}}).to_string(),
        }
    }

    /// A JSON error with a `Retry-After` header (seconds).
    pub fn error_retry_after(status: u16, message: &str, seconds: u64) -> Self {
        match Self::error(status, message) {
            Reply::Status { status, body, .. } => Reply::Status {
                status,
                headers: vec![("Retry-After".into(), seconds.to_string())],
                body,
            },
            other => other,
        }
    }

    /// A stream body that is the contents of a recorded `.sse` file.
    pub fn raw_sse(text: &str) -> Self {
        Reply::Stream(vec![Piece::Bytes(text.as_bytes().to_vec())])
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// `POST`, ...
    pub method: String,
    /// `/chat/completions`, ...
    pub path: String,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    /// The raw body.
    pub body: String,
}

impl RecordedRequest {
    /// The body parsed as JSON (`Null` if it is not).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Tells requests apart (e.g. a compaction's summary request).
type Matcher = Box<dyn Fn(&RecordedRequest) -> bool + Send>;
/// Makes the reply to a matched request.
type Responder = Box<dyn Fn(&RecordedRequest) -> Reply + Send>;

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    /// Requests these match are answered by their responder, not from the script.
    routes: Vec<(Matcher, Responder)>,
    requests: Vec<RecordedRequest>,
    /// Keys `GET /models` answers 401 to.
    refused_keys: Vec<String>,
}

/// The running server; it stops when dropped (its task is aborted).
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Mutex<Shared>>,
    task: tokio::task::JoinHandle<()>,
}

impl MockServer {
    /// Starts a server on a free port of 127.0.0.1 answering requests with `script` in order.
    /// A request past the end of the script gets a 500 that says so.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Mutex::new(Shared {
            script: script.into(),
            ..Shared::default()
        }));
        let s = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, s.clone()));
            }
        });
        Self { addr, shared, task }
    }

    /// Starts it on its own runtime thread, for tests that are not async (e.g. driving a binary).
    pub fn start_blocking(script: Vec<Reply>) -> (Self, tokio::runtime::Runtime) {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let server = rt.block_on(Self::start(script));
        (server, rt)
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Adds replies to the end of the script.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().unwrap().script.push_back(reply);
    }

    /// Every request so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// Makes `GET /models` answer 401 to `key` (every other key gets the model list).
    pub fn refuse_key(&self, key: &str) {
        self.shared
            .lock()
            .unwrap()
            .refused_keys
            .push(key.to_string());
    }

    /// Answers the requests `when` matches with `reply`, whenever they come, leaving the
    /// script to the others.
    pub fn route(
        &self,
        when: impl Fn(&RecordedRequest) -> bool + Send + 'static,
        reply: impl Fn(&RecordedRequest) -> Reply + Send + 'static,
    ) {
        self.shared
            .lock()
            .unwrap()
            .routes
            .push((Box::new(when), Box::new(reply)));
    }

    /// How many scripted replies are left.
    pub fn remaining(&self) -> usize {
        self.shared.lock().unwrap().script.len()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut socket: TcpStream, shared: Arc<Mutex<Shared>>) {
    // As the servers in front of the real APIs do (nginx, Go's net/http, Cloudflare): each
    // event leaves when it is written, not held back by Nagle's algorithm until the client's
    // acknowledgement of the one before (which let a client that reads seldom receive seldom).
    let _ = socket.set_nodelay(true);
    loop {
        let Some(request) = read_request(&mut socket).await else {
            return;
        };
        let reply = {
            let mut s = shared.lock().unwrap();
            // `GET /models` (a key check) is answered apart from the script.
            let models = (request.method == "GET" && request.path == "/models")
                .then(|| models_reply(&request, &s.refused_keys));
            let routed = s
                .routes
                .iter()
                .find(|(when, _)| when(&request))
                .map(|(_, reply)| reply(&request));
            s.requests.push(request);
            models.or(routed).or_else(|| s.script.pop_front())
        };
        let reply = reply
            .unwrap_or_else(|| Reply::error(500, "the mock server has no more scripted replies"));
        let keep_open = write_reply(&mut socket, reply).await;
        if !keep_open {
            return;
        }
    }
}

/// The answer to `GET /models`: the model list, or 401 for a refused (or missing) key.
fn models_reply(request: &RecordedRequest, refused: &[String]) -> Reply {
    let key = request
        .header("authorization")
        .and_then(|v| v.strip_prefix("Bearer "));
    match key {
        Some(key) if !refused.iter().any(|r| r == key) => Reply::Status {
            status: 200,
            headers: vec![],
            body: serde_json::json!({"object": "list", "data": [
                {"id": "deepseek-v4-flash", "object": "model", "owned_by": "deepseek"},
                {"id": "deepseek-v4-pro", "object": "model", "owned_by": "deepseek"},
            ]})
            .to_string(),
        },
        _ => Reply::error(401, "Authentication Fails, Your api key is invalid"),
    }
}

async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(pos) = find(&buf, b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split_whitespace();
    let method = first.next()?.to_string();
    let path = first.next()?.to_string();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(RecordedRequest {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).to_string(),
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Writes the reply; returns whether the connection may serve another request.
async fn write_reply(socket: &mut TcpStream, reply: Reply) -> bool {
    match reply {
        Reply::Status {
            status,
            headers,
            body,
        } => {
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
                reason(status),
                body.len()
            );
            for (k, v) in headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let ok = socket.write_all(head.as_bytes()).await.is_ok()
                && socket.write_all(body.as_bytes()).await.is_ok();
            ok && socket.flush().await.is_ok()
        }
        Reply::Stream(pieces) => {
            // Chunked transfer encoding, as real servers stream; the end is a clean last chunk,
            // so a body without `[DONE]` is a protocol-clean close the client must notice.
            let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nTransfer-Encoding: chunked\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return false;
            }
            let began = tokio::time::Instant::now();
            // Chunks between two pauses go out in one write, as they would arrive from a real
            // server over a network (each is still its own HTTP chunk).
            let mut pending: Vec<u8> = Vec::new();
            for piece in pieces {
                if !matches!(piece, Piece::Bytes(_)) && !pending.is_empty() {
                    if socket.write_all(&pending).await.is_err() || socket.flush().await.is_err() {
                        return false;
                    }
                    pending.clear();
                }
                match piece {
                    Piece::Flush => {}
                    Piece::Pause(d) => tokio::time::sleep(d).await,
                    Piece::At(d) => tokio::time::sleep_until(began + d).await,
                    Piece::Until(until) => {
                        let start = Instant::now();
                        while !(until.ready)() {
                            if start.elapsed() > super::wait::WAIT {
                                eprintln!("the mock server waited in vain for {}", until.what);
                                break;
                            }
                            tokio::time::sleep(Duration::from_millis(10)).await;
                        }
                    }
                    Piece::Note(label) => {
                        let ms = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_millis());
                        println!("{label} {ms}");
                    }
                    Piece::Bytes(b) if b.is_empty() => {}
                    Piece::Bytes(b) => {
                        pending.extend_from_slice(format!("{:x}\r\n", b.len()).as_bytes());
                        pending.extend_from_slice(&b);
                        pending.extend_from_slice(b"\r\n");
                    }
                }
            }
            pending.extend_from_slice(b"0\r\n\r\n");
            socket.write_all(&pending).await.is_ok() && socket.flush().await.is_ok()
        }
        Reply::Hang => {
            tokio::time::sleep(Duration::from_secs(3600)).await;
            false
        }
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
