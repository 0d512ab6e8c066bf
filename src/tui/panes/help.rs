//! The help overlay (F1): every key and slash command, read from the tables the keymap and the
//! command dispatcher use (`keymap/bindings.rs`, `commands.rs`), wrapped to the overlay's width.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Paragraph};

use super::dialog::centered;
use crate::tui::commands::COMMANDS;
use crate::tui::keymap::bindings::KEYS;
use crate::tui::state::{Overlay, State};
use crate::tui::wrap::{width, wrap_text};

/// The overlay's widest width, borders included.
const WIDTH: u16 = 88;
/// The widest the key column gets (it narrows to half the overlay's inside).
const KEY_COLUMN: usize = 25;
/// Columns between the keys and what they do.
const GAP: usize = 2;
/// The last line.
const FOOTER: &str = "Esc, F1 or q closes this help";

/// One line of the help, wrapped.
#[derive(Clone, Debug, PartialEq, Eq)]
enum HelpLine {
    /// A section's title.
    Heading(&'static str),
    /// A piece of keys (right-aligned to the key column) and a piece of what they do.
    Item(String, String),
    /// An empty line.
    Blank,
    /// The closing hint.
    Footer,
}

/// Every row of the help: (keys or command, what it does), by section.
/// `enhanced`: whether the terminal tells Shift+Enter from Enter (else those keys are left out).
fn sections(enhanced: bool) -> [(&'static str, Vec<(String, String)>); 2] {
    let keys = KEYS
        .iter()
        .map(|b| (b.label_for(enhanced), b.about.to_string()))
        .collect();
    let commands = COMMANDS
        .iter()
        .map(|c| {
            let mut about = c.about.to_string();
            if !c.aliases.is_empty() {
                let aliases: Vec<String> = c.aliases.iter().map(|a| format!("/{a}")).collect();
                about.push_str(&format!(" (also {})", aliases.join(", ")));
            }
            (c.usage(), about)
        })
        .collect();
    [("Keys", keys), ("Slash commands", commands)]
}

/// The help's lines for an inside `inner` columns wide: each row's keys and text wrapped in
/// their columns, so nothing is cut however narrow the terminal.
fn help_lines(inner: usize, enhanced: bool) -> Vec<HelpLine> {
    let key_width = KEY_COLUMN.min(inner / 2).max(1);
    // A column spare before the border, so text never touches it.
    let text_width = inner.saturating_sub(key_width + GAP + 1).max(1);
    let mut out = Vec::new();
    for (title, rows) in sections(enhanced) {
        out.push(HelpLine::Heading(title));
        for (keys, about) in rows {
            let keys = wrap_words(&keys, key_width);
            let about = wrap_words(&about, text_width);
            for i in 0..keys.len().max(about.len()) {
                let key = keys.get(i).map_or("", String::as_str);
                let pad = " ".repeat(key_width.saturating_sub(width(key)));
                let text = about.get(i).cloned().unwrap_or_default();
                out.push(HelpLine::Item(format!("{pad}{key}"), text));
            }
        }
        out.push(HelpLine::Blank);
    }
    out.push(HelpLine::Footer);
    out
}

/// `text` in lines at most `max` columns wide, broken between words (a word wider than a line
/// is broken where it must): a key's name stays whole where it fits.
fn wrap_words(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let wanted = if line.is_empty() {
            width(word)
        } else {
            width(&line) + 1 + width(word)
        };
        if wanted <= max {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        let mut pieces: Vec<String> = wrap_text(word, Style::default(), max)
            .iter()
            .map(|l| l.to_string())
            .collect();
        line = pieces.pop().unwrap_or_default();
        lines.extend(pieces);
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// The overlay's rectangle in `area` and its lines.
fn layout(area: Rect, enhanced: bool) -> (Rect, Vec<HelpLine>) {
    let inner = usize::from(WIDTH.min(area.width).saturating_sub(2));
    let lines = help_lines(inner, enhanced);
    let height = u16::try_from(lines.len() + 2).unwrap_or(u16::MAX);
    (centered(area, WIDTH, height), lines)
}

/// The farthest the help scrolls in a `screen`-sized terminal (its last line at the bottom).
pub fn scroll_limit(screen: Rect, enhanced: bool) -> usize {
    let (rect, lines) = layout(screen, enhanced);
    lines
        .len()
        .saturating_sub(usize::from(rect.height.saturating_sub(2)))
}

/// Draws the help overlay; in a short terminal it scrolls (Up / Down / PageUp / PageDown).
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let theme = &state.theme;
    let (rect, help) = layout(area, state.keyboard_enhanced);
    let lines: Vec<Line<'static>> = help
        .into_iter()
        .map(|line| match line {
            HelpLine::Heading(title) => Line::styled(title, theme.muted),
            HelpLine::Item(keys, text) => Line::from(vec![
                Span::styled(keys, theme.accent),
                Span::raw(" ".repeat(GAP)),
                Span::styled(text, theme.text),
            ]),
            HelpLine::Blank => Line::default(),
            HelpLine::Footer => Line::styled(FOOTER, theme.muted).centered(),
        })
        .collect();
    let visible = usize::from(rect.height.saturating_sub(2));
    let scroll = match state.overlay {
        Overlay::Help { scroll } => scroll,
        _ => 0,
    };
    let top = scroll.min(lines.len().saturating_sub(visible));
    let mut block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(theme.border_focused)
        .title(Span::styled(" MiniClaw keys ", theme.accent));
    if top + visible < lines.len() {
        block = block
            .title_bottom(Line::styled(" ↓ more: Down / PageDown ", theme.warning).right_aligned());
    } else if top > 0 {
        block = block.title_bottom(Line::styled(" ↑ Up / PageUp ", theme.muted).right_aligned());
    }
    let top = u16::try_from(top).unwrap_or(u16::MAX);
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(lines).block(block).scroll((top, 0)), rect);
}
