//! Colour themes named by meaning, loaded from TOML (built-in dark/light or a file), and the
//! monochrome theme used when `NO_COLOR` is set.

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

const DARK: &str = include_str!("../../themes/dark.toml");
const LIGHT: &str = include_str!("../../themes/light.toml");

/// Why a theme file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ThemeError {
    /// The file could not be read.
    #[error("cannot read {0}: {1}")]
    Read(String, std::io::Error),
    /// The file is not valid theme TOML.
    #[error("invalid theme TOML: {0}")]
    Parse(#[from] toml::de::Error),
    /// A colour value is not understood.
    #[error("unknown colour `{value}` for `{key}`")]
    Color {
        /// The colour's name.
        key: String,
        /// The value found.
        value: String,
    },
}

#[derive(Deserialize)]
struct ThemeFile {
    name: Option<String>,
    code_theme: Option<String>,
    #[serde(default)]
    colors: BTreeMap<String, String>,
}

/// How many colours the terminal shows; code highlighting picks its colours by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum ColorDepth {
    /// xterm's 256 colours: RGB colours are mapped to the nearest index.
    #[default]
    Indexed256,
    /// 24-bit RGB colours.
    TrueColor,
}

impl ColorDepth {
    /// The depth a `COLORTERM` value announces (`truecolor` or `24bit`, else 256 colours).
    pub fn from_colorterm(value: Option<&str>) -> Self {
        match value.map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            Some("truecolor" | "24bit") => Self::TrueColor,
            _ => Self::Indexed256,
        }
    }

    /// The depth of this process's terminal, from `COLORTERM` (read once).
    pub fn from_env() -> Self {
        static DEPTH: OnceLock<ColorDepth> = OnceLock::new();
        *DEPTH.get_or_init(|| {
            let value = std::env::var("COLORTERM").ok();
            Self::from_colorterm(value.as_deref())
        })
    }
}

/// The styles every pane draws with.
#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    /// The theme's name.
    pub name: String,
    /// Plain text.
    pub text: Style,
    /// Secondary text: hints, durations, labels.
    pub muted: Style,
    /// Highlights: titles, spinner, the focused border.
    pub accent: Style,
    /// Errors and failed steps.
    pub error: Style,
    /// Succeeded steps.
    pub success: Style,
    /// Warnings, retries, interruptions.
    pub warning: Style,
    /// The person's messages.
    pub user: Style,
    /// The model's messages.
    pub assistant: Style,
    /// Pane borders.
    pub border: Style,
    /// The focused pane's border.
    pub border_focused: Style,
    /// The selected timeline step.
    pub selection: Style,
    /// Reasoning text.
    pub reasoning: Style,
    /// The status line.
    pub status: Style,
    /// Whether colours are off (markdown colours are stripped).
    pub monochrome: bool,
    /// Whether the theme is light (picks a light code-highlighting theme).
    pub light: bool,
    /// The terminal's colour depth (code highlighting is RGB or the nearest of 256 colours).
    /// The built-in constructors say 256 colours; [`Theme::load`] asks the terminal.
    pub color_depth: ColorDepth,
}

impl Default for Theme {
    fn default() -> Self {
        Self::dark()
    }
}

impl Theme {
    /// The built-in dark theme.
    pub fn dark() -> Self {
        Self::from_toml(DARK).unwrap_or_else(|_| Self::monochrome())
    }

    /// The built-in light theme.
    pub fn light() -> Self {
        Self::from_toml(LIGHT).unwrap_or_else(|_| Self::monochrome())
    }

    /// A theme without colours: emphasis from bold, reverse and underline only.
    pub fn monochrome() -> Self {
        let plain = Style::default();
        Self {
            name: "monochrome".into(),
            text: plain,
            muted: plain,
            accent: plain.add_modifier(Modifier::BOLD),
            error: plain.add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            success: plain,
            warning: plain.add_modifier(Modifier::UNDERLINED),
            user: plain.add_modifier(Modifier::BOLD),
            assistant: plain.add_modifier(Modifier::BOLD),
            border: plain,
            border_focused: plain.add_modifier(Modifier::BOLD),
            selection: plain.add_modifier(Modifier::REVERSED),
            reasoning: plain,
            status: plain.add_modifier(Modifier::REVERSED),
            monochrome: true,
            light: false,
            color_depth: ColorDepth::Indexed256,
        }
    }

