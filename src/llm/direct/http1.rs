//! HTTP/1.1 as the direct stream speaks it: the request's bytes, the response's head, and a
//! body decoded as it arrives (chunked, of a length, or up to the connection's close).

use bytes::BytesMut;
use reqwest::StatusCode;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

/// The most a response's head may weigh: a server that sends more is not a model server.
pub(super) const HEAD_CAP: usize = 64 * 1024;

/// The most a chunk's size line (with its extensions) or the trailers may weigh.
const LINE_CAP: usize = 4 * 1024;

/// Where the request goes: the connection's end and the request line's parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Target {
    /// Whether the connection is TLS (`https`).
    pub tls: bool,
    /// The host as in the URL (an IPv6 address in brackets).
    pub host: String,
    /// The port, the scheme's own when the URL names none.
    pub port: u16,
    /// The path and query.
    pub path: String,
}

impl Target {
    /// The origin, for messages: `https://api.deepseek.com`.
    pub fn origin(&self) -> String {
        let scheme = if self.tls { "https" } else { "http" };
        if self.port == self.default_port() {
            format!("{scheme}://{}", self.host)
        } else {
            format!("{scheme}://{}:{}", self.host, self.port)
        }
    }

    fn default_port(&self) -> u16 {
        if self.tls { 443 } else { 80 }
    }

    /// The `Host` header's value.
    fn authority(&self) -> String {
        if self.port == self.default_port() {
            self.host.clone()
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// A request that cannot be written: a header value with a control character (a key pasted
/// with a line break, say, which would otherwise add lines of its own to the request).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadHeader(pub &'static str);

/// Whether `value` may stand in a header: visible ASCII, spaces and tabs (what `HeaderValue`
/// accepts, minus the bytes above ASCII).
fn header_safe(value: &str) -> bool {
    value
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
}

/// The bytes of a streamed chat's `POST`: `key` as a bearer token unless empty, `body` as JSON.
pub(crate) fn request(target: &Target, key: &str, body: &[u8]) -> Result<Vec<u8>, BadHeader> {
    if !header_safe(key) {
        return Err(BadHeader(
            "the API key holds a character a header cannot carry",
        ));
    }
    if !header_safe(&target.path) || !header_safe(&target.host) {
        return Err(BadHeader(
            "the URL holds a character a request line cannot carry",
        ));
    }
    let mut out = Vec::with_capacity(256 + body.len());
    out.extend_from_slice(b"POST ");
    out.extend_from_slice(target.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\nhost: ");
    out.extend_from_slice(target.authority().as_bytes());
    if !key.is_empty() {
        out.extend_from_slice(b"\r\nauthorization: Bearer ");
        out.extend_from_slice(key.as_bytes());
    }
    out.extend_from_slice(b"\r\naccept: text/event-stream\r\ncontent-type: application/json");
    out.extend_from_slice(format!("\r\ncontent-length: {}\r\n\r\n", body.len()).as_bytes());
    out.extend_from_slice(body);
    Ok(out)
}

/// How a response's body is delimited.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Framing {
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// `Content-Length`.
    Length(u64),
    /// Up to the connection's close.
    UntilClose,
    /// No body (204, 304).
    Empty,
}

/// A response's head.
#[derive(Debug)]
pub(crate) struct Head {
    /// The status.
    pub status: StatusCode,
    /// The headers (names lower-cased; values the server's bytes).
    pub headers: HeaderMap,
    /// How the body is delimited.
    pub framing: Framing,
    /// Whether the connection closes after this response.
    pub close: bool,
}

/// Why a response could not be read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Malformed(pub String);

/// Parses a response head from the start of `buf`: the head and the bytes it took, `None`
/// while it is incomplete (more must be read).
pub(crate) fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, Malformed> {
    let mut slots = [httparse::EMPTY_HEADER; 128];
    let mut response = httparse::Response::new(&mut slots);
    let used = match response.parse(buf) {
        Ok(httparse::Status::Complete(used)) => used,
        Ok(httparse::Status::Partial) if buf.len() >= HEAD_CAP => {
            return Err(Malformed(format!("a response head over {HEAD_CAP} bytes")));
        }
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Malformed(format!("a bad response head ({e})"))),
    };
    let code = response.code.unwrap_or(0);
    let status =
        StatusCode::from_u16(code).map_err(|_| Malformed(format!("a bad status code ({code})")))?;
    let mut headers = HeaderMap::new();
    for h in response.headers.iter() {
        // A name or value the `http` types refuse is dropped: none of the ones read here is.
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(h.name.as_bytes()),
            HeaderValue::from_bytes(h.value),
        ) {
            headers.append(name, value);
        }
    }
    let tokens = |name: &str| -> Vec<String> {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','))
            .map(|t| t.trim().to_ascii_lowercase())
            .filter(|t| !t.is_empty())
            .collect()
    };
    let connection = tokens("connection");
    let http10 = response.version == Some(0);
    let close = connection.iter().any(|t| t == "close")
        || (http10 && !connection.iter().any(|t| t == "keep-alive"));
    let coding = tokens("transfer-encoding");
    let framing = if status.is_informational() || code == 204 || code == 304 {
        Framing::Empty
    } else if !coding.is_empty() {
        // Chunked must be the last coding; anything else is read to the close (RFC 9112 6.3).
        if coding.last().is_some_and(|c| c == "chunked") && coding.len() == 1 {
            Framing::Chunked
        } else {
            Framing::UntilClose
        }
    } else {
        let lengths: Vec<String> = tokens("content-length");
        match lengths.first() {
            None => Framing::UntilClose,
            Some(first) => {
                if lengths.iter().any(|l| l != first) {
                    return Err(Malformed("conflicting content lengths".into()));
                }
                let length = first
                    .parse()
                    .map_err(|_| Malformed(format!("a bad content length ({first})")))?;
                Framing::Length(length)
            }
        }
    };
    Ok(Some((
        Head {
            status,
            headers,
            framing,
            close: close || framing == Framing::UntilClose,
        },
        used,
    )))
}

