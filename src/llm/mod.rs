//! The model client: OpenAI-compatible chat completions, streamed as server-sent events.

pub mod accumulate;
pub mod check;
pub mod chunk;
pub mod client;
pub mod error;
pub mod key;
pub mod presets;
pub mod retry;
pub mod sse;
pub mod types;

pub use check::KeyCheck;
pub use client::{ClientEvent, LlmClient};
pub use error::{ChatError, LlmError};
pub use key::ApiKey;
pub use presets::Preset;
pub use retry::RetryPolicy;
pub use types::*;
