//! A streamed chat read straight from its socket over HTTP/1.1, on a thread of its own.
//!
//! Through reqwest, hyper hands a chunked body over one HTTP chunk at a time, from the
//! connection's task to the body's reader. A fast stream sends each event as its own chunk,
//! about 2,000 a second, and those hand-offs were about 12% of the program's CPU samples
//! while an answer streamed. Here one thread per request waits on the socket (`poll`), takes what is
//! there with one read, decodes the chunks into one batch and passes it on; between reads it
//! sleeps at the pace `reply` sets, and no runtime is woken by the packets.
//!
//! It is taken when nothing asks for more than a plain connection: no proxy is configured, the
//! URL names no user, and the client resolves names as the system does. Anything else goes
//! through reqwest (see `wire`). TLS is rustls with the same built-in roots.

mod conn;
mod http1;

use std::io;
use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use tokio::sync::{mpsc, oneshot};

use self::conn::{Conn, ConnectError, Ready, Roots};
use self::http1::{Decoder, Head, Target};
use super::reply::{
    BATCH_CAP, Body, DirectError as Error, HAND_OVER_PACE, QUEUED_BATCHES, READ_PACE, Reply,
    SendError, WireError, ends_stream,
};

/// How long the body's end is waited for after the stream's last event, to keep the
/// connection for the next request.
const END_WAIT: Duration = Duration::from_secs(1);

/// The proxy variables reqwest reads: with any of them set, it sends the request.
const PROXY_VARIABLES: [&str; 6] = [
    "HTTP_PROXY",
    "http_proxy",
    "HTTPS_PROXY",
    "https_proxy",
    "ALL_PROXY",
    "all_proxy",
];

/// Where a streamed chat goes when it can go directly.
#[derive(Clone)]
pub(crate) struct Route {
    target: Target,
    roots: Roots,
}

impl Route {
    /// The direct route to `url`, or `None` when reqwest must send it (a proxy is configured,
    /// the URL names a user or is not `http`/`https`, or `system_names` is false: the client
    /// resolves names its own way).
    pub fn of(url: &str, system_names: bool) -> Option<Self> {
        let proxied = PROXY_VARIABLES
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|s| !s.is_empty()));
        if !system_names || proxied {
            return None;
        }
        Some(Self {
            target: target_of(url)?,
            roots: Roots::builtin(),
        })
    }

    /// The route to `url` checking TLS servers against `roots` alone (for tests).
    #[cfg(test)]
    fn with_roots(url: &str, roots: Roots) -> Option<Self> {
        Some(Self {
            target: target_of(url)?,
            roots,
        })
    }
}

/// The request line's and connection's parts of `url`, if it is a plain `http`/`https` one.
fn target_of(url: &str) -> Option<Target> {
    let url = reqwest::Url::parse(url).ok()?;
    let tls = match url.scheme() {
        "https" => true,
        "http" => false,
        _ => return None,
    };
    if !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    let path = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_string(),
    };
    Some(Target {
        tls,
        host: url.host_str()?.to_string(),
        port: url.port_or_known_default()?,
        path,
    })
}

/// Sends a streamed chat's `POST` of `body` along `route`, `key` as its bearer token (none
/// when empty), and returns the response's head; its body follows in batches. Dropping the
/// returned future, or the body, closes the connection.
pub(crate) async fn send(route: Route, key: &str, body: &[u8]) -> Result<Reply, SendError> {
    let request = http1::request(&route.target, key, body)
        .map_err(|bad| SendError::Direct(Error::Setup(bad.0)))?;
    let closer = Arc::new(Closer::default());
    let guard = CloseOnDrop(closer.clone());
    let (head_tx, head_rx) = oneshot::channel();
    let (batches, body) = mpsc::channel(QUEUED_BATCHES);
    let spawned = std::thread::Builder::new()
        .name("model-stream".into())
        .spawn(move || run(&route, &request, &closer, head_tx, &batches));
    if spawned.is_err() {
        return Err(SendError::Lost);
    }
    match head_rx.await {
        Ok(Ok(head)) => Ok(Reply {
            status: head.status,
            headers: head.headers,
            body: Body::direct(body, guard),
        }),
        Ok(Err(e)) => Err(SendError::Direct(e)),
        Err(_) => Err(SendError::Lost),
    }
}

