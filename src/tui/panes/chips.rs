//! A prompt's `@` mentions whose files went with it, drawn as chips: the mention stands out
//! from the text around it, and the file's content is never shown.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

/// The chip style: the accent on the selection's background.
pub fn chip_style(theme: &Theme) -> Style {
    theme.accent.patch(theme.selection)
}

/// One line of a prompt, each attached mention (`@` + one of `mentions`, starting a word) as
/// a chip.
pub fn prompt_line(line: &str, mentions: &[String], theme: &Theme) -> Line<'static> {
    if mentions.is_empty() || !line.contains('@') {
        return Line::styled(line.to_string(), theme.text);
    }
    let mut spans = Vec::new();
    let mut plain_from = 0;
    let mut at = 0;
    while let Some(found) = line[at..].find('@').map(|i| at + i) {
        let starts = line[..found]
            .chars()
            .next_back()
            .is_none_or(|p| p.is_whitespace() || "([{".contains(p));
        let after = &line[found + 1..];
        // The longest mention that is written here and ends a word.
        let chip = mentions
            .iter()
            .filter(|m| after.starts_with(m.as_str()))
            .filter(|m| {
                after[m.len()..]
                    .chars()
                    .next()
                    .is_none_or(|c| !c.is_alphanumeric())
            })
            .max_by_key(|m| m.len());
        match chip {
            Some(m) if starts => {
                if plain_from < found {
                    spans.push(Span::styled(
                        line[plain_from..found].to_string(),
                        theme.text,
                    ));
                }
                let end = found + 1 + m.len();
                spans.push(Span::styled(
                    line[found..end].to_string(),
                    chip_style(theme),
                ));
                plain_from = end;
                at = end;
            }
            _ => at = found + 1,
        }
    }
    if plain_from < line.len() {
        spans.push(Span::styled(line[plain_from..].to_string(), theme.text));
    }
    Line::from(spans)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attached_mentions_become_chips_and_other_text_stays_plain() {
        let theme = Theme::dark();
        let mentions = vec!["notes.md".to_string(), "\"my file.txt\"".to_string()];
        let line = prompt_line(
            "see @notes.md, @\"my file.txt\" and me@notes.md or @notes.mdx",
            &mentions,
            &theme,
        );
        let chips: Vec<&str> = line
            .spans
            .iter()
            .filter(|s| s.style == chip_style(&theme))
            .map(|s| s.content.as_ref())
            .collect();
        assert_eq!(chips, ["@notes.md", "@\"my file.txt\""]);
        let text: String = line.spans.iter().map(|s| s.content.as_ref()).collect();
        assert_eq!(
            text,
            "see @notes.md, @\"my file.txt\" and me@notes.md or @notes.mdx"
        );
        assert_eq!(prompt_line("plain", &mentions, &theme).spans.len(), 1);
    }
}
