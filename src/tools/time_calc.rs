//! (being written in the `tools` work)

use super::registry::ToolRegistry;

/// Adds this family's tools.
pub fn register(_registry: &mut ToolRegistry) {}
