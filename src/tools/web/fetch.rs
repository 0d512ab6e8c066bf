//! `fetch_web_page`: one public web page as title, readable text and links. Every hop's address is
//! resolved and checked here, then connected to as checked, so DNS rebinding cannot slip through.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use url::Url;

use super::html_parse::{Cut, ParseLimits};
use super::html_text::{self, PageText};
use super::net_guard::non_public_reason;
use super::settings::WebSettings;
use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args, to_usize};
use crate::tools::panic_guard;
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture};

/// Characters of text returned when the model does not say.
pub const DEFAULT_MAX_CHARS: u64 = 8_000;
/// At most this many bytes of a body are read.
pub const DEFAULT_MAX_BYTES: usize = 2 * 1024 * 1024;
/// At most this many redirects are followed.
pub const MAX_REDIRECTS: usize = 5;
/// At most this many links are listed.
pub const MAX_LINKS: usize = 20;
/// The most characters of text one call may ask for.
const MAX_CHARS: u64 = 200_000;

/// The arguments of `fetch_web_page`.
#[derive(Deserialize, JsonSchema)]
struct FetchArgs {
    /// The http(s) URL.
    url: String,
    /// At most this many characters of text (default 8000).
    max_chars: Option<u64>,
}

/// The `fetch_web_page` tool.
#[derive(Clone, Debug)]
pub struct FetchTool {
    settings: WebSettings,
    max_bytes: usize,
    parse_limits: ParseLimits,
}

impl FetchTool {
    /// A fetch tool with these settings and the default size cap.
    pub fn new(settings: WebSettings) -> Self {
        Self {
            settings,
            max_bytes: DEFAULT_MAX_BYTES,
            parse_limits: ParseLimits::default(),
        }
    }

    /// The same tool with another size cap (bytes of body read).
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The same tool with other HTML parse limits (nodes, depth, attribute bytes, time).
    pub fn with_parse_limits(mut self, limits: ParseLimits) -> Self {
        self.parse_limits = limits;
        self
    }
}

impl Tool for FetchTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "fetch_web_page".into(),
            description: "Fetch a public web page (http or https) and return its title, readable \
                text (scripts, navigation, headers and footers removed) and first links with \
                absolute URLs. Plain text and JSON come back as text. Local and private network \
                addresses are refused."
                .into(),
            parameters: parameters_of::<FetchArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let FetchArgs {
                url: raw,
                max_chars,
            } = parse_args(args)?;
            let raw = raw.trim();
            let max_chars = to_usize(max_chars.unwrap_or(DEFAULT_MAX_CHARS).clamp(1, MAX_CHARS));
            let mut url = Url::parse(raw)
                .map_err(|e| ToolError::InvalidArguments(format!("`{raw}` is not a URL ({e})")))?;
            for hop in 0..=MAX_REDIRECTS {
                check_scheme(&url)?;
                let client = self.client_for(&url, hop > 0).await?;
                let response = client.get(url.clone()).send().await.map_err(|e| {
                    ToolError::failed(format!("fetching {url} failed: {}", plain(&e)))
                })?;
                if response.status().is_redirection() {
                    let Some(location) = response
                        .headers()
                        .get(reqwest::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                    else {
                        return Err(ToolError::failed(format!(
                            "{url} answered HTTP {} without a Location to go to",
                            response.status()
                        )));
                    };
                    url = url.join(location).map_err(|e| {
                        ToolError::failed(format!(
                            "{url} redirects to a bad URL `{location}` ({e})"
                        ))
                    })?;
                    continue;
                }
                return self.read(response, url, max_chars, &ctx.cancel).await;
            }
            Err(ToolError::failed(format!(
                "too many redirects (more than {MAX_REDIRECTS}); stopped at {url}"
            )))
        })
    }
}

fn check_scheme(url: &Url) -> Result<(), ToolError> {
    match url.scheme() {
        "http" | "https" => Ok(()),
        other => Err(ToolError::failed(format!(
            "refused: `{other}:` URLs are not fetched; only http and https"
        ))),
    }
}

