//! What the person chose last time, kept across restarts: the model and the theme, in
//! `<data dir>/miniclaw/choices.json`. A missing or unreadable file means "nothing remembered".

use std::path::{Path, PathBuf};

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
    /// The approval mode (`auto`, `ask`, `read-only`).
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

/// Keeps `update` applied to the choices at `path`: written to a temporary file beside it and
/// renamed over it, so a crash never leaves half a file.
pub fn remember(path: &Path, update: impl FnOnce(&mut Choices)) -> std::io::Result<()> {
    let mut choices = load(path);
    update(&mut choices);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let tmp = path.with_extension(format!("json.tmp-{}", std::process::id()));
    let bytes = serde_json::to_vec_pretty(&choices).map_err(std::io::Error::other)?;
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
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
}
