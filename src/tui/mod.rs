//! The full-screen terminal UI.
