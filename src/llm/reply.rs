//! What a streamed response hands its reader, however it was read (directly, see
//! `direct`, or through reqwest, see `wire`): its head, its body in batches,
//! why it failed, and the pace a fast stream's batches come at.

use std::time::Duration;

use bytes::Bytes;
use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use tokio::sync::mpsc;

/// How often a fast stream is read. Events that arrive closer together than this are taken in
/// one batch: each batch wakes the reading thread, which on a virtual machine costs more than
/// the events' work, while text shown 10 ms later is not seen. A stream's last text waits at
/// most this pace before it is read: the budget from the last byte to the screen is 33 ms, and
/// tmux alone takes 16-18 ms to show a line. (At 20 and 15 ms the last line's lag reached 44
/// and 34 ms, by where the stream's end fell between reads.) A stream slower than this is read
/// as each event arrives.
pub(crate) const READ_PACE: Duration = Duration::from_millis(10);

/// How often a fast stream's batches are handed over: what is read between hand-overs is held
/// and joined to the next batch, so the program's thread wakes once per frame (every fifth
/// read, 20 frames a second; streamed text is drawn at most every 33 ms) while the connection
/// is still read at [`READ_PACE`]. Fewer frames pay for the extra reads: with reads every 10 ms
/// this costs no more than reads every 15 ms handed over every 45. The body's end, its failure,
/// an event stream's last event, a batch that fills [`BATCH_CAP`], and a batch after a quiet
/// spell are handed over at once: a stream's last text waits for no hand-over, and a slow
/// stream's events come as they arrive.
pub(crate) const HAND_OVER_PACE: Duration = Duration::from_millis(50);

/// How far from a batch's end an event stream's `data: [DONE]` is looked for (it may be
/// followed by blank lines, CRLF or not).
const DONE_TAIL: usize = 32;

/// The most a batch holds: a burst (a server that sends everything at once) is passed on in
/// pieces this size rather than gathered whole.
pub(crate) const BATCH_CAP: usize = 256 * 1024;

/// Batches held for a caller that is behind; past them the connection is not read (the server
/// is held back by TCP) until the caller catches up.
pub(crate) const QUEUED_BATCHES: usize = 16;

/// A response's status and headers, and its body as it arrives.
pub(crate) struct Reply {
    /// The response's status.
    pub status: StatusCode,
    /// The response's headers.
    pub headers: HeaderMap,
    /// The body, in batches.
    pub body: Body,
}

/// A response body, passed on in batches; dropping it closes the connection.
pub(crate) struct Body {
    batches: mpsc::Receiver<Result<Bytes, WireError>>,
    /// What closes a direct stream's connection when the body goes.
    _closer: Option<Box<dyn Send + Sync>>,
}

impl Body {
    /// The body of a direct stream, whose connection `closer` shuts.
    pub(super) fn direct(
        batches: mpsc::Receiver<Result<Bytes, WireError>>,
        closer: impl Send + Sync + 'static,
    ) -> Self {
        Self {
            batches,
            _closer: Some(Box::new(closer)),
        }
    }

    /// The body of a response read through reqwest.
    pub(super) fn reqwest(batches: mpsc::Receiver<Result<Bytes, WireError>>) -> Self {
        Self {
            batches,
            _closer: None,
        }
    }

    /// The next batch, `None` at the body's end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, WireError> {
        self.batches.recv().await.transpose()
    }
}

/// Why a body could not be read to its end.
#[derive(Debug)]
pub(crate) enum WireError {
    /// Read through reqwest.
    Http(reqwest::Error),
    /// Read directly (see `direct`).
    Direct(DirectError),
}

/// Why no response came.
#[derive(Debug)]
pub(crate) enum SendError {
    /// The request failed: it could not be built, connected or sent, or the head was bad.
    Http(reqwest::Error),
    /// The direct stream failed before its head (see `direct`).
    Direct(DirectError),
    /// The request was dropped without an answer (its task or thread ended).
    Lost,
}

/// Why a direct stream (see `direct`) failed.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum DirectError {
    /// The request could not be written (a key with a line break, say).
    #[error("the request could not be made: {0}")]
    Setup(&'static str),
    /// No connection could be made (a name that does not resolve, a refusal, TLS).
    #[error("could not connect to {origin}: {cause}")]
    Connect { origin: String, cause: String },
    /// The request could not be sent, or no answer came before the connection closed.
    #[error("the request to {origin} failed: {cause}")]
    Request { origin: String, cause: String },
    /// The connection broke while the answer was read.
    #[error("the connection to {origin} broke while reading the response: {cause}")]
    Broke { origin: String, cause: String },
    /// The server's bytes were not HTTP/1.1.
    #[error("the model server at {origin} sent a malformed response: {cause}")]
    Malformed { origin: String, cause: String },
}

impl DirectError {
    /// Whether the request itself is at fault (another attempt fails the same way).
    pub fn is_setup(&self) -> bool {
        matches!(self, Self::Setup(_))
    }

    /// The same failure with `key` taken out of its words (a cause quoted from a server).
    pub fn redacted(&self, key: &str) -> Self {
        let mut clean = self.clone();
        if let Self::Connect { origin, cause }
        | Self::Request { origin, cause }
        | Self::Broke { origin, cause }
        | Self::Malformed { origin, cause } = &mut clean
        {
            *origin = super::retry::redact(origin, Some(key));
            *cause = super::retry::redact(cause, Some(key));
        }
        clean
    }
}

/// Whether `bytes` end with an event stream's last event, a line `data: [DONE]`: the server
/// may end the body a moment later, and the text before it is not held for that. (`[DONE]`
/// inside an event's text is not a line of its own.)
pub(crate) fn ends_stream(bytes: &[u8]) -> bool {
    let tail = &bytes[bytes.len().saturating_sub(DONE_TAIL)..];
    let skipped = bytes.len() - tail.len();
    memchr::memmem::find_iter(tail, b"data: [DONE]")
        .any(|at| skipped + at == 0 || bytes[skipped + at - 1] == b'\n')
}

#[cfg(test)]
mod tests {
    use super::ends_stream;

    #[test]
    fn only_a_line_of_its_own_ends_the_stream() {
        assert!(ends_stream(b"data: [DONE]\n\n"));
        assert!(ends_stream(b"data: {\"a\":1}\n\ndata: [DONE]\r\n\r\n"));
        assert!(!ends_stream(b"data: {\"c\":\"say data: [DONE]\"}\n\n"));
        assert!(!ends_stream(b"data: {\"content\":\"[DONE]\"}}]}\n\n"));
        let mut long = vec![b'x'; 100];
        long.extend_from_slice(b"\ndata: [DONE]\n\n");
        assert!(ends_stream(&long));
    }
}
