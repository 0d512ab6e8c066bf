//! How much work one parse of a page may do, and why a parse was cut.

use std::fmt;
use std::time::Duration;

/// Nodes (elements, text runs, comments, ...) built before the parse is cut.
pub const DEFAULT_MAX_NODES: usize = 200_000;
/// Elements nested deeper than this cut the parse (real pages stay far below).
pub const DEFAULT_MAX_DEPTH: usize = 512;
/// Bytes of attributes (names and values, counted per element built) before the parse is cut:
/// re-opened formatting elements copy their attributes, and `class` becomes one atom per name.
pub const DEFAULT_MAX_ATTRIBUTE_BYTES: usize = 16 * 1024 * 1024;
/// Time a parse may take before it is cut.
pub const DEFAULT_PARSE_BUDGET: Duration = Duration::from_secs(5);

/// How much work one parse may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ParseLimits {
    /// At most this many nodes are built.
    pub max_nodes: usize,
    /// Elements are nested at most this deep.
    pub max_depth: usize,
    /// At most this many bytes of attributes are stored.
    pub max_attribute_bytes: usize,
    /// The parse stops after this long.
    pub budget: Duration,
}

impl Default for ParseLimits {
    fn default() -> Self {
        Self {
            max_nodes: DEFAULT_MAX_NODES,
            max_depth: DEFAULT_MAX_DEPTH,
            max_attribute_bytes: DEFAULT_MAX_ATTRIBUTE_BYTES,
            budget: DEFAULT_PARSE_BUDGET,
        }
    }
}

/// Why a parse stopped before the end of the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cut {
    /// More nodes than the cap.
    Nodes(usize),
    /// Elements nested deeper than the cap.
    Depth(usize),
    /// More attribute bytes than the cap.
    AttributeBytes(usize),
    /// The time budget ran out.
    Time(Duration),
    /// The caller asked it to stop (the call was interrupted).
    Stopped,
}

impl fmt::Display for Cut {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Nodes(n) => write!(f, "the page has more than {n} HTML nodes"),
            Self::Depth(n) => write!(f, "the page nests elements more than {n} deep"),
            Self::AttributeBytes(n) => {
                write!(f, "the page's attributes exceed {} KB", n / 1024)
            }
            Self::Time(t) => write!(
                f,
                "parsing the page took longer than {:.1} s",
                t.as_secs_f64()
            ),
            Self::Stopped => write!(f, "parsing was interrupted"),
        }
    }
}