/// A body being decoded: what of it is still to come.
#[derive(Clone, Debug)]
pub(crate) struct Decoder {
    state: State,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// A chunk's size line: the size so far, its digits, whether an extension began, the
    /// line's length.
    Size {
        size: u64,
        digits: u8,
        ext: bool,
        len: usize,
    },
    /// A size line's line feed.
    SizeLf {
        size: u64,
    },
    /// A chunk's data, this much of it still to come.
    Data(u64),
    /// The line break after a chunk's data.
    DataCr,
    DataLf,
    /// The trailers after the last chunk: the current line's length, all of theirs.
    Trailer {
        line: usize,
        all: usize,
    },
    /// A length-delimited body's bytes still to come.
    Length(u64),
    /// Everything up to the close is body.
    UntilClose,
    /// The body is complete.
    Done,
}

impl Decoder {
    /// A decoder for a body framed as `framing`.
    pub fn new(framing: Framing) -> Self {
        let state = match framing {
            Framing::Chunked => State::Size {
                size: 0,
                digits: 0,
                ext: false,
                len: 0,
            },
            Framing::Length(0) | Framing::Empty => State::Done,
            Framing::Length(n) => State::Length(n),
            Framing::UntilClose => State::UntilClose,
        };
        Self { state }
    }

    /// Whether the body is complete.
    pub fn done(&self) -> bool {
        self.state == State::Done
    }

    /// Whether the body ends with the connection's close (so a close is its proper end).
    pub fn until_close(&self) -> bool {
        self.state == State::UntilClose
    }

    /// Decodes `input`, appending the body's bytes to `out`; returns how much of `input` was
    /// used (less than all only once the body is complete).
    pub fn decode(&mut self, input: &[u8], out: &mut BytesMut) -> Result<usize, Malformed> {
        let mut at = 0;
        while at < input.len() {
            let rest = &input[at..];
            match &mut self.state {
                State::Done => break,
                State::UntilClose => {
                    out.extend_from_slice(rest);
                    at = input.len();
                }
                State::Length(n) | State::Data(n) => {
                    let take = rest.len().min(usize::try_from(*n).unwrap_or(usize::MAX));
                    out.extend_from_slice(&rest[..take]);
                    at += take;
                    *n -= take as u64;
                    if *n == 0 {
                        self.state = match self.state {
                            State::Length(_) => State::Done,
                            _ => State::DataCr,
                        };
                    }
                }
                State::Size {
                    size,
                    digits,
                    ext,
                    len,
                } => {
                    let b = rest[0];
                    at += 1;
                    *len += 1;
                    if *len > LINE_CAP {
                        return Err(Malformed("a chunk size line without an end".into()));
                    }
                    let size = *size;
                    match b {
                        b'\r' | b'\n' if *digits == 0 => {
                            return Err(Malformed("a chunk without a size".into()));
                        }
                        b'\r' => self.state = State::SizeLf { size },
                        b'\n' => self.state = after_size(size),
                        _ if *ext => {}
                        b';' | b' ' | b'\t' if *digits > 0 => *ext = true,
                        _ => {
                            let digit = (b as char).to_digit(16).ok_or_else(|| {
                                Malformed(format!("a bad chunk size (byte {b:#04x})"))
                            })?;
                            if *digits >= 15 {
                                return Err(Malformed("a chunk size too large".into()));
                            }
                            self.state = State::Size {
                                size: size * 16 + u64::from(digit),
                                digits: *digits + 1,
                                ext: false,
                                len: *len,
                            };
                        }
                    }
                }
                State::SizeLf { size } => {
                    if rest[0] != b'\n' {
                        return Err(Malformed("a chunk size line without its line feed".into()));
                    }
                    at += 1;
                    self.state = after_size(*size);
                }
                State::DataCr => {
                    at += 1;
                    self.state = match rest[0] {
                        b'\r' => State::DataLf,
                        b'\n' => chunk_start(),
                        _ => return Err(Malformed("a chunk longer than its size".into())),
                    };
                }
                State::DataLf => {
                    if rest[0] != b'\n' {
                        return Err(Malformed("a chunk longer than its size".into()));
                    }
                    at += 1;
                    self.state = chunk_start();
                }
                State::Trailer { line, all } => {
                    let b = rest[0];
                    at += 1;
                    *all += 1;
                    if *all > LINE_CAP {
                        return Err(Malformed("trailers without an end".into()));
                    }
                    match b {
                        b'\r' => {}
                        b'\n' if *line == 0 => self.state = State::Done,
                        b'\n' => *line = 0,
                        _ => *line += 1,
                    }
                }
            }
        }
        Ok(at)
    }
}

fn chunk_start() -> State {
    State::Size {
        size: 0,
        digits: 0,
        ext: false,
        len: 0,
    }
}

/// What follows a size line: the chunk's data, or the trailers after the last chunk.
fn after_size(size: u64) -> State {
    if size == 0 {
        State::Trailer { line: 0, all: 0 }
    } else {
        State::Data(size)
    }
}

#[cfg(test)]
mod tests;
