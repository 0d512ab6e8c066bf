//! The one cheap request that checks a key before it is saved: `GET <base URL>/models` with the
//! key as bearer token, which DeepSeek and other OpenAI-compatible servers answer at once and
//! without cost. It goes to the person's base URL only (the environment's or their own
//! `.env`'s `DEEPSEEK_BASE_URL`, else DeepSeek's), never to one a project's `./.env` chose: a
//! typed key is the person's.

use std::time::Duration;

use super::client::LlmClient;
use super::error::{LlmError, describe};
use super::reply::SendError;
use super::wire;
use crate::secrets::Secret;

/// The longest a check may take: the person is waiting for it.
pub const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// What the server said about a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyCheck {
    /// It answered the request.
    Accepted,
    /// It refused the key (401 or 403).
    Refused {
        /// The HTTP status.
        status: u16,
    },
    /// No verdict (a network error, a timeout, another status); the reason says which, without
    /// the key.
    Unchecked {
        /// What happened.
        reason: String,
    },
}

impl LlmClient {
    /// Asks the server whether it accepts `key`, with one request and a short timeout.
    pub async fn check_key(&self, key: &Secret) -> KeyCheck {
        let url = format!("{}/models", self.base_url);
        let request = self
            .http
            .get(&url)
            .bearer_auth(key.expose())
            .timeout(CHECK_TIMEOUT);
        // Sent where the chats are, so the connection it leaves in the pool is read there too.
        let response = match wire::send(request).await {
            Ok(response) => response,
            Err(SendError::Http(e)) => {
                return KeyCheck::Unchecked {
                    reason: describe(&e, key.expose()),
                };
            }
            Err(SendError::Direct(e)) => {
                return KeyCheck::Unchecked {
                    reason: LlmError::direct(&e, key.expose()).to_string(),
                };
            }
            Err(SendError::Lost) => {
                return KeyCheck::Unchecked {
                    reason: LlmError::wire_lost().to_string(),
                };
            }
        };
        let status = response.status.as_u16();
        match status {
            200..=299 => KeyCheck::Accepted,
            401 | 403 => KeyCheck::Refused { status },
            _ => KeyCheck::Unchecked {
                reason: format!("the server answered {status} to GET /models"),
            },
        }
    }
}
