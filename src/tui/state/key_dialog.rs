//! The API key dialog as data: what was typed (drawn masked) and where the dialog stands (the
//! file a key is saved to is the state's `key_file`).

use crate::llm::KeyCheck;
use crate::secrets::Secret;

/// Where the dialog stands.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeyStage {
    /// The key is being typed; Enter checks it.
    #[default]
    Entry,
    /// The check request runs.
    Checking,
    /// Checked (or not checkable): "Save to <path>? y/n".
    Confirm {
        /// What the check said (never `Refused`: a refused key goes back to `Entry`).
        check: KeyCheck,
    },
    /// The key is being written to the key file.
    Saving,
}

/// The API key dialog.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KeyDialog {
    /// What was typed or pasted; only its mask is ever drawn.
    pub typed: Secret,
    /// Where the dialog stands.
    pub stage: KeyStage,
    /// Why the last try did not go on (a refused key, a character no key has), if it did not.
    pub note: Option<String>,
}
