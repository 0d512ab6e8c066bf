//! `search_web`: Google results through SerpAPI.

use std::sync::{Arc, OnceLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::settings::{WebSettings, scrub};
use crate::llm::ToolSchema;
use crate::tools::args::{parameters_of, parse_args, to_usize};
use crate::tools::registry::{Tool, ToolContext, ToolError, ToolFuture};

/// Results returned when the call does not say.
const DEFAULT_RESULTS: u64 = 5;
/// The most results one call may ask for.
const MAX_RESULTS: u64 = 10;

/// The arguments of `search_web`.
#[derive(Deserialize, JsonSchema)]
struct SearchWebArgs {
    /// What to search for.
    query: String,
    /// At most this many results (1-10, default 5).
    max_results: Option<u64>,
    /// Only results from this site, e.g. docs.rs.
    site: Option<String>,
}

/// Why a SerpAPI request failed: the search layer's error type. Its text may quote the key (an
/// echoed URL or body), so it becomes a [`ToolError`] only through [`SearchError::scrubbed`].
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// `SERPAPI_BASE_URL` does not parse.
    #[error("SERPAPI_BASE_URL `{base}` is not a valid URL ({source})")]
    BadBaseUrl {
        /// The configured base.
        base: String,
        /// The parse error.
        source: url::ParseError,
    },
    /// The HTTP client could not be built.
    #[error("could not build the HTTP client: {0}")]
    Client(#[source] reqwest::Error),
    /// The request did not get an answer (the error without its URL, which holds the key).
    #[error("the search request failed: {0}")]
    Request(#[source] reqwest::Error),
    /// The answer could not be read.
    #[error("reading the search response failed: {0}")]
    Read(#[source] reqwest::Error),
    /// SerpAPI explained a failure as `{"error": "..."}`.
    #[error("SerpAPI error (HTTP {status}): {message}")]
    Api {
        /// The HTTP status code.
        status: u16,
        /// SerpAPI's message.
        message: String,
    },
    /// An error status without SerpAPI's explanation.
    #[error("SerpAPI answered HTTP {status}: {snippet}")]
    Http {
        /// The HTTP status.
        status: reqwest::StatusCode,
        /// The start of the body.
        snippet: String,
    },
    /// A success status with a body that is not JSON.
    #[error("SerpAPI answered something that is not JSON")]
    NotJson,
}

impl SearchError {
    /// The tool error, its text with every form of `key` removed.
    pub fn scrubbed(&self, key: &str) -> ToolError {
        ToolError::failed(scrub(&self.to_string(), key))
    }
}

/// The `search_web` tool.
#[derive(Clone, Debug)]
pub struct SearchWebTool {
    settings: WebSettings,
    /// Built at the first search and shared by every later one (and by clones of the tool).
    client: Arc<OnceLock<reqwest::Client>>,
}

impl SearchWebTool {
    /// A search tool with these settings.
    pub fn new(settings: WebSettings) -> Self {
        Self {
            settings,
            client: Arc::default(),
        }
    }

    /// The pooled client, built at the first search (a failed build is tried again next time).
    fn client(&self) -> Result<&reqwest::Client, SearchError> {
        if let Some(client) = self.client.get() {
            return Ok(client);
        }
        let built = reqwest::Client::builder()
            .timeout(self.settings.timeout)
            .build()
            .map_err(SearchError::Client)?;
        Ok(self.client.get_or_init(|| built))
    }
}

impl Tool for SearchWebTool {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "search_web".into(),
            description: format!(
                "Search the web (Google, through SerpAPI){}. Returns the position, title, link \
                 and snippet of each result, and Google's answer box when there is one. Use \
                 fetch_web_page to read a result.",
                if self.settings.serpapi_key.is_some() {
                    ""
                } else {
                    " — unavailable until SERPAPI_KEY is set"
                }
            ),
            parameters: parameters_of::<SearchWebArgs>(),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    // Read-only, but it reaches the network: the `ask` mode asks first.
    fn needs_approval(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let SearchWebArgs {
                query,
                max_results,
                site,
            } = parse_args(args)?;
            let query = query.trim();
            if query.is_empty() {
                return Err(ToolError::InvalidArguments("`query` is empty".into()));
            }
            let max = to_usize(max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, MAX_RESULTS));
            let site = site.as_deref().map(str::trim).filter(|s| !s.is_empty());
            let Some(key) = self.settings.serpapi_key.as_deref() else {
                return Err(ToolError::failed(format!(
                    "web search is not configured: set SERPAPI_KEY (a key from serpapi.com) in \
                     {} (the recommended place), in the environment or in ./.env, then restart \
                     MiniClaw",
                    crate::secrets::recommended_key_file()
                )));
            };
            let q = match site {
                Some(site) => format!("{query} site:{site}"),
                None => query.to_string(),
            };
            let body = self
                .request(&q, max, key)
                .await
                .map_err(|e| e.scrubbed(key))?;
            Ok(results(&body, &q, max))
        })
    }
}

