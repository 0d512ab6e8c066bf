//! Tests of the UI from inside the crate, where its internals are visible.

mod side_panes;
mod support;
