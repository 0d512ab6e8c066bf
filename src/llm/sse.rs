//! Server-sent events: bytes in any cut -> frames -> stream events.
