//! Why a jail could not be built.

/// A step of building the jail failed; the command never ran.
#[derive(Debug, thiserror::Error)]
pub enum JailError {
    /// A system call the jail needs failed.
    #[error("{step}: {source}")]
    System {
        /// What was being done.
        step: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// The kernel lacks something the jail needs.
    #[error("{0}")]
    Unsupported(String),
    /// The plan handed to the supervisor was not readable.
    #[error("the jail's plan is unreadable: {0}")]
    Plan(String),
}

impl JailError {
    /// The last OS error, for `step`.
    pub(crate) fn last(step: impl Into<String>) -> Self {
        Self::System {
            step: step.into(),
            source: std::io::Error::last_os_error(),
        }
    }

    /// `source`, for `step`.
    pub(crate) fn io(step: impl Into<String>, source: std::io::Error) -> Self {
        Self::System {
            step: step.into(),
            source,
        }
    }
}