/// Shuts the request's connection when its reader goes: a thread blocked on the socket wakes
/// to its close. Once the stream's last event was handed over, the reader's going leaves the
/// connection open: its thread reads the body's last bytes and keeps it for the next request.
#[derive(Default)]
struct Closer(Mutex<Watch>);

#[derive(Default)]
struct Watch {
    /// Another handle on the connection.
    sock: Option<TcpStream>,
    /// Whether the reader went.
    gone: bool,
    /// Whether the stream's last event was handed over.
    at_end: bool,
}

impl Closer {
    fn lock(&self) -> std::sync::MutexGuard<'_, Watch> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The reader went: the connection, if any, is shut unless the stream was at its end.
    fn close(&self) {
        let mut watch = self.lock();
        watch.gone = true;
        if !watch.at_end
            && let Some(sock) = watch.sock.take()
        {
            let _ = sock.shutdown(Shutdown::Both);
        }
    }

    /// Watches `sock` (another handle on the connection); `false` if the reader is gone.
    fn watch(&self, sock: TcpStream) -> bool {
        let mut watch = self.lock();
        if watch.gone {
            let _ = sock.shutdown(Shutdown::Both);
            return false;
        }
        watch.sock = Some(sock);
        true
    }

    /// The stream's last event is about to be handed over.
    fn at_end(&self) {
        self.lock().at_end = true;
    }

    /// Stops watching: the connection may be kept for another request unless the reader went
    /// before the stream's end.
    fn release(&self) -> bool {
        let mut watch = self.lock();
        watch.sock = None;
        !watch.gone || watch.at_end
    }

    /// Whether the reader went.
    fn gone(&self) -> bool {
        self.lock().gone
    }

    /// Whether the reader went before the stream's end.
    fn abandoned(&self) -> bool {
        let watch = self.lock();
        watch.gone && !watch.at_end
    }
}

/// Closes a request's connection when dropped (with the waiting future, then with the body).
struct CloseOnDrop(Arc<Closer>);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The request's thread: connects, asks, hands the head back, then passes the body on.
fn run(
    route: &Route,
    request: &[u8],
    closer: &Closer,
    head_tx: oneshot::Sender<Result<Head, Error>>,
    batches: &mpsc::Sender<Result<Bytes, WireError>>,
) {
    let origin = route.target.origin();
    let (mut conn, head, rest) = match ask(route, request, closer) {
        Ok(Some(asked)) => asked,
        Ok(None) => return,
        Err(e) => {
            let _ = head_tx.send(Err(e));
            return;
        }
    };
    let (framing, close) = (head.framing, head.close);
    if head_tx.send(Ok(head)).is_err() {
        return;
    }
    let mut reader = Reader {
        conn: &mut conn,
        closer,
        batches,
        decoder: Decoder::new(framing),
        raw: rest,
        handed_at: None,
    };
    match reader.pass_on() {
        Ok(Ended::Complete { extra }) if !close && !extra && closer.release() => conn::keep(conn),
        Ok(_) => conn.close(),
        Err(e) => {
            let _ = batches.blocking_send(Err(WireError::Direct(e.at(origin))));
            conn.close();
        }
    }
}

