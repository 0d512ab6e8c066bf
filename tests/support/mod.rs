//! Shared test support: a real HTTP model server on 127.0.0.1 and SSE stream builders.
#![allow(dead_code, unused_imports)]

pub mod mock_server;
pub mod pty;
pub mod rig;
pub mod sse;

pub use mock_server::{MockServer, RecordedRequest, Reply};
pub use sse::SseBuilder;
