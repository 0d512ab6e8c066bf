//! Retry arithmetic and error-text helpers for the client: backoff with jitter, `Retry-After`,
//! the server's own error message, and keeping the API key out of every text.

use std::time::Duration;

use rand::Rng;

/// How failed requests are retried.
#[derive(Clone, Debug)]
pub struct RetryPolicy {
    /// Total attempts, the first included.
    pub max_attempts: u32,
    /// The first backoff delay; it doubles each time (with jitter).
    pub base_delay: Duration,
    /// The longest delay, `Retry-After` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 5,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// Why a request is tried again, as the status line and the trace name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryCause {
    /// HTTP 429: too many requests.
    RateLimited,
    /// The server answered with an error status (500, 503).
    ServerError(u16),
    /// The connection failed or broke.
    Network,
    /// The server accepted the request and then sent nothing.
    NoData,
    /// The stream closed before it was complete.
    StreamCut,
}

impl RetryCause {
    /// The cause of `error`, when it is one a retry answers.
    pub fn of(error: &super::LlmError) -> Self {
        use super::LlmError;
        match error {
            LlmError::Http { status: 429, .. } => Self::RateLimited,
            LlmError::Http { status, .. } => Self::ServerError(*status),
            LlmError::IdleTimeout(_) => Self::NoData,
            LlmError::StreamCut => Self::StreamCut,
            _ => Self::Network,
        }
    }

    /// Its name in machine-read output: `rate_limited`, `server_error`, `network`, `no_data`,
    /// `stream_cut`.
    pub fn name(&self) -> &'static str {
        match self {
            Self::RateLimited => "rate_limited",
            Self::ServerError(_) => "server_error",
            Self::Network => "network",
            Self::NoData => "no_data",
            Self::StreamCut => "stream_cut",
        }
    }

    /// In a few words: `rate limited`, `server error 503`.
    pub fn label(&self) -> String {
        match self {
            Self::RateLimited => "rate limited".into(),
            Self::ServerError(status) => format!("server error {status}"),
            Self::Network => "network error".into(),
            Self::NoData => "no data from the server".into(),
            Self::StreamCut => "stream cut off".into(),
        }
    }
}

/// The longest server error body quoted in an error.
const MESSAGE_CHARS: usize = 300;

/// Whether an HTTP status is worth another attempt.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 429 | 500 | 503)
}

/// The wait before attempt `next_attempt` (2 = first retry): `Retry-After` when the server gave one,
/// else exponential backoff with jitter; never more than `max_delay`.
pub fn delay_before(
    policy: &RetryPolicy,
    next_attempt: u32,
    retry_after: Option<Duration>,
) -> Duration {
    if let Some(wait) = retry_after {
        return wait.min(policy.max_delay);
    }
    let doublings = next_attempt.saturating_sub(2).min(20);
    let full = policy
        .base_delay
        .saturating_mul(1u32 << doublings)
        .min(policy.max_delay);
    // "Equal jitter": half fixed, half random, so clients that failed together spread out.
    let half = full / 2;
    let spread = u64::try_from(half.as_micros()).unwrap_or(u64::MAX);
    let extra = if spread == 0 {
        0
    } else {
        rand::rng().random_range(0..=spread)
    };
    (half + Duration::from_micros(extra)).min(policy.max_delay)
}

/// Reads a `Retry-After` value given in seconds (HTTP dates are ignored: backoff applies).
pub fn parse_retry_after(value: &str) -> Option<Duration> {
    let secs: f64 = value.trim().parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs.min(86_400.0)))
}

/// The server's own message from an error body: `error.message`, else the trimmed raw body.
pub fn error_message(body: &str) -> String {
    let parsed: Option<serde_json::Value> = serde_json::from_str(body).ok();
    let from_json = parsed.as_ref().and_then(|v| {
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .or_else(|| v.get("error"))
            .and_then(|m| m.as_str())
            .map(str::to_string)
    });
    let text = from_json.unwrap_or_else(|| body.split_whitespace().collect::<Vec<_>>().join(" "));
    shorten(text.trim(), MESSAGE_CHARS)
}

/// At most `max` characters of `text`, marked when cut.
pub fn shorten(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push('…');
    }
    out
}

/// Replaces every occurrence of the key in `text` (servers sometimes echo it back).
pub fn redact(text: &str, key: Option<&str>) -> String {
    match key {
        Some(k) if !k.is_empty() => text.replace(k, "<redacted>"),
        _ => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 10,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_secs(1),
        }
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        let p = policy();
        for _ in 0..50 {
            let first = delay_before(&p, 2, None);
            assert!(first >= Duration::from_millis(50) && first <= Duration::from_millis(100));
            let third = delay_before(&p, 4, None);
            assert!(third >= Duration::from_millis(200) && third <= Duration::from_millis(400));
            assert!(delay_before(&p, 30, None) <= p.max_delay);
        }
    }

    #[test]
    fn retry_after_is_honoured_but_capped() {
        let p = policy();
        assert_eq!(
            delay_before(&p, 2, Some(Duration::from_millis(300))),
            Duration::from_millis(300)
        );
        assert_eq!(
            delay_before(&p, 2, Some(Duration::from_secs(60))),
            p.max_delay
        );
        assert_eq!(parse_retry_after(" 2 "), Some(Duration::from_secs(2)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT"), None);
    }

    #[test]
    fn error_messages_come_from_the_body() {
        assert_eq!(
            error_message(r#"{"error":{"message":"Insufficient Balance","type":"x"}}"#),
            "Insufficient Balance"
        );
        assert_eq!(error_message("  bad\n gateway  "), "bad gateway");
        assert_eq!(
            error_message(&"x".repeat(1000)).chars().count(),
            MESSAGE_CHARS + 1
        );
        assert_eq!(
            redact("key sk-123 echoed", Some("sk-123")),
            "key <redacted> echoed"
        );
    }
}