    /// Parses a theme file; colours it leaves out come from the dark theme's values.
    pub fn from_toml(text: &str) -> Result<Self, ThemeError> {
        let file: ThemeFile = toml::from_str(text)?;
        let base: ThemeFile = toml::from_str(DARK)?;
        let color = |key: &str| -> Result<Color, ThemeError> {
            let value = file
                .colors
                .get(key)
                .or_else(|| base.colors.get(key))
                .cloned()
                .unwrap_or_else(|| "reset".into());
            Color::from_str(value.trim()).map_err(|_| ThemeError::Color {
                key: key.into(),
                value,
            })
        };
        let fg = |key: &str| color(key).map(|c| Style::default().fg(c));
        Ok(Self {
            name: file.name.clone().unwrap_or_else(|| "custom".into()),
            text: fg("text")?,
            muted: fg("muted")?,
            accent: fg("accent")?.add_modifier(Modifier::BOLD),
            error: fg("error")?,
            success: fg("success")?,
            warning: fg("warning")?,
            user: fg("user")?.add_modifier(Modifier::BOLD),
            assistant: fg("assistant")?.add_modifier(Modifier::BOLD),
            border: fg("border")?,
            border_focused: fg("border_focused")?,
            selection: Style::default().bg(color("selection")?),
            reasoning: fg("reasoning")?.add_modifier(Modifier::ITALIC),
            status: fg("text")?.bg(color("status_bg")?),
            monochrome: false,
            light: file
                .code_theme
                .as_deref()
                .is_some_and(|c| c.contains("light") || c.contains("github")),
            color_depth: ColorDepth::Indexed256,
        })
    }

    /// The theme for `--theme NAME|PATH` (`None`: dark); a theme that cannot be loaded falls
    /// back to dark with a warning. `no_color` (the `NO_COLOR` variable) wins over everything.
    /// The colour depth comes from `COLORTERM`.
    pub fn load(name_or_path: Option<&str>, no_color: bool) -> (Theme, Option<String>) {
        let (mut theme, warning) = Self::load_named(name_or_path, no_color);
        theme.color_depth = ColorDepth::from_env();
        (theme, warning)
    }

    fn load_named(name_or_path: Option<&str>, no_color: bool) -> (Theme, Option<String>) {
        if no_color {
            return (Self::monochrome(), None);
        }
        let Some(spec) = name_or_path.map(str::trim).filter(|s| !s.is_empty()) else {
            return (Self::dark(), None);
        };
        let loaded = match spec {
            "dark" => Ok(Self::dark()),
            "light" => Ok(Self::light()),
            // A theme is a few KB; never blocks on a special file.
            path => crate::capped_read::read_capped_string(
                std::path::Path::new(path),
                256 * 1024,
                crate::capped_read::Links::Follow,
            )
            .map_err(|e| ThemeError::Read(path.into(), std::io::Error::other(e.to_string())))
            .and_then(|text| Self::from_toml(&text)),
        };
        match loaded {
            Ok(theme) => (theme, None),
            Err(e) => (
                Self::dark(),
                Some(format!(
                    "Theme `{spec}` could not be used ({e}); using the default dark theme. \
                     Built-in themes: dark, light."
                )),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_parse_and_differ() {
        assert_eq!(Theme::dark().name, "dark");
        assert_eq!(Theme::light().name, "light");
        assert_ne!(Theme::dark(), Theme::light());
        assert!(Theme::light().light);
    }

    #[test]
    fn broken_theme_falls_back_with_a_warning() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[colors]\naccent = \"not-a-colour\"\n").unwrap();
        let (theme, warning) = Theme::load(path.to_str(), false);
        assert_eq!(theme.name, "dark");
        assert!(warning.unwrap().contains("not-a-colour"));
        let (_, warning) = Theme::load(Some("/no/such/theme.toml"), false);
        assert!(warning.is_some());
    }

    #[test]
    fn no_color_gives_monochrome_without_colours() {
        let (theme, warning) = Theme::load(Some("light"), true);
        assert!(theme.monochrome && warning.is_none());
        for style in [theme.accent, theme.error, theme.selection, theme.status] {
            assert_eq!(style.fg, None);
            assert_eq!(style.bg, None);
        }
    }

    #[test]
    fn colorterm_truecolor_or_24bit_means_rgb() {
        assert_eq!(
            ColorDepth::from_colorterm(Some("truecolor")),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::from_colorterm(Some("24bit")),
            ColorDepth::TrueColor
        );
        assert_eq!(
            ColorDepth::from_colorterm(Some("8bit")),
            ColorDepth::Indexed256
        );
        assert_eq!(ColorDepth::from_colorterm(None), ColorDepth::Indexed256);
    }

    #[test]
    fn a_theme_file_by_path_is_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, "name = \"mine\"\n[colors]\naccent = \"#ff0000\"\n").unwrap();
        let (theme, warning) = Theme::load(path.to_str(), false);
        assert!(warning.is_none());
        assert_eq!(theme.name, "mine");
        assert_eq!(theme.accent.fg, Some(Color::Rgb(255, 0, 0)));
    }
}
