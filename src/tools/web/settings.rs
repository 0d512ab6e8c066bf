//! The settings both web tools read, once at start, and keeping the search key out of texts.

use std::net::IpAddr;
use std::time::Duration;

/// Settings of the web tools, read once at start.
#[derive(Clone)]
pub struct WebSettings {
    /// `SERPAPI_KEY`; search is unavailable without it.
    pub serpapi_key: Option<String>,
    /// `SERPAPI_LOCATION`.
    pub location: String,
    /// `SERPAPI_HL` (interface language).
    pub hl: String,
    /// `SERPAPI_GL` (country).
    pub gl: String,
    /// `SERPAPI_GOOGLE_DOMAIN`.
    pub google_domain: String,
    /// `SERPAPI_BASE_URL` (a local server in tests).
    pub base_url: String,
    /// `MINICLAW_ALLOW_PRIVATE_FETCH=1`: fetch_web_page may reach private addresses.
    pub allow_private_fetch: bool,
    /// Addresses fetch_web_page may reach even though they are private (tests, trusted hosts).
    pub private_exceptions: Vec<IpAddr>,
    /// The timeout of one HTTP request.
    pub timeout: Duration,
}

impl Default for WebSettings {
    fn default() -> Self {
        Self {
            serpapi_key: None,
            location: "Austin, Texas, United States".into(),
            hl: "en".into(),
            gl: "us".into(),
            google_domain: "google.com".into(),
            base_url: "https://serpapi.com".into(),
            allow_private_fetch: false,
            private_exceptions: Vec::new(),
            timeout: Duration::from_secs(20),
        }
    }
}

impl WebSettings {
    /// Reads the `SERPAPI_*` and `MINICLAW_ALLOW_PRIVATE_FETCH` settings (defaults otherwise)
    /// from the environment and the `.env` files (a project's only for the names it may set:
    /// never `SERPAPI_BASE_URL`, so the person's key never goes to a server a project chose).
    pub fn from_env() -> Self {
        Self::from_lookup(|name| {
            crate::secrets::get(name)
                .or_else(|| crate::env_files::loaded().lookup(name).map(|(v, _)| v))
        })
    }

    /// Reads the settings through `get` (the environment, or a map in tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Self {
        let d = Self::default();
        let text = |name: &str, default: String| {
            get(name)
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty())
                .unwrap_or(default)
        };
        Self {
            serpapi_key: get("SERPAPI_KEY")
                .map(|v| v.trim().to_string())
                .filter(|v| !v.is_empty()),
            location: text("SERPAPI_LOCATION", d.location),
            hl: text("SERPAPI_HL", d.hl),
            gl: text("SERPAPI_GL", d.gl),
            google_domain: text("SERPAPI_GOOGLE_DOMAIN", d.google_domain),
            base_url: text("SERPAPI_BASE_URL", d.base_url),
            allow_private_fetch: get("MINICLAW_ALLOW_PRIVATE_FETCH")
                .is_some_and(|v| matches!(v.trim(), "1" | "true" | "yes")),
            private_exceptions: Vec::new(),
            timeout: d.timeout,
        }
    }
}

impl std::fmt::Debug for WebSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebSettings")
            .field(
                "serpapi_key",
                &self.serpapi_key.as_ref().map(|_| "<redacted>"),
            )
            .field("location", &self.location)
            .field("hl", &self.hl)
            .field("gl", &self.gl)
            .field("google_domain", &self.google_domain)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

/// Removes the key (plain and URL-encoded) from text that may quote it.
pub fn scrub(text: &str, key: &str) -> String {
    if key.is_empty() {
        return text.to_string();
    }
    let encoded: String = url::form_urlencoded::byte_serialize(key.as_bytes()).collect();
    text.replace(key, "[redacted]")
        .replace(&encoded, "[redacted]")
}
