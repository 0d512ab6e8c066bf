//! What can be wrong with a settings file or one of its entries: the settings layer's error type.

use std::path::PathBuf;

/// A problem in a settings file; its text names the file and what is wrong.
#[derive(Debug, thiserror::Error)]
pub enum SettingsError {
    /// The file exists but could not be read.
    #[error("{}: could not be read ({source}); it was skipped", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("{}: not valid TOML, the whole file was skipped: {}", file.display(), source.to_string().trim())]
    Toml {
        /// The file.
        file: PathBuf,
        /// The parser's words.
        source: toml::de::Error,
    },
    /// The file is not valid JSON.
    #[error("{}: not valid JSON, the whole file was skipped: {source}", file.display())]
    Json {
        /// The file.
        file: PathBuf,
        /// The parser's words.
        source: serde_json::Error,
    },
    /// The file parses but is not of the expected shape.
    #[error("{}: {what}; the whole file was skipped", file.display())]
    Shape {
        /// The file.
        file: PathBuf,
        /// What is wrong.
        what: String,
    },
    /// One entry is broken; the rest of the file counts.
    #[error("{}: MCP server `{name}` was skipped: {what}", file.display())]
    Entry {
        /// The file.
        file: PathBuf,
        /// The entry's name.
        name: String,
        /// What is wrong.
        what: String,
    },
    /// One entry has a key MiniClaw does not know; the entry still counts.
    #[error("{}: MCP server `{name}`: unknown key `{key}` ignored", file.display())]
    UnknownKey {
        /// The file.
        file: PathBuf,
        /// The entry's name.
        name: String,
        /// The key.
        key: String,
    },
    /// One provider is broken; the rest of the file counts.
    #[error("{}: provider `{name}` was skipped: {what}", file.display())]
    Provider {
        /// The file.
        file: PathBuf,
        /// The provider's name.
        name: String,
        /// What is wrong.
        what: String,
    },
    /// Part of a provider (a model, a field) was left out; the provider still counts.
    #[error("{}: provider `{name}`: {what}", file.display())]
    ProviderNote {
        /// The file.
        file: PathBuf,
        /// The provider's name.
        name: String,
        /// What was left out, and why.
        what: String,
    },
}
