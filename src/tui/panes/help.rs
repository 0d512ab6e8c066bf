//! The help overlay (F1): every key and slash command.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Borders, Clear, Paragraph};

use super::dialog::centered;
use crate::tui::state::{Overlay, State};

/// Every key and what it does, as shown in the help and the README.
pub const KEYS: [(&str, &str); 42] = [
    ("Enter", "send the message"),
    ("Alt+Enter / Ctrl+J", "new line in the message"),
    ("Up / Down", "earlier prompts (first / last line)"),
    ("@", "mention a file: its content goes along"),
    ("/ (start of the input)", "commands, filtered as you type"),
    (
        "Tab / Enter (popup)",
        "insert the file · complete / run the command",
    ),
    ("Up / Down / Esc (popup)", "choose in the popup · close it"),
    ("F1", "this help"),
    ("F2", "switch model flash ↔ pro"),
    ("F3", "show / hide the side panes"),
    ("Ctrl+L", "clear: a archives, y deletes (asks first)"),
    ("PageUp / PageDown", "scroll the focused pane a page"),
    ("Shift+Up / Shift+Down", "scroll by a line"),
    ("Home / End", "top / bottom (End follows again)"),
    ("Ctrl+Home / Ctrl+End", "top / bottom from anywhere"),
    ("Mouse wheel", "scroll the pane under the pointer"),
    ("Tab", "move focus between panes"),
    ("Shift+Tab", "approval mode: auto → ask → read-only"),
    ("Up / Down (timeline)", "select a step"),
    ("Enter / Space (timeline)", "expand / collapse the step"),
    (
        "Enter (conversation)",
        "show whole / fold the long prompts in view",
    ),
    ("Ctrl+O", "expand / collapse every step"),
    ("Ctrl+T", "show / hide the reasoning"),
    ("Ctrl+Y", "copy the last answer (OSC 52)"),
    (
        "Esc",
        "interrupt a turn (a queued message first) · close · back",
    ),
    ("Ctrl+C", "interrupt · clear input · twice quits"),
    ("Ctrl+D", "quit (on an empty input)"),
    ("Shift+drag", "select text (most terminals)"),
    (
        "/model [NAME]",
        "pick the model (any name the server knows)",
    ),
    ("/approval [MODE]", "auto · ask · read-only"),
    (
        "/undo · /diff",
        "put back the last turn's files · what this session changed",
    ),
    ("/new", "archive this session, start a new one"),
    ("/resume [TITLE]", "reopen an earlier session (picker)"),
    ("/rename TITLE", "name this session"),
    ("/steps [N]", "show or set the step limit"),
    ("/plan TASK", "plan it (read-only), edit, Enter runs it"),
    ("/copy [N]", "copy the last answer, or its N-th code block"),
    ("/init", "the model writes a starter AGENTS.md"),
    (
        "/instructions diff",
        "how AGENTS.md changed since the session read it",
    ),
    ("/clear /tools", "clear history · list tools"),
    ("/key", "enter the API key (masked, checked, saved)"),
    ("/help /quit", "this help · quit"),
];

/// How many lines the help holds.
pub fn line_count() -> usize {
    KEYS.len() + 2
}

/// Draws the help overlay; in a short terminal it scrolls (Up / Down / PageUp / PageDown).
pub fn draw(frame: &mut Frame<'_>, state: &State, area: Rect) {
    let theme = &state.theme;
    let rect = centered(area, 74, line_count() as u16 + 2);
    let lines: Vec<Line<'static>> = KEYS
        .iter()
        .map(|(k, what)| {
            Line::from(vec![
                Span::styled(format!("{k:>25}  "), theme.accent),
                Span::styled(what.to_string(), theme.text),
            ])
        })
        .chain([
            Line::default(),
            Line::styled("Esc, F1 or q closes this help", theme.muted).centered(),
        ])
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
    frame.render_widget(Clear, rect);
    frame.render_widget(
        Paragraph::new(lines).block(block).scroll((top as u16, 0)),
        rect,
    );
}
