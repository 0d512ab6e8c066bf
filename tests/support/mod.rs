//! Shared test support: a real HTTP model server on 127.0.0.1, SSE stream builders, a rig of
//! test tools and waiting on a condition. (The examples include this too; what needs the real
//! binary, `headless.rs`, `pty.rs` and `mcp.rs`, the test crate declares itself.)
#![allow(dead_code, unused_imports)]

pub mod mock_server;
pub mod rig;
pub mod sse;
pub mod wait;

pub use mock_server::{Gate, MockServer, RecordedRequest, Reply, Until};
pub use sse::SseBuilder;
