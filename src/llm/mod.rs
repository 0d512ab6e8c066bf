//! The model client: OpenAI-compatible chat completions, streamed as server-sent events.

pub mod accumulate;
pub mod catalog;
pub mod check;
pub mod chunk;
pub mod client;
pub mod endpoint;
pub mod error;
pub mod key;
pub mod presets;
pub mod provider;
pub mod retry;
pub mod sse;
pub mod text_protocol;
pub mod types;

pub use catalog::Providers;
pub use check::KeyCheck;
pub use client::{ClientEvent, LlmClient};
pub use error::{ChatError, LlmError};
pub use key::ApiKey;
pub use presets::Preset;
pub use provider::{DEEPSEEK, ModelEntry, Provider, ProviderModel, ToolProtocol};
pub use retry::RetryPolicy;
pub use types::*;
