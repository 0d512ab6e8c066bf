//! The question asked the first time the full-screen UI starts in a folder nobody named: work
//! here? A dialog drawn on the screen, before the agent, its tools or any server start, naming
//! what the tools may read and change. Keys are read by [`answer_for`] (pure), the dialog drawn
//! by [`draw`] (which changes nothing); [`ask`] runs the two on the terminal.

use std::path::PathBuf;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use ratatui::Frame;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Paragraph};

use super::Theme;

/// What the dialog asks about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FolderQuestion {
    /// The folder that would be the workspace (as resolved: links followed).
    pub folder: PathBuf,
    /// Where MiniClaw would keep this folder's history.
    pub history: PathBuf,
    /// The approval mode the tools would start in.
    pub approval: crate::approval::ApprovalMode,
}

/// The person's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FolderAnswer {
    /// Work here (remembered for this folder).
    Yes,
    /// Do not; quit.
    No,
}

/// The answer `key` gives, if any: `y` or Enter yes; `n`, Esc, `q` or Ctrl+C no.
pub fn answer_for(key: &KeyEvent) -> Option<FolderAnswer> {
    if key.kind == KeyEventKind::Release {
        return None;
    }
    match key.code {
        KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
            Some(FolderAnswer::No)
        }
        KeyCode::Char('y' | 'Y') | KeyCode::Enter => Some(FolderAnswer::Yes),
        KeyCode::Char('n' | 'N' | 'q') | KeyCode::Esc => Some(FolderAnswer::No),
        _ => None,
    }
}

/// The dialog's lines.
fn lines<'a>(q: &'a FolderQuestion, theme: &Theme) -> Vec<Line<'a>> {
    let folder = crate::terminal_text::clean(&q.folder.display().to_string());
    let history = crate::terminal_text::clean(&q.history.display().to_string());
    let what = |text: &'static str| {
        Line::from(vec![
            Span::styled("  • ", theme.accent),
            Span::styled(text, theme.text),
        ])
    };
    vec![
        Line::styled("MiniClaw would work in", theme.text),
        Line::styled(
            format!("  {folder}"),
            theme.accent.add_modifier(ratatui::style::Modifier::BOLD),
        ),
        Line::default(),
        Line::styled("Its tools may:", theme.text),
        what(
            "read, list and search the files inside this folder (never .env* files, nothing outside it)",
        ),
        what("create and change files inside it"),
        what(
            "run commands there (builds, tests) in a jail that keeps them inside it, with no network unless you say yes",
        ),
        Line::from(vec![
            Span::styled("  as the approval mode allows (now ", theme.muted),
            Span::styled(q.approval.name(), theme.text),
            Span::styled("; /approval or Shift+Tab changes it).", theme.muted),
        ]),
        Line::default(),
        Line::styled(
            format!("MiniClaw keeps this folder's history in {history}."),
            theme.muted,
        ),
        Line::styled(
            "A yes is remembered for this folder; -C DIR picks another one.",
            theme.muted,
        ),
    ]
}

/// The key hints, in the dialog's bottom border: always in sight, however the text wraps.
fn keys(theme: &Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(" y", theme.accent),
        Span::styled(" / ", theme.muted),
        Span::styled("Enter", theme.accent),
        Span::styled(" work here  ", theme.text),
        Span::styled("n", theme.accent),
        Span::styled(" / ", theme.muted),
        Span::styled("Esc", theme.accent),
        Span::styled(" quit ", theme.text),
    ])
}

/// Draws the dialog in the middle of `area`.
pub fn draw(frame: &mut Frame, area: Rect, q: &FolderQuestion, theme: &Theme) {
    let width = area.width.min(90);
    // Wrapped here, as the conversation wraps, so the height is exact.
    let inner = usize::from(width.saturating_sub(4).max(1));
    let text: Vec<Line> = lines(q, theme)
        .iter()
        .flat_map(|l| super::wrap::wrap_hanging(l, inner))
        .collect();
    let rows = u16::try_from(text.len()).unwrap_or(u16::MAX);
    let height = rows.saturating_add(2).min(area.height);
    let [row] = Layout::vertical([Constraint::Length(height)])
        .flex(Flex::Center)
        .areas(area);
    let [dialog] = Layout::horizontal([Constraint::Length(width)])
        .flex(Flex::Center)
        .areas(row);
    super::panes::clear_under(frame, dialog);
    let block = Block::bordered()
        .border_type(BorderType::Rounded)
        .border_style(theme.border_focused)
        .title(Span::styled(" Work in this folder? ", theme.accent))
        .title_bottom(keys(theme))
        .padding(ratatui::widgets::Padding::horizontal(1));
    frame.render_widget(Paragraph::new(text).block(block), dialog);
}

