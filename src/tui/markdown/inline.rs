//! The inline content of one paragraph, heading or table cell: styled runs as they arrive,
//! split at hard breaks, with the nesting of emphasis, strong, strikethrough and links.

use ratatui::style::Style;
use ratatui::text::Span;

use super::linebreak::Row;

/// Styled runs collected for one block of inline content.
#[derive(Debug)]
pub(crate) struct Inline {
    /// Pieces separated by hard breaks; the last is the one being filled.
    segments: Vec<Row>,
    /// Styles of the open spans (emphasis, links, …), innermost last.
    styles: Vec<Style>,
    /// The open links: their target and the text shown so far.
    links: Vec<(String, String)>,
}

impl Default for Inline {
    fn default() -> Self {
        Self {
            segments: vec![Vec::new()],
            styles: Vec::new(),
            links: Vec::new(),
        }
    }
}

impl Inline {
    /// `base` patched with every open span style.
    pub(crate) fn style(&self, base: Style) -> Style {
        self.styles.iter().fold(base, |s, p| s.patch(*p))
    }

    /// Opens a span style (emphasis, strong, …).
    pub(crate) fn open(&mut self, style: Style) {
        self.styles.push(style);
    }

    /// Closes the innermost span style.
    pub(crate) fn close(&mut self) {
        self.styles.pop();
    }

    /// Adds text in `style`.
    pub(crate) fn push(&mut self, text: &str, style: Style) {
        if text.is_empty() {
            return;
        }
        if let Some((_, shown)) = self.links.last_mut() {
            shown.push_str(text);
        }
        if let Some(seg) = self.segments.last_mut() {
            match seg.last_mut() {
                Some(last) if last.style == style => last.content.to_mut().push_str(text),
                _ => seg.push(Span::styled(text.to_string(), style)),
            }
        }
    }

    /// A soft break: a space, unless the line is still empty.
    pub(crate) fn soft_break(&mut self, style: Style) {
        if self.segments.last().is_some_and(|s| !s.is_empty()) {
            self.push(" ", style);
        }
    }

    /// A hard break: what follows starts a new line.
    pub(crate) fn hard_break(&mut self) {
        self.segments.push(Vec::new());
    }

    /// Opens a link to `url` (its text follows).
    pub(crate) fn open_link(&mut self, url: &str, style: Style) {
        self.links.push((url.to_string(), String::new()));
        self.styles.push(style);
    }

    /// Closes the innermost link: its target, when the text shown differs from it.
    pub(crate) fn close_link(&mut self) -> Option<String> {
        self.styles.pop();
        let (url, shown) = self.links.pop()?;
        let bare = url.strip_prefix("mailto:").unwrap_or(&url);
        (!url.is_empty() && shown.trim() != url && shown.trim() != bare).then_some(url)
    }

    /// Whether nothing but spaces was collected.
    pub(crate) fn is_blank(&self) -> bool {
        self.segments
            .iter()
            .flatten()
            .all(|s| s.content.trim().is_empty())
    }

    /// The collected pieces (one per hard break), leaving the span styles open.
    pub(crate) fn take(&mut self) -> Vec<Row> {
        std::mem::replace(&mut self.segments, vec![Vec::new()])
    }
}
