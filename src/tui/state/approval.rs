//! Calls waiting for a yes or no (the `ask` approval mode), as the dialog shows them.

use std::time::{Duration, Instant};

use crate::approval::{ApprovalRequest, CommandPrompt};

/// After a dialog appears, y / a / n are not taken for this long: a key typed for something
/// else (a message being written) must not answer a call the person has not seen.
pub const ANSWER_GRACE: Duration = Duration::from_millis(500);

/// One call waiting, and what the person has done in its dialog.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalView {
    /// The call, its arguments and the diff it would make.
    pub request: ApprovalRequest,
    /// The dialog's body: the diff first, then the arguments, pretty, unless folded away (made
    /// when the dialog opens or the arguments are shown, drawn every frame).
    pub lines: Vec<String>,
    /// Whether a file tool's raw arguments are shown (its diff says what it does; they are
    /// folded away until asked for). Other tools always show theirs.
    pub arguments_shown: bool,
    /// How far the body is scrolled, in wrapped lines.
    pub scroll: usize,
    /// The reason being typed after a no (`None`: not denying yet).
    pub reason: Option<String>,
    /// When the dialog was first shown (answers wait `ANSWER_GRACE` after it).
    pub shown_at: Option<Instant>,
    /// The prefixes being edited before "yes, and don't ask again" (`None`: not editing).
    pub prefix: Option<PrefixEditor>,
    /// Why the prefixes typed cannot be rules (shown above the editor).
    pub prefix_problem: Option<String>,
}

impl ApprovalView {
    /// A fresh dialog for `request`.
    pub fn new(request: ApprovalRequest) -> Self {
        let lines = body(&request, false);
        Self {
            request,
            lines,
            arguments_shown: false,
            scroll: 0,
            reason: None,
            shown_at: None,
            prefix: None,
            prefix_problem: None,
        }
    }

    /// The prefixes "don't ask again" offers, written as the editor starts with them
    /// (`None`: not offered for this call).
    pub fn offered_editor(&self) -> Option<PrefixEditor> {
        self.offered_prefixes().map(|text| PrefixEditor::new(&text))
    }

    /// The prefixes "don't ask again" offers, written as the editor starts with them
    /// (`None`: not offered for this call).
    pub fn offered_prefixes(&self) -> Option<String> {
        let prefixes = self.request.command.as_ref()?.prefixes.as_ref()?;
        (!prefixes.is_empty()).then(|| crate::command_rules::list_text(prefixes))
    }

    /// Shows the raw arguments of a file tool or a command, or folds them away again.
    pub fn toggle_arguments(&mut self) {
        if self.arguments_foldable() {
            self.arguments_shown = !self.arguments_shown;
            self.lines = body(&self.request, self.arguments_shown);
        }
    }

    /// Whether the arguments can be folded away: the call has a diff or a command line that
    /// says what it does.
    pub fn arguments_foldable(&self) -> bool {
        self.request.diff.is_some() || self.request.command.is_some()
    }

    /// Whether the dialog appeared too recently for y / a / n to count as its answer.
    pub fn fresh(&self, now: Instant) -> bool {
        self.shown_at
            .is_none_or(|at| now.saturating_duration_since(at) < ANSWER_GRACE)
    }
}

/// The one-line editor of the prefixes: the input's own editor (a text area), so its keys are
/// the input's (Ctrl+A / Ctrl+E, Ctrl+B / Ctrl+F, Left / Right, Home / End, Backspace /
/// Delete; Ctrl+W / Ctrl+U / Ctrl+K as the keymap's line edits), kept to one line.
#[derive(Clone, Debug)]
pub struct PrefixEditor {
    area: ratatui_textarea::TextArea<'static>,
}

impl PrefixEditor {
    /// An editor holding `text`, the cursor at its end.
    pub fn new(text: &str) -> Self {
        let mut area = ratatui_textarea::TextArea::new(vec![text.to_string()]);
        area.move_cursor(ratatui_textarea::CursorMove::End);
        Self { area }
    }