/// Gets a connection (a kept one first, a fresh one if the server had closed it) and sends the
/// request on it: the connection, the head, and the bytes read after it. `None` when the
/// reader went meanwhile.
fn ask(
    route: &Route,
    request: &[u8],
    closer: &Closer,
) -> Result<Option<(Conn, Head, Vec<u8>)>, Error> {
    let target = &route.target;
    let origin = target.origin();
    let mut kept = conn::take(target, &route.roots);
    loop {
        let mut conn = match kept.take() {
            Some(conn) => conn,
            None => Conn::open(target, &route.roots).map_err(|e| {
                let cause = match e {
                    ConnectError::Resolve(e) => format!("the name did not resolve ({e})"),
                    ConnectError::Io(e) => e.to_string(),
                };
                Error::Connect {
                    origin: origin.clone(),
                    cause,
                }
            })?,
        };
        let handle = match conn.handle() {
            Ok(handle) => handle,
            Err(e) => {
                conn.close();
                return Err(Error::Connect {
                    origin,
                    cause: e.to_string(),
                });
            }
        };
        if !closer.watch(handle) {
            conn.close();
            return Ok(None);
        }
        match exchange(&mut conn, request) {
            Ok((head, rest)) => return Ok(Some((conn, head, rest))),
            // A kept connection the server had closed: again on a fresh one. (As a browser
            // does, also when the request was written whole: no byte of an answer came, and a
            // server that closes a kept connection has not read what came after its close.)
            Err(Asked::Unanswered(_)) if conn.reused && !closer.abandoned() => conn.close(),
            Err(_) if closer.abandoned() => return Ok(None),
            Err(Asked::Unanswered(e)) => {
                return Err(Error::Request {
                    origin,
                    cause: e.to_string(),
                });
            }
            Err(Asked::Failed(failure)) => return Err(failure.at(origin)),
        }
    }
}

/// How an exchange failed.
enum Asked {
    /// The request was not sent, or the connection closed before any byte of the answer.
    Unanswered(io::Error),
    /// Part of the answer came.
    Failed(Failure),
}

/// Why a body (or a head) could not be read.
enum Failure {
    Io(io::Error),
    Malformed(String),
}

impl Failure {
    /// The failure as the caller is told it, naming the server at `origin`.
    fn at(self, origin: String) -> Error {
        match self {
            Self::Malformed(cause) => Error::Malformed { origin, cause },
            Self::Io(e) => Error::Broke {
                origin,
                cause: e.to_string(),
            },
        }
    }
}

/// Sends the request on `conn` and reads the response's head: the head and what followed it.
fn exchange(conn: &mut Conn, request: &[u8]) -> Result<(Head, Vec<u8>), Asked> {
    conn.send(request).map_err(Asked::Unanswered)?;
    let mut raw = Vec::new();
    loop {
        wait_readable(conn.socket(), None).map_err(|e| Asked::Failed(Failure::Io(e)))?;
        match conn.read_ready(&mut raw) {
            Ok(Ready::Read) => {}
            Ok(Ready::Nothing) => continue,
            Ok(Ready::Closed) if raw.is_empty() => {
                return Err(Asked::Unanswered(io::Error::new(
                    io::ErrorKind::ConnectionAborted,
                    "the server closed the connection without answering",
                )));
            }
            Ok(Ready::Closed) => {
                return Err(Asked::Failed(Failure::Malformed(
                    "the connection closed inside the response's head".into(),
                )));
            }
            Err(e) if raw.is_empty() => return Err(Asked::Unanswered(e)),
            Err(e) => return Err(Asked::Failed(Failure::Io(e))),
        }
        // Informational answers (`100 Continue`) come before the real one.
        while let Some((head, used)) =
            http1::parse_head(&raw).map_err(|m| Asked::Failed(Failure::Malformed(m.0)))?
        {
            raw.drain(..used);
            if !head.status.is_informational() {
                return Ok((head, raw));
            }
        }
    }
}

/// How a body's reading ended.
enum Ended {
    /// At its end: whether bytes followed it (the connection cannot be used again then).
    Complete { extra: bool },
    /// The reader went.
    Abandoned,
}

/// A body being passed on in batches.
struct Reader<'a> {
    conn: &'a mut Conn,
    closer: &'a Closer,
    batches: &'a mpsc::Sender<Result<Bytes, WireError>>,
    decoder: Decoder,
    /// Bytes read and not decoded yet.
    raw: Vec<u8>,
    /// When the last batch was handed over.
    handed_at: Option<Instant>,
}

