//! From an HTTP answer to the page the model reads: the body read up to its cap, its kind told
//! (HTML, text, or unreadable), decoded, and HTML parsed within bounds on a blocking thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::MAX_LINKS;
use super::error::FetchError;
use crate::tools::error::ToolError;
use crate::tools::panic_guard;
use crate::tools::web::html_parse::{Cut, ParseLimits};
use crate::tools::web::html_text::{self, PageText};

/// What a body is read as.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Kind {
    /// Parsed as HTML: title, text and links.
    Html,
    /// Returned as text.
    Text,
}

/// An answer's body, read.
pub(super) struct Body {
    /// The bytes, at most the cap.
    pub(super) bytes: Vec<u8>,
    /// Whether there was more than the cap.
    pub(super) capped: bool,
}

/// Reads at most `max_bytes` of the answer's body.
pub(super) async fn read_body(
    response: &mut reqwest::Response,
    url: &Url,
    max_bytes: usize,
) -> Result<Body, FetchError> {
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|source| FetchError::Read {
        url: url.to_string(),
        source,
    })? {
        let room = max_bytes.saturating_sub(bytes.len());
        if chunk.len() >= room {
            bytes.extend_from_slice(chunk.get(..room).unwrap_or_default());
            // A chunk that ends exactly at the cap is cut only if more follows.
            let capped = chunk.len() > room || response.chunk().await.ok().flatten().is_some();
            return Ok(Body { bytes, capped });
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Body {
        bytes,
        capped: false,
    })
}

/// HTML, text-like, or unreadable (`None`), by content type or, without one, by the body.
pub(super) fn kind_of(content_type: &str, body: &[u8]) -> Option<Kind> {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    if mime.contains("html") {
        return Some(Kind::Html);
    }
    if mime.is_empty() {
        let head = body.get(..body.len().min(512)).unwrap_or_default();
        let start = String::from_utf8_lossy(head).to_ascii_lowercase();
        let start = start.trim_start();
        return Some(
            if start.starts_with("<!doctype html") || start.starts_with("<html") {
                Kind::Html
            } else {
                Kind::Text
            },
        );
    }
    let textual = mime.starts_with("text/")
        || mime.contains("json")
        || mime.contains("xml")
        || mime.contains("javascript")
        || mime.contains("yaml")
        || mime.contains("csv");
    textual.then_some(Kind::Text)
}

/// A page decoded: its text, the charset used, and why the parse was cut, if it was.
pub(super) struct Decoded {
    /// Title, text and links.
    pub(super) page: PageText,
    /// The charset the body was decoded with.
    pub(super) charset: &'static str,
    /// Why the HTML parse stopped early, if it did.
    pub(super) cut: Option<Cut>,
}

/// Decodes the body and, for HTML, parses it on a blocking thread within `limits`.
/// An interrupt returns at once; the thread is told to stop and winds down on its own.
pub(super) async fn decode(
    body: Vec<u8>,
    content_type: String,
    kind: Kind,
    url: Url,
    limits: ParseLimits,
    cancel: &CancellationToken,
) -> Result<Decoded, ToolError> {
    let stop = StopOnDrop::default();
    let flag = stop.0.clone();
    let work = panic_guard::spawn_blocking(move || {
        let (decoded, charset) = html_text::decode(&body, &content_type, kind == Kind::Html);
        if kind != Kind::Html {
            let page = PageText {
                title: None,
                text: decoded,
                links: Vec::new(),
            };
            return Decoded {
                page,
                charset,
                cut: None,
            };
        }
        let (page, cut) = html_text::extract_bounded(&decoded, &url, MAX_LINKS, &limits, &flag);
        Decoded { page, charset, cut }
    });
    // Dropping `stop` (on any way out, also when the registry drops this future) raises the
    // flag the parse checks, so an abandoned parse ends soon instead of running to its budget.
    tokio::select! {
        done = work => done,
        () = cancel.cancelled() => Err(ToolError::Cancelled),
    }
}

/// A stop flag raised when dropped.
#[derive(Default)]
struct StopOnDrop(Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// What the result reports about the answer besides the page.
pub(super) struct Answer {
    /// The final URL, after redirects.
    pub(super) url: Url,
    /// Its HTTP status.
    pub(super) status: reqwest::StatusCode,
    /// The content type, in lower case.
    pub(super) content_type: String,
    /// How the body was read.
    pub(super) kind: Kind,
    /// Whether the body was cut at the size cap.
    pub(super) size_capped: bool,
    /// The size cap, in bytes.
    pub(super) max_bytes: usize,
}

/// The result fields: the page's text cut to `max_chars`, its title and links, and notes on
/// every cut.
pub(super) fn report(answer: Answer, decoded: Decoded, max_chars: usize) -> Map<String, Value> {
    let Decoded { page, charset, cut } = decoded;
    let total_chars = page.text.chars().count();
    let (text, text_cut) = html_text::cut_chars(&page.text, max_chars);
    let mut out = Map::new();
    out.insert("url".into(), json!(answer.url.as_str()));
    out.insert("status".into(), json!(answer.status.as_u16()));
    out.insert("content_type".into(), json!(answer.content_type));
    out.insert("charset".into(), json!(charset));
    if let Some(title) = page.title {
        out.insert("title".into(), json!(title));
    }
    out.insert("text".into(), json!(text));
    out.insert("total_chars".into(), json!(total_chars));
    out.insert(
        "truncated".into(),
        json!(text_cut || answer.size_capped || cut.is_some()),
    );
    let mut notes = Vec::new();
    if answer.size_capped {
        notes.push(format!(
            "the body was cut at {} KB",
            answer.max_bytes / 1024
        ));
    }
    if let Some(why) = cut {
        notes.push(format!(
            "the page was cut: {why}, so only the text before that point is shown"
        ));
    }
    if !notes.is_empty() {
        out.insert("note".into(), json!(notes.join("; ")));
    }
    if answer.kind == Kind::Html {
        let links: Vec<Value> = page
            .links
            .iter()
            .map(|l| json!({"text": l.text, "url": l.url}))
            .collect();
        out.insert("links".into(), Value::Array(links));
    }
    out
}