impl SearchWebTool {
    /// Sends the search; the error text may contain the key and must be scrubbed by the caller.
    async fn request(&self, q: &str, max: usize, key: &str) -> Result<Value, SearchError> {
        let s = &self.settings;
        let base = s.base_url.trim_end_matches('/');
        let mut url = url::Url::parse(&format!("{base}/search.json")).map_err(|source| {
            SearchError::BadBaseUrl {
                base: base.to_string(),
                source,
            }
        })?;
        url.query_pairs_mut()
            .append_pair("engine", "google")
            .append_pair("q", q)
            .append_pair("num", &max.to_string())
            .append_pair("location", &s.location)
            .append_pair("hl", &s.hl)
            .append_pair("gl", &s.gl)
            .append_pair("google_domain", &s.google_domain)
            .append_pair("api_key", key);
        let response = self
            .client()?
            .get(url)
            .send()
            .await
            .map_err(|e| SearchError::Request(e.without_url()))?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|e| SearchError::Read(e.without_url()))?;
        // Scrubbed before anything is cut from it: a cut through an echoed key would leave a
        // piece that no longer matches the whole key.
        let text = scrub(&text, key);
        let body: Option<Value> = serde_json::from_str(&text).ok();
        // SerpAPI explains failures as `{"error": "..."}`, with or without an error status.
        if let Some(err) = body
            .as_ref()
            .and_then(|b| b.get("error"))
            .and_then(Value::as_str)
        {
            return Err(SearchError::Api {
                status: status.as_u16(),
                message: err.to_string(),
            });
        }
        if !status.is_success() {
            return Err(SearchError::Http {
                status,
                snippet: text.chars().take(300).collect(),
            });
        }
        body.ok_or(SearchError::NotJson)
    }
}

/// Picks the organic results and the answer box out of SerpAPI's response.
fn results(body: &Value, q: &str, max: usize) -> Map<String, Value> {
    let organic: Vec<Value> = body
        .get("organic_results")
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .take(max)
                .enumerate()
                .map(|(i, r)| {
                    json!({
                        "position": r.get("position").cloned().unwrap_or(json!(i + 1)),
                        "title": r.get("title").and_then(Value::as_str).unwrap_or(""),
                        "link": r.get("link").and_then(Value::as_str).unwrap_or(""),
                        "snippet": r.get("snippet").and_then(Value::as_str).unwrap_or(""),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = Map::new();
    out.insert("query".into(), json!(q));
    out.insert("results".into(), Value::Array(organic));
    if let Some(answer) = body.get("answer_box").filter(|a| a.is_object()) {
        let pick = |k: &str| answer.get(k).cloned().unwrap_or(Value::Null);
        let mut boxed = Map::new();
        for k in ["type", "title", "answer", "snippet", "link"] {
            if !pick(k).is_null() {
                boxed.insert(k.into(), pick(k));
            }
        }
        out.insert("answer_box".into(), Value::Object(boxed));
    }
    out
}
