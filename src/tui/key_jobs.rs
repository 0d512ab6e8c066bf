//! The API key dialog's work outside the state: checking a key with the model server and saving
//! it to the key file, each off the event loop, reporting back through a channel the loop reads.
//! The key goes only to the model client's holder, the key file, and the configured base URL.

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::update::KeyReport;
use crate::llm::LlmClient;
use crate::secrets::Secret;
use crate::secrets::key_file;

/// Runs the dialog's checks and saves for one model client.
pub struct KeyJobs {
    client: LlmClient,
    reports: UnboundedSender<KeyReport>,
}

impl KeyJobs {
    /// Jobs for `client` (a clone of the agent's: they share its key holder), and the receiver
    /// of what they find.
    pub fn new(client: LlmClient) -> (Self, UnboundedReceiver<KeyReport>) {
        let (reports, rx) = unbounded_channel();
        (Self { client, reports }, rx)
    }

    /// Whether the dialog has no key to ask for with `preset`: DeepSeek's key is set, or the
    /// model is another provider's (whose key comes from its own variable, never the dialog).
    pub fn is_set(&self, preset: &crate::llm::Preset) -> bool {
        !preset.is_deepseek() || self.client.has_key()
    }

    /// Checks `key` with one request to the model server.
    pub fn check(&self, key: Secret) {
        let client = self.client.clone();
        let reports = self.reports.clone();
        tokio::spawn(async move {
            let check = client.check_key(&key).await;
            tracing::info!(?check, "checked an API key");
            let _ = reports.send(KeyReport::Checked { key, check });
        });
    }

    /// Uses `key` from the next request on; with `save`, also writes it to the key file (on a
    /// blocking thread) and follows that file from then on.
    pub fn use_key(&self, key: Secret, save: bool) {
        let holder = self.client.key().clone();
        holder.set(key.clone(), false);
        if !save {
            return;
        }
        let reports = self.reports.clone();
        let path = holder.file().or_else(key_file::path);
        tokio::task::spawn_blocking(move || {
            let result = match &path {
                Some(path) => key_file::save_key(path, &key).map_err(|e| e.to_string()),
                None => Err("this system has no config folder to save it in".to_string()),
            };
            match &result {
                Ok(()) => {
                    holder.set(key, true);
                    if let Some(path) = &path {
                        tracing::info!(file = %path.display(), "saved the API key");
                    }
                }
                Err(e) => tracing::warn!(error = %e, "could not save the API key"),
            }
            let _ = reports.send(KeyReport::Saved(result));
        });
    }
}
