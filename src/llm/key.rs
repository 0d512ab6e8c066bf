//! The model key as the client reads it before every request: one holder shared by every clone
//! of the client, so a key entered in the key dialog or written to the key file
//! (`<config dir>/miniclaw/.env`) is used from the next send on, without a restart.
//!
//! The key never enters the process environment (see `secrets`): it goes from the file or the
//! dialog straight into this holder.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

use crate::secrets::Secret;
use crate::secrets::key_file::{self, Fingerprint, KeyFileError};

/// Where the key in use came from; it decides what a change of the key file does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    /// The environment or `./.env`, which win over the key file: the file is not followed.
    Pinned,
    /// The key file, or no key yet: the file is followed, a key removed from it included.
    File,
    /// Typed in the dialog for this run: replaced when the key file gains a key.
    Typed,
}

struct Held {
    key: Option<Secret>,
    /// Where this key alone goes, when not to the client's base URL: the project's own key
    /// with the project's own `DEEPSEEK_BASE_URL`. Any key set later goes to the client's.
    url: Option<String>,
    origin: Origin,
    /// The key file to follow (`None`: the key is fixed).
    file: Option<PathBuf>,
    /// The key file as last read.
    seen: Option<Fingerprint>,
}

/// The replaceable key of a model client; clones share it.
#[derive(Clone)]
pub struct ApiKey {
    held: Arc<Mutex<Held>>,
}

impl std::fmt::Debug for ApiKey {
    // Written by hand so the key can never reach a log or a panic message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self.lock();
        f.debug_struct("ApiKey")
            .field("key", &held.key.as_ref().map(|_| "<redacted>"))
            .field("origin", &held.origin)
            .field("url", &held.url)
            .field("file", &held.file)
            .finish()
    }
}

impl ApiKey {
    /// A key that stays as given (blank counts as none); no file is followed.
    pub fn fixed(key: Option<String>) -> Self {
        Self::fixed_for(key, None)
    }

    /// A key that stays as given and goes to `url` instead of the client's base URL (`None`:
    /// the client's).
    pub fn fixed_for(key: Option<String>, url: Option<String>) -> Self {
        let key = key.filter(|k| !k.trim().is_empty()).map(Secret::new);
        Self::from_held(Held {
            key,
            url,
            origin: Origin::Pinned,
            file: None,
            seen: None,
        })
    }

    /// The key configured at start (`None`: none), where it goes (`start_url`, see
    /// [`ApiKey::fixed_for`]) and the key file to follow. The file is read once now to learn
    /// whether the key came from it; a key from the environment or `./.env` wins over the
    /// file, as it did at start, and is kept. A key from the file or the dialog always goes
    /// to the client's base URL.
    pub fn following(start: Option<String>, start_url: Option<String>, file: PathBuf) -> Self {
        let start = start.filter(|k| !k.trim().is_empty()).map(Secret::new);
        let seen = key_file::fingerprint(&file);
        let in_file = key_file::read_key(&file).ok().flatten();
        let origin = match (&start, &in_file) {
            (None, _) => Origin::File,
            (Some(key), Some(found)) if key == found => Origin::File,
            (Some(_), _) => Origin::Pinned,
        };
        let url = if origin == Origin::Pinned {
            start_url
        } else {
            None
        };
        Self::from_held(Held {
            key: start,
            url,
            origin,
            file: Some(file),
            seen,
        })
    }

    fn from_held(held: Held) -> Self {
        Self {
            held: Arc::new(Mutex::new(held)),
        }
    }

    /// The plain data behind the lock stays valid even if a holder panicked.
    fn lock(&self) -> MutexGuard<'_, Held> {
        self.held.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The key of the next request.
    pub fn get(&self) -> Option<Secret> {
        self.lock().key.clone()
    }

    /// The key of the next request and the URL it must go to instead of the client's base URL
    /// (read together, so a key never goes to another key's URL).
    pub fn get_routed(&self) -> (Option<Secret>, Option<String>) {
        let held = self.lock();
        (held.key.clone(), held.url.clone())
    }

    /// Whether a key is set.
    pub fn is_set(&self) -> bool {
        self.lock().key.is_some()
    }

    /// The key file followed, if any.
    pub fn file(&self) -> Option<PathBuf> {
        self.lock().file.clone()
    }

    /// Uses `key` from the next request on. `saved`: it was just written to the key file, which
    /// is followed from now on; otherwise it holds for this run until the file gains a key.
    pub fn set(&self, key: Secret, saved: bool) {
        let mut held = self.lock();
        held.key = Some(key);
        held.url = None;
        held.origin = if saved { Origin::File } else { Origin::Typed };
        // Read the file again at the next send, whatever it looked like before.
        held.seen = None;
    }

    /// Reads the key file again when no key is set or the file changed since it was last read;
    /// returns whether the key changed. An error is reported once per version of the file.
    pub fn refresh(&self) -> Result<bool, KeyFileError> {
        let mut held = self.lock();
        let Some(file) = held.file.clone() else {
            return Ok(false);
        };
        if held.origin == Origin::Pinned && held.key.is_some() {
            return Ok(false);
        }
        let now = key_file::fingerprint(&file);
        let changed = now != held.seen;
        if !changed && held.key.is_some() {
            return Ok(false);
        }
        held.seen = now;
        let found = match key_file::read_key(&file) {
            Ok(found) => found,
            Err(e) if changed => return Err(e),
            Err(_) => return Ok(false),
        };
        let before = held.key.clone();
        match found {
            Some(key) => {
                held.key = Some(key);
                held.url = None;
                held.origin = Origin::File;
            }
            // Taken out of the file: no key. A key typed for this run stays.
            None if held.origin == Origin::File => {
                held.key = None;
                held.url = None;
            }
            None => {}
        }
        if held.key != before {
            tracing::info!(file = %file.display(), set = held.key.is_some(), "read the API key again from the key file");
        }
        Ok(held.key != before)
    }

    /// [`ApiKey::refresh`] on a blocking thread, off the async runtime.
    pub async fn refresh_off_thread(&self) -> Result<bool, KeyFileError> {
        let key = self.clone();
        tokio::task::spawn_blocking(move || key.refresh())
            .await
            .unwrap_or(Ok(false))
    }
}