/// Asks `q` on the full-screen terminal and waits for the answer; the terminal is restored
/// before it returns. Blocking: call it before the async runtime's work starts.
pub fn ask(q: &FolderQuestion, theme: &Theme) -> std::io::Result<FolderAnswer> {
    let (mut terminal, _guard) = super::terminal::init(false, !theme.monochrome)?;
    let mut shown: Option<std::time::Instant> = None;
    loop {
        terminal.draw(|frame| draw(frame, frame.area(), q, theme))?;
        let since = *shown.get_or_insert_with(std::time::Instant::now);
        match crossterm::event::read()? {
            // A key typed before the question could be read (a prompt typed at once) is not
            // its answer: as in the approval dialog, the first moments' keys are held back.
            Event::Key(key)
                if since.elapsed() < crate::tui::state::ANSWER_GRACE
                    && answer_for(&key).is_some() =>
            {
                tracing::debug!(
                    "a key came as the folder question appeared: not taken as its answer"
                );
            }
            Event::Key(_) if since.elapsed() < crate::tui::state::ANSWER_GRACE => {}
            Event::Key(key) => {
                if let Some(answer) = answer_for(&key) {
                    return Ok(answer);
                }
            }
            // Drawn again at the new size (the viewport is fixed, see `terminal::init`).
            Event::Resize(cols, rows) => {
                terminal.resize(ratatui::layout::Rect::new(0, 0, cols, rows))?;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    fn question() -> FolderQuestion {
        FolderQuestion {
            folder: PathBuf::from("/home/ana/src/project"),
            history: PathBuf::from("/home/ana/.local/share/miniclaw/projects/project-0a1b2c3d4e5f"),
            approval: crate::approval::ApprovalMode::Auto,
        }
    }

    fn screen(width: u16, height: u16) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        let theme = Theme::load(Some("dark"), false).0;
        terminal
            .draw(|f| draw(f, f.area(), &question(), &theme))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..height)
            .map(|y| {
                (0..width)
                    .map(|x| buffer[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn the_dialog_names_the_folder_what_the_tools_may_do_and_where_the_history_goes() {
        for (w, h) in [(160, 45), (80, 24), (60, 20)] {
            let shown = screen(w, h);
            assert!(shown.contains("Work in this folder?"), "{w}×{h}\n{shown}");
            assert!(shown.contains("/home/ana/src/project"), "{w}×{h}\n{shown}");
            assert!(shown.contains("run commands there"), "{w}×{h}\n{shown}");
            assert!(shown.contains("history in"), "{w}×{h}\n{shown}");
            assert!(
                shown.contains("y / Enter work here  n / Esc quit"),
                "{w}×{h}\n{shown}"
            );
            assert!(shown.contains("-C DIR"), "{w}×{h}\n{shown}");
        }
        let wide = screen(160, 45);
        assert!(wide.contains("projects/project-0a1b2c3d4e5f"), "{wide}");
        assert!(wide.contains("╭"), "a dialog drawn on the screen\n{wide}");
    }

    #[test]
    fn a_wrapped_bullet_goes_on_under_its_text() {
        let shown = screen(60, 24);
        let rows: Vec<&str> = shown.lines().collect();
        let at = rows
            .iter()
            .position(|r| r.contains("• run commands there"))
            .unwrap_or_else(|| panic!("{shown}"));
        let column = |r: &str| r.chars().position(|c| c == '•');
        let text_column = column(rows[at]).unwrap() + 2;
        // The next row continues the bullet, starting where its text starts.
        let next = rows[at + 1];
        let starts = next
            .chars()
            .skip(1)
            .position(|c| c != ' ')
            .map(|p| p + 1)
            .unwrap();
        assert_eq!(starts, text_column, "{shown}");
    }

    #[test]
    fn keys_answer_yes_or_no_and_the_rest_wait() {
        let key = |code, mods| KeyEvent::new(code, mods);
        let none = KeyModifiers::NONE;
        assert_eq!(
            answer_for(&key(KeyCode::Char('y'), none)),
            Some(FolderAnswer::Yes)
        );
        assert_eq!(
            answer_for(&key(KeyCode::Enter, none)),
            Some(FolderAnswer::Yes)
        );
        assert_eq!(
            answer_for(&key(KeyCode::Char('n'), none)),
            Some(FolderAnswer::No)
        );
        assert_eq!(answer_for(&key(KeyCode::Esc, none)), Some(FolderAnswer::No));
        assert_eq!(
            answer_for(&key(KeyCode::Char('c'), KeyModifiers::CONTROL)),
            Some(FolderAnswer::No)
        );
        assert_eq!(answer_for(&key(KeyCode::Char('x'), none)), None);
        assert_eq!(answer_for(&key(KeyCode::Up, none)), None);
    }
}