impl Reader<'_> {
    /// Reads the body to its end, a batch each time the socket has something and the pace
    /// allows; a batch read before its hand-over is due is held and joined to the next.
    fn pass_on(&mut self) -> Result<Ended, Failure> {
        let mut batch = BytesMut::new();
        let mut closed = false;
        let mut read_some = false;
        // Once the stream's last event is handed over, how long the body's end is waited for.
        let mut end_by = None;
        loop {
            let mut extra = false;
            if !self.raw.is_empty() {
                let used = self
                    .decoder
                    .decode(&self.raw, &mut batch)
                    .map_err(|m| Failure::Malformed(m.0))?;
                extra = used < self.raw.len();
                self.raw.clear();
            }
            let complete = self.decoder.done() || (closed && self.decoder.until_close());
            if closed && !complete {
                // Whatever came is passed on before the failure.
                if !batch.is_empty() && !self.hand_over(&mut batch) {
                    return Ok(Ended::Abandoned);
                }
                return Err(Failure::Io(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the server closed the connection before the response's end",
                )));
            }
            let now = Instant::now();
            let due = self.handed_at.is_none_or(|at| now >= at + HAND_OVER_PACE);
            let last = ends_stream(&batch);
            if !batch.is_empty() && (complete || due || last || batch.len() >= BATCH_CAP) {
                if last && end_by.is_none() {
                    self.closer.at_end();
                    end_by = Some(now + END_WAIT);
                }
                if !self.hand_over(&mut batch) {
                    return Ok(Ended::Abandoned);
                }
            }
            if complete {
                return Ok(Ended::Complete { extra });
            }
            if std::mem::take(&mut read_some) && end_by.is_none() {
                // What arrives in the next moments waits in the socket and is taken in one
                // read (see `reply::READ_PACE`).
                std::thread::sleep(READ_PACE);
            }
            let now = Instant::now();
            // Held text waits no longer than its hand-over: a stream that pauses shows what it
            // sent before the pause.
            let held = (!batch.is_empty()).then(|| {
                self.handed_at.map_or(Duration::ZERO, |at| {
                    (at + HAND_OVER_PACE).saturating_duration_since(now)
                })
            });
            let ending = end_by.map(|by: Instant| by.saturating_duration_since(now));
            let wait = match (held, ending) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if !wait_readable(self.conn.socket(), wait).map_err(Failure::Io)? {
                if end_by.is_some_and(|by| Instant::now() >= by) {
                    // The body did not end: abandoned if its reader went, read on otherwise
                    // (a text that only looked like the last event).
                    if self.closer.gone() {
                        return Ok(Ended::Abandoned);
                    }
                    end_by = None;
                }
                continue;
            }
            if self.closer.abandoned() {
                return Ok(Ended::Abandoned);
            }
            match self.conn.read_ready(&mut self.raw).map_err(Failure::Io)? {
                Ready::Read => read_some = true,
                Ready::Nothing => {}
                Ready::Closed => closed = true,
            }
        }
    }

    /// Hands `batch` over (leaving it empty); `false` when the reader is gone.
    fn hand_over(&mut self, batch: &mut BytesMut) -> bool {
        self.handed_at = Some(Instant::now());
        let bytes = batch.split().freeze();
        self.batches.blocking_send(Ok(bytes)).is_ok()
    }
}

/// Waits until `sock` has something to read (or was closed), at most `timeout`: whether it has.
fn wait_readable(sock: &TcpStream, timeout: Option<Duration>) -> io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let timeout = timeout.map(|t| {
        Timespec::try_from(t).unwrap_or(Timespec {
            tv_sec: i64::MAX,
            tv_nsec: 0,
        })
    });
    loop {
        let mut fds = [PollFd::new(sock, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(n) => return Ok(n > 0),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests;
