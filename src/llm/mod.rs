//! The model client: OpenAI-compatible chat completions, streamed as server-sent events.

pub mod accumulate;
pub(crate) mod catalog;
pub(crate) mod check;
pub mod chunk;
pub(crate) mod client;
pub(crate) mod direct;
pub(crate) mod endpoint;
pub(crate) mod error;
pub(crate) mod key;
pub(crate) mod presets;
pub mod prices;
pub(crate) mod provider;
pub(crate) mod reply;
pub(crate) mod retry;
pub mod sse;
pub mod text_protocol;
pub(crate) mod types;
pub(crate) mod wire;

pub use catalog::Providers;
pub use check::KeyCheck;
pub use client::{ClientEvent, LlmClient};
pub use error::{ChatError, LlmError};
pub use key::ApiKey;
pub use presets::{Preset, ReasoningEffort};
pub use provider::{DEEPSEEK, ModelEntry, Provider, ProviderModel, ToolProtocol};
pub use retry::{RetryCause, RetryPolicy};
pub use types::*;