/// A transport error without the URL (already shown) and with its cause.
fn plain(e: &reqwest::Error) -> String {
    let mut text = if e.is_timeout() {
        "it timed out".to_string()
    } else if e.is_connect() {
        "could not connect".to_string()
    } else {
        "the request failed".to_string()
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

impl FetchTool {
    /// A client that may only connect to `url`'s checked addresses.
    async fn client_for(&self, url: &Url, redirected: bool) -> Result<reqwest::Client, ToolError> {
        let builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would connect to the name itself, bypassing the address checks.
            .no_proxy()
            .timeout(self.settings.timeout)
            .connect_timeout(self.settings.timeout)
            .user_agent(concat!(
                "MiniClaw/",
                env!("CARGO_PKG_VERSION"),
                " (fetch_web_page)"
            ));
        let port = url.port_or_known_default().unwrap_or(80);
        let builder = match url.host() {
            None => {
                return Err(ToolError::failed(format!("`{url}` has no host")));
            }
            Some(url::Host::Ipv4(ip)) => {
                self.check_ip(url, IpAddr::V4(ip), redirected)?;
                builder
            }
            Some(url::Host::Ipv6(ip)) => {
                self.check_ip(url, IpAddr::V6(ip), redirected)?;
                builder
            }
            Some(url::Host::Domain(name)) => {
                let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
                    .await
                    .map_err(|e| ToolError::failed(format!("could not resolve `{name}`: {e}")))?
                    .collect();
                if addrs.is_empty() {
                    return Err(ToolError::failed(format!("`{name}` has no address")));
                }
                for addr in &addrs {
                    self.check_ip(url, addr.ip(), redirected)?;
                }
                builder.resolve_to_addrs(name, &addrs)
            }
        };
        builder
            .build()
            .map_err(|e| ToolError::failed(format!("could not build the HTTP client: {e}")))
    }

    fn check_ip(&self, url: &Url, ip: IpAddr, redirected: bool) -> Result<(), ToolError> {
        if self.settings.allow_private_fetch || self.settings.private_exceptions.contains(&ip) {
            return Ok(());
        }
        match non_public_reason(ip) {
            None => Ok(()),
            Some(why) => Err(ToolError::failed(format!(
                "refused: {}`{url}` resolves to {ip}, {why}; fetch_web_page only reaches public \
                 addresses (MINICLAW_ALLOW_PRIVATE_FETCH=1 allows private ones)",
                if redirected { "the redirect to " } else { "" }
            ))),
        }
    }

    /// Reads at most the size cap of the body and turns it into text.
    async fn read(
        &self,
        mut response: reqwest::Response,
        url: Url,
        max_chars: usize,
        cancel: &CancellationToken,
    ) -> Result<Map<String, Value>, ToolError> {
        let status = response.status();
        if !status.is_success() {
            return Err(ToolError::failed(format!("{url} answered HTTP {status}")));
        }
        let content_type = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_ascii_lowercase();
        let mut body: Vec<u8> = Vec::new();
        let mut size_capped = false;
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|e| ToolError::failed(format!("reading {url} failed: {}", plain(&e))))?
        {
            let room = self.max_bytes - body.len();
            if chunk.len() >= room {
                body.extend_from_slice(&chunk[..room]);
                size_capped = chunk.len() > room || response.chunk().await.ok().flatten().is_some();
                break;
            }
            body.extend_from_slice(&chunk);
        }
        let kind = kind_of(&content_type, &body).ok_or_else(|| {
            ToolError::failed(format!(
                "{url} is `{content_type}`, which fetch_web_page cannot read (HTML, text and \
                     JSON only)"
            ))
        })?;
        let (page, charset, parse_cut) = self
            .page_text(body, content_type.clone(), kind, url.clone(), cancel)
            .await?;
        let total_chars = page.text.chars().count();
        let (text, cut) = html_text::cut_chars(&page.text, max_chars);
        let mut out = Map::new();
        out.insert("url".into(), json!(url.as_str()));
        out.insert("status".into(), json!(status.as_u16()));
        out.insert("content_type".into(), json!(content_type));
        out.insert("charset".into(), json!(charset));
        if let Some(title) = page.title {
            out.insert("title".into(), json!(title));
        }
        out.insert("text".into(), json!(text));
        out.insert("total_chars".into(), json!(total_chars));
        out.insert(
            "truncated".into(),
            json!(cut || size_capped || parse_cut.is_some()),
        );
        let mut notes = Vec::new();
        if size_capped {
            notes.push(format!("the body was cut at {} KB", self.max_bytes / 1024));
        }
        if let Some(why) = parse_cut {
            notes.push(format!(
                "the page was cut: {why}, so only the text before that point is shown"
            ));
        }
        if !notes.is_empty() {
            out.insert("note".into(), json!(notes.join("; ")));
        }
        if kind == Kind::Html {
            let links: Vec<Value> = page
                .links
                .iter()
                .map(|l| json!({"text": l.text, "url": l.url}))
                .collect();
            out.insert("links".into(), Value::Array(links));
        }
        Ok(out)
    }
}

impl FetchTool {
    /// Decodes the body and, for HTML, parses it on a blocking thread within the parse limits.
    /// An interrupt returns at once; the thread is told to stop and winds down on its own.
    async fn page_text(
        &self,
        body: Vec<u8>,
        content_type: String,
        kind: Kind,
        url: Url,
        cancel: &CancellationToken,
    ) -> Result<(PageText, &'static str, Option<Cut>), ToolError> {
        let stop = StopOnDrop::default();
        let flag = stop.0.clone();
        let limits = self.parse_limits;
        let work = panic_guard::spawn_blocking(move || {
            let (decoded, charset) = html_text::decode(&body, &content_type, kind == Kind::Html);
            if kind != Kind::Html {
                let page = PageText {
                    title: None,
                    text: decoded,
                    links: Vec::new(),
                };
                return (page, charset, None);
            }
            let (page, cut) = html_text::extract_bounded(&decoded, &url, MAX_LINKS, &limits, &flag);
            (page, charset, cut)
        });
        // Dropping `stop` (on any way out, also when the registry drops this future) raises the
        // flag the parse checks, so an abandoned parse ends soon instead of running to its budget.
        tokio::select! {
            done = work => done,
            () = cancel.cancelled() => Err(ToolError::Cancelled),
        }
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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Html,
    Text,
}

/// HTML, text-like, or unreadable (`None`), by content type or, without one, by the body.
fn kind_of(content_type: &str, body: &[u8]) -> Option<Kind> {
    let mime = content_type.split(';').next().unwrap_or("").trim();
    if mime.contains("html") {
        return Some(Kind::Html);
    }
    if mime.is_empty() {
        let start = String::from_utf8_lossy(&body[..body.len().min(512)]).to_ascii_lowercase();
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
