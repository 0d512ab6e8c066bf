//! What the person chose last time, kept across restarts: the model and the theme, in
//! `<data dir>/miniclaw/choices.json`. A missing or unreadable file means "nothing remembered".
//! What belongs to one folder (the approval mode, the yes to working there) is kept per folder
//! ([`folders`]), with the command rules made there (their words; `command_rules` reads them).

pub mod folders;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

/// The choices kept.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Choices {
    /// The model (a preset name or any other model name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The provider of the model (none: DeepSeek).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// The theme (`dark`, `light` or a theme file's path).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<String>,
    /// The approval mode as versions before the per-folder records kept it, for every folder
    /// at once. No longer read nor written: a mode chosen in one project must not silently
    /// deny writes in another (issue 22). Kept in the type so a save leaves it in the file for
    /// an older MiniClaw that still reads it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<crate::approval::ApprovalMode>,
    /// Model names used, newest first (the `/model` picker offers them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub recent_models: Vec<String>,
}

impl Choices {
    /// The remembered model as `/model` takes it: `provider/model`, or DeepSeek's name alone.
    pub fn label(&self) -> String {
        let model = self.model.as_deref().unwrap_or("");
        match self.provider.as_deref() {
            Some(provider) if provider != crate::settings::BUILT_IN_PROVIDER => {
                format!("{provider}/{model}")
            }
            _ => model.to_string(),
        }
    }
}

/// Where the choices live (`None` without a data directory).
pub fn path() -> Option<PathBuf> {
    crate::paths::data_dir().map(|d| d.join("choices.json"))
}

/// The choices kept at `path` (none when the file is missing or unreadable).
pub fn load(path: &Path) -> Choices {
    // A few hundred bytes in real use; never blocks on a special file.
    crate::capped_read::read_capped(path, 64 * 1024, crate::capped_read::Links::Refuse)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// One save of the choices at a time in this process. Saves come from separate threads (F2 and
/// Shift+Tab each start one off the event loop), and each reads the file, changes one field and
/// writes it back: without this, two saves in the same instant both read the old file and the
/// later write drops the earlier one's change. A lock file would also cover two MiniClaw
/// processes, at the price of a file that can be left behind; one person's two windows
/// choosing in the same millisecond is not worth it.
static SAVING: Mutex<()> = Mutex::new(());

/// Keeps `update` applied to the choices at `path`, durably (`durable::replace`: a crash never
/// leaves half a file). Saves of this process are applied one after the other, so each one's
/// change survives.
pub fn remember(path: &Path, update: impl FnOnce(&mut Choices)) -> std::io::Result<()> {
    // A save that panicked left the file whole (the write is atomic): the lock is still good.
    let _saving = SAVING.lock().unwrap_or_else(|e| e.into_inner());
    let mut choices = load(path);
    update(&mut choices);
    let bytes = serde_json::to_vec_pretty(&choices).map_err(std::io::Error::other)?;
    crate::durable::replace(path, |file| file.write_all(&bytes)).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choices_are_kept_and_a_broken_file_means_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("miniclaw/choices.json");
        assert_eq!(load(&path), Choices::default());
        remember(&path, |c| c.model = Some("deepseek-v4-pro".into())).unwrap();
        remember(&path, |c| c.theme = Some("light".into())).unwrap();
        let kept = load(&path);
        assert_eq!(kept.model.as_deref(), Some("deepseek-v4-pro"));
        assert_eq!(kept.theme.as_deref(), Some("light"));
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(load(&path), Choices::default());
    }

    #[test]
    fn choices_saved_in_the_same_instant_all_survive() {
        use crate::approval::ApprovalMode;
        type Save = Box<dyn FnOnce(&mut Choices) + Send>;
        // Several rounds: one round of eight racing saves could happen to come out right.
        for round in 0..10 {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("miniclaw/choices.json");
            let mut saves: Vec<Save> = vec![
                Box::new(|c| c.model = Some("deepseek-v4-pro".into())),
                Box::new(|c| c.provider = Some("openrouter".into())),
                Box::new(|c| c.theme = Some("light".into())),
                Box::new(|c| c.approval = Some(ApprovalMode::ReadOnly)),
            ];
            for i in 0..4 {
                saves.push(Box::new(move |c| {
                    c.recent_models.push(format!("model-{i}"))
                }));
            }
            let barrier = std::sync::Barrier::new(saves.len());
            std::thread::scope(|s| {
                for save in saves {
                    let (path, barrier) = (&path, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        remember(path, save).unwrap();
                    });
                }
            });
            let kept = load(&path);
            assert_eq!(
                kept.model.as_deref(),
                Some("deepseek-v4-pro"),
                "round {round}"
            );
            assert_eq!(
                kept.provider.as_deref(),
                Some("openrouter"),
                "round {round}"
            );
            assert_eq!(kept.theme.as_deref(), Some("light"), "round {round}");
            assert_eq!(kept.approval, Some(ApprovalMode::ReadOnly), "round {round}");
            let mut recent = kept.recent_models.clone();
            recent.sort();
            assert_eq!(
                recent,
                ["model-0", "model-1", "model-2", "model-3"],
                "round {round}"
            );
            let left: Vec<_> = std::fs::read_dir(path.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name())
                .collect();
            assert_eq!(left, ["choices.json"], "no temporary file left");
        }
    }
}
