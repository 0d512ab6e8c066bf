//! The API key dialog: the key masked as it is typed (a • per character), its check, then
//! "Save it to <path>? (y/n)". Reads the state only; the key itself is never drawn.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Padding, Paragraph};

use super::dialog::centered;
use crate::llm::KeyCheck;
use crate::secrets::Secret;
use crate::tui::state::{KeyDialog, KeyStage, State};
use crate::tui::wrap;

/// The dialog's widest width.
const WIDTH: u16 = 76;

/// From this length on, a checked key shows its last four characters (never the whole key).
const TAIL_FROM: usize = 16;

/// The key as drawn: a • per character, the last four shown when `tail` is set and the key is
/// long enough; cut at the front (`…`) to fit `room` columns.
pub fn mask(key: &Secret, tail: bool, room: usize) -> String {
    let chars = key.chars();
    let shown = if tail && chars >= TAIL_FROM { 4 } else { 0 };
    let end: String = key.expose().chars().skip(chars - shown).collect();
    let mut text = "•".repeat(chars - shown) + &end;
    let len = chars;
    if len > room && room > 1 {
        text = std::iter::once('…')
            .chain(text.chars().skip(len - (room - 1)))
            .collect();
    }
    text
}

/// Draws the dialog centred in `area`.
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let width = WIDTH.min(area.width);
    let room = usize::from(width.saturating_sub(4));
    let lines = wrap::wrap_lines(&body(state, room), room);
    let rect = centered(area, width, lines.len() as u16 + 2);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_type(BorderType::Double)
        .border_style(state.theme.border_focused)
        .padding(Padding::horizontal(1))
        .title(Span::styled(" DeepSeek API key ", state.theme.accent));
    super::clear_under(frame, rect);
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

/// The dialog's lines before wrapping, `room` columns wide.
fn body(state: &State, room: usize) -> Vec<Line<'static>> {
    let theme = &state.theme;
    let closed = KeyDialog::default();
    let dialog = state.overlay.key_dialog().unwrap_or(&closed);
    let path = state.key_file.clone();
    let lead = if state.key_set {
        "Enter a new DeepSeek API key; it replaces the one in use."
    } else {
        "MiniClaw needs a DeepSeek API key to talk to the model."
    };
    let mut lines = vec![
        Line::styled(lead, theme.text),
        // Where a key comes from, for someone who has none yet.
        Line::styled(
            "Get one at https://platform.deepseek.com/api_keys (sign in, then Create API key).",
            theme.muted,
        ),
        Line::styled(
            format!("Type or paste it (it stays masked). Keys are best kept in {path}."),
            theme.muted,
        ),
        Line::default(),
        key_line(state, dialog, room),
        Line::default(),
    ];
    let (status, question, hint): (Line<'static>, Option<String>, &str) = match &dialog.stage {
        KeyStage::Entry => (
            Line::styled(dialog.note.clone().unwrap_or_default(), theme.warning),
            None,
            "Enter checks it with one request · Ctrl+U clears · Esc closes",
        ),
        KeyStage::Checking => (
            Line::styled("Checking the key with the model server…", theme.accent),
            None,
            "Esc closes",
        ),
        KeyStage::Confirm {
            check: KeyCheck::Unchecked { reason },
        } => (
            Line::styled(
                format!("! Could not check the key: {reason}."),
                theme.warning,
            ),
            Some(format!("Save it to {path} anyway? (y/n)")),
            "y saves it (readable only by you) · n: this run only · Esc drops it",
        ),
        KeyStage::Confirm { .. } => (
            Line::styled("✓ The model server accepted the key.", theme.success),
            Some(format!("Save it to {path}? (y/n)")),
            "y saves it (readable only by you) · n: this run only · Esc drops it",
        ),
        KeyStage::Saving => (
            Line::styled(format!("Saving the key to {path}…"), theme.accent),
            None,
            "",
        ),
    };
    lines.push(status);
    if let Some(question) = question {
        lines.push(Line::styled(question, theme.accent));
    }
    lines.push(Line::styled(hint.to_string(), theme.muted));
    lines
}

/// `Key  ••••••▏`: the mask, with a cursor while typing.
fn key_line(state: &State, dialog: &KeyDialog, room: usize) -> Line<'static> {
    let theme = &state.theme;
    let typing = dialog.stage == KeyStage::Entry;
    let checked = matches!(dialog.stage, KeyStage::Confirm { .. });
    let label = "Key  ";
    let room = room.saturating_sub(wrap::width(label) + usize::from(typing));
    let mut spans = vec![
        Span::styled(label, theme.muted),
        Span::styled(mask(&dialog.typed, checked, room), theme.text),
    ];
    if typing {
        spans.push(Span::styled("▏", theme.accent));
    }
    Line::from(spans)
}