    /// The text typed.
    pub fn text(&self) -> String {
        self.area.lines().join(" ")
    }

    /// The cursor's place, in characters from the start.
    pub fn cursor(&self) -> usize {
        self.area.cursor().1
    }

    /// The editor itself, for the input's key handling.
    pub fn area(&mut self) -> &mut ratatui_textarea::TextArea<'static> {
        &mut self.area
    }
}

impl PartialEq for PrefixEditor {
    fn eq(&self, other: &Self) -> bool {
        self.area.lines() == other.area.lines() && self.area.cursor() == other.area.cursor()
    }
}

impl Eq for PrefixEditor {}

/// The lines of the dialog's body: the diff first (what a file tool would do), then the
/// arguments, pretty — folded to one line for a file tool unless `arguments_shown`. Nothing
/// shown is cut: the dialog wraps long lines, so what is approved is what was shown.
fn body(request: &ApprovalRequest, arguments_shown: bool) -> Vec<String> {
    let arguments = serde_json::from_str::<serde_json::Value>(&request.arguments)
        .ok()
        .and_then(|v| serde_json::to_string_pretty(&v).ok())
        .unwrap_or_else(|| request.arguments.clone());
    let mut lines: Vec<String> = Vec::new();
    if request.configuration {
        lines.push(
            "This writes AGENTS.md: configuration that joins the system prompt of later \
             sessions. It asks in every approval mode."
                .into(),
        );
        lines.push(String::new());
    }
    if let Some(command) = &request.command {
        lines.extend(command_lines(command));
    } else if let Some(diff) = &request.diff {
        if diff.is_empty() {
            lines.push("(the file would not change)".into());
        }
        lines.extend(diff.lines().map(str::to_string));
    } else {
        lines.extend(arguments.lines().map(str::to_string));
        return lines;
    }
    lines.push(String::new());
    if arguments_shown {
        lines.push("▾ arguments (v hides them)".into());
        lines.extend(arguments.lines().map(str::to_string));
    } else {
        let count = arguments.lines().count();
        lines.push(format!("▸ arguments: {count} lines (v shows them)"));
    }
    lines
}

/// What the dialog says about a command: its line (every line of it, as the shell gets it,
/// with control and invisible characters shown as their code), its folder, what the jail
/// allows, and the network or a line that cannot be read said plainly.
fn command_lines(command: &CommandPrompt) -> Vec<String> {
    let mut lines = Vec::new();
    for (i, line) in command.line.split('\n').enumerate() {
        let mark = if i == 0 { "$ " } else { "  " };
        lines.push(format!("{mark}{}", codes_shown(line)));
    }
    lines.push(format!("in {}", codes_shown(&command.folder)));
    lines.push(format!("jail: {}", command.jail));
    if command.network {
        lines.push(String::new());
        lines.push(
            "⚠ This command will be able to reach the internet. It asks every time, in every \
             approval mode; no rule and no yes for the session covers it."
                .into(),
        );
    }
    if let Some(why) = &command.unreadable {
        lines.push(String::new());
        lines.push(format!(
            "MiniClaw cannot read this command line with certainty ({why}), so no rule lets it \
             run without asking."
        ));
    }
    lines
}

/// `text` with every character that would not show as itself — controls (an escape, a carriage
/// return), bidirectional overrides, zero-width ones — written as its code (`⟨U+202E⟩`): what
/// is approved is what was shown, and a hostile line cannot draw over itself or reorder itself.
pub fn codes_shown(text: &str) -> String {
    let hidden = |c: char| {
        (c.is_control() && c != '\t')
            || matches!(c, '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}' | '\u{00ad}')
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\t' => out.push_str("    "),
            c if hidden(c) => out.push_str(&format!("⟨U+{:04X}⟩", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}
