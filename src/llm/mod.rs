//! The model client: OpenAI-compatible chat completions, streamed as server-sent events.

pub mod accumulate;
pub mod chunk;
pub mod client;
pub mod presets;
pub mod retry;
pub mod sse;
pub mod types;

pub use client::{ChatError, ClientEvent, LlmClient, LlmError};
pub use presets::Preset;
pub use retry::RetryPolicy;
pub use types::*;
