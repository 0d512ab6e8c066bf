//! Keys and mouse to actions: a pure function of a small context and the event.

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use super::state::{Focus, Overlay};
use crate::secrets::Secret;

/// What a key asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Send the input (or run its slash command).
    Send,
    /// Insert a newline in the input.
    Newline,
    /// Give the key to the input editor.
    Edit(KeyEvent),
    /// Insert pasted text in the input.
    Paste(String),
    /// Recall the previous prompt.
    HistoryPrev,
    /// Recall the next prompt.
    HistoryNext,
    /// Switch flash ↔ pro.
    TogglePreset,
    /// Ask whether to clear the history.
    AskClear,
    /// Answer yes to the dialog.
    ConfirmYes,
    /// Answer no to the dialog.
    ConfirmNo,
    /// Archive the session and start a new one (`a` in the clear dialog).
    ArchiveSession,
    /// Type into the picker's filter.
    PickerType(char),
    /// Delete the filter's last character.
    PickerBackspace,
    /// Move the picker's selection by rows.
    PickerMove(isize),
    /// Take the selected row.
    PickerChoose,
    /// Ask to delete the selected session.
    PickerDelete,
    /// Answer the delete question (`true`: delete).
    PickerConfirmDelete(bool),
    /// Let the waiting call run.
    ApproveOnce,
    /// Let it run, and every call of its tool for the rest of the session.
    ApproveTool,
    /// Say no to the waiting call; a reason may be typed next.
    Deny,
    /// Type into the reason for a no.
    ReasonType(char),
    /// Delete the reason's last character.
    ReasonBackspace,
    /// Send the no with the reason typed.
    SendDenial,
    /// Scroll the approval dialog's arguments and diff.
    ScrollApproval(isize),
    /// Go to the next approval mode (auto → ask → read-only).
    CycleApproval,
    /// Undo although files changed since the turn (`y` in the undo question).
    UndoAnyway,
    /// Scroll the focused pane by pages (negative: up).
    ScrollPage(isize),
    /// Scroll the focused pane by lines (negative: up).
    ScrollLine(isize),
    /// Scroll the pane under the pointer by lines.
    ScrollAt {
        /// Pointer column.
        column: u16,
        /// Pointer row.
        row: u16,
        /// Lines (negative: up).
        delta: isize,
    },
    /// To the top of the focused pane.
    ScrollTop,
    /// To the bottom of the focused pane, following again.
    ScrollBottom,
    /// Focus the next pane.
    FocusNext,
    /// Focus the input.
    FocusInput,
    /// Select the previous step.
    SelectPrev,
    /// Select the next step.
    SelectNext,
    /// Expand or collapse the selected step.
    ToggleStep,
    /// Show whole (or fold again) the long prompts in view in the conversation.
    ToggleFold,
    /// Take the last queued message back into the input to edit it.
    EditQueued,
    /// Remove the last queued message.
    DropQueued,
    /// Expand or collapse every step.
    ToggleAllSteps,
    /// Show or hide the reasoning pane.
    ToggleReasoning,
    /// Show or hide the side panes.
    ToggleSidePanes,
    /// Open the help.
    ShowHelp,
    /// Close the overlay.
    CloseOverlay,
    /// Interrupt the running turn.
    Interrupt,
    /// Clear the input (Ctrl+C while idle; a second one soon after quits).
    ClearInput,
    /// Quit.
    Quit,
    /// Copy the last answer.
    Copy,
    /// Scroll the help overlay by this many lines.
    ScrollHelp(isize),
    /// A key pressed in the API key dialog (what it does depends on the dialog's stage).
    KeyDialog(KeyEvent),
    /// Text pasted into the API key dialog.
    KeyDialogPaste(Secret),
    /// Move the completion popup's selection by rows.
    PopupMove(isize),
    /// Put the popup's selected choice in place of the typed word (Tab).
    PopupComplete,
    /// Take the popup's selected choice: insert a file, run a command (Enter).
    PopupChoose,
    /// Close the completion popup (Esc).
    PopupClose,
    /// Set aside the plan waiting in the input (Esc).
    DiscardPlan,
}

/// What the keymap needs to know about the state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyContext {
    /// The focused pane.
    pub focus: Focus,
    /// The open overlay.
    pub overlay: Overlay,
    /// Whether a turn runs.
    pub busy: bool,
    /// Whether the input is empty.
    pub input_empty: bool,
    /// Whether the input cursor is on its first line.
    pub on_first_line: bool,
    /// Whether the input cursor is on its last line.
    pub on_last_line: bool,
    /// Whether a Ctrl+C less than two seconds ago armed quitting.
    pub quit_armed: bool,
    /// Whether messages wait to be sent when the turn ends.
    pub queued: bool,
    /// Whether the picker asks to confirm a deletion.
    pub picker_confirming: bool,
    /// Whether a reason for a no is being typed in the approval dialog.
    pub typing_reason: bool,
    /// Whether the approval dialog appeared too recently for a key to answer it.
    pub answer_fresh: bool,
    /// Whether the completion popup (files after `@`, commands after `/`) is open.
    pub popup: bool,
    /// Whether a proposed plan waits in the input to be run.
    pub plan_draft: bool,
}

/// The action for a key.
pub fn map_key(ctx: &KeyContext, key: KeyEvent) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::None;
    }
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    let alt = key.modifiers.contains(KeyModifiers::ALT);
    let shift = key.modifiers.contains(KeyModifiers::SHIFT);
    if ctrl && key.code == KeyCode::Char('c') {
        return if ctx.busy {
            Action::Interrupt
        } else if ctx.quit_armed {
            Action::Quit
        } else {
            Action::ClearInput
        };
    }
    if let Some(action) = overlay_key(ctx, key, ctrl || alt) {
        return action;
    }
    if ctx.popup
        && ctx.focus == Focus::Input
        && let Some(action) = popup_key(key)
    {
        return action;
    }
    match key.code {
        // A queued message goes first; Esc again interrupts.
        KeyCode::Esc if ctx.busy && ctx.queued => return Action::DropQueued,
        KeyCode::Esc if ctx.busy => return Action::Interrupt,
        KeyCode::Esc if ctx.focus != Focus::Input => return Action::FocusInput,
        KeyCode::Esc if ctx.plan_draft => return Action::DiscardPlan,
        KeyCode::Esc => return Action::None,
        KeyCode::F(1) => return Action::ShowHelp,
        KeyCode::F(2) => return Action::TogglePreset,
        KeyCode::F(3) => return Action::ToggleSidePanes,
        KeyCode::Char('l') if ctrl => return Action::AskClear,
        KeyCode::Char('o') if ctrl => return Action::ToggleAllSteps,
        KeyCode::Char('t') if ctrl => return Action::ToggleReasoning,
        KeyCode::Char('y') if ctrl => return Action::Copy,
        KeyCode::Char('d') if ctrl && ctx.input_empty => return Action::Quit,
        KeyCode::Tab => return Action::FocusNext,
        KeyCode::BackTab => return Action::CycleApproval,
        KeyCode::PageUp => return Action::ScrollPage(-1),
        KeyCode::PageDown => return Action::ScrollPage(1),
        KeyCode::Up if shift => return Action::ScrollLine(-1),
        KeyCode::Down if shift => return Action::ScrollLine(1),
        KeyCode::Home if ctrl => return Action::ScrollTop,
        KeyCode::End if ctrl => return Action::ScrollBottom,
        _ => {}
    }
    match ctx.focus {
        Focus::Input => match key.code {
            KeyCode::Enter if alt || shift || ctrl => Action::Newline,
            KeyCode::Enter => Action::Send,
            KeyCode::Char('j') if ctrl => Action::Newline,
            KeyCode::Up if ctx.input_empty && ctx.queued => Action::EditQueued,
            KeyCode::Up if ctx.on_first_line => Action::HistoryPrev,
            KeyCode::Down if ctx.on_last_line => Action::HistoryNext,
            // With nothing to move the cursor through, Home / End scroll the conversation, so
            // the "more below (End)" marker works from the input too.
            KeyCode::Home if ctx.input_empty => Action::ScrollTop,
            KeyCode::End if ctx.input_empty => Action::ScrollBottom,
            _ => Action::Edit(key),
        },
        Focus::Timeline => match key.code {
            KeyCode::Up => Action::SelectPrev,
            KeyCode::Down => Action::SelectNext,
            KeyCode::Enter | KeyCode::Char(' ') => Action::ToggleStep,
            KeyCode::Home => Action::ScrollTop,
            KeyCode::End => Action::ScrollBottom,
            _ => pane_typing(key),
        },
        Focus::Conversation if key.code == KeyCode::Enter => Action::ToggleFold,
        Focus::Conversation | Focus::Reasoning | Focus::ToolOutput => match key.code {
            KeyCode::Up => Action::ScrollLine(-1),
            KeyCode::Down => Action::ScrollLine(1),
            KeyCode::Home => Action::ScrollTop,
            KeyCode::End => Action::ScrollBottom,
            _ => pane_typing(key),
        },
    }
}

/// The action for a key while an overlay is open (`None`: no overlay).
fn overlay_key(ctx: &KeyContext, key: KeyEvent, modified: bool) -> Option<Action> {
    Some(match ctx.overlay {
        Overlay::ConfirmClear => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Action::ConfirmYes,
            KeyCode::Char('a') | KeyCode::Char('A') => Action::ArchiveSession,
            _ => Action::ConfirmNo,
        },
        Overlay::ConfirmUndo => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Action::UndoAnyway,
            _ => Action::ConfirmNo,
        },
        Overlay::Picker if ctx.picker_confirming => {
            Action::PickerConfirmDelete(matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')))
        }
        Overlay::Picker => picker_key(key, modified),
        Overlay::Approval if ctx.typing_reason => match key.code {
            KeyCode::Enter | KeyCode::Esc => Action::SendDenial,
            KeyCode::Backspace => Action::ReasonBackspace,
            KeyCode::Char(c) if !modified => Action::ReasonType(c),
            _ => Action::None,
        },
        // A key pressed just as the dialog appeared was meant for something else. (Logged, so
        // a key held back can be told from one lost: the pseudo-terminal tests wait on it.)
        Overlay::Approval if ctx.answer_fresh => {
            tracing::debug!("a key came as the approval dialog appeared: not taken as its answer");
            Action::None
        }
        Overlay::Approval => match key.code {
            KeyCode::Char('y') | KeyCode::Char('Y') => Action::ApproveOnce,
            KeyCode::Char('a') | KeyCode::Char('A') => Action::ApproveTool,
            KeyCode::Char('n') | KeyCode::Char('N') | KeyCode::Esc => Action::Deny,
            KeyCode::Up => Action::ScrollApproval(-1),
            KeyCode::Down => Action::ScrollApproval(1),
            KeyCode::PageUp => Action::ScrollApproval(-10),
            KeyCode::PageDown => Action::ScrollApproval(10),
            _ => Action::None,
        },
        Overlay::Help => match key.code {
            KeyCode::Esc if ctx.busy => Action::Interrupt,
            KeyCode::Esc | KeyCode::F(1) | KeyCode::Enter | KeyCode::Char('q') => {
                Action::CloseOverlay
            }
            KeyCode::Up => Action::ScrollHelp(-1),
            KeyCode::Down => Action::ScrollHelp(1),
            KeyCode::PageUp => Action::ScrollHelp(-10),
            KeyCode::PageDown => Action::ScrollHelp(10),
            _ => Action::None,
        },
        // Esc leaves the dialog whatever its stage; every other key is the dialog's.
        Overlay::Key => match key.code {
            KeyCode::Esc => Action::CloseOverlay,
            _ => Action::KeyDialog(key),
        },
        Overlay::None => return None,
    })
}

/// A key in the picker: typing filters, arrows move, Enter takes, Ctrl+D or Delete deletes.
fn picker_key(key: KeyEvent, modified: bool) -> Action {
    match key.code {
        KeyCode::Esc => Action::CloseOverlay,
        KeyCode::Enter => Action::PickerChoose,
        KeyCode::Up => Action::PickerMove(-1),
        KeyCode::Down => Action::PickerMove(1),
        KeyCode::PageUp => Action::PickerMove(-10),
        KeyCode::PageDown => Action::PickerMove(10),
        KeyCode::Backspace => Action::PickerBackspace,
        KeyCode::Delete => Action::PickerDelete,
        KeyCode::Char('d') if modified => Action::PickerDelete,
        KeyCode::Char('p') if modified => Action::PickerMove(-1),
        KeyCode::Char('n') if modified => Action::PickerMove(1),
        KeyCode::Char(c) if !modified => Action::PickerType(c),
        _ => Action::None,
    }
}

/// A plain key while the completion popup is open: it takes the arrows, Tab, Enter and Esc.
fn popup_key(key: KeyEvent) -> Option<Action> {
    if !key.modifiers.is_empty() {
        return None;
    }
    Some(match key.code {
        KeyCode::Esc => Action::PopupClose,
        KeyCode::Up => Action::PopupMove(-1),
        KeyCode::Down => Action::PopupMove(1),
        KeyCode::Tab => Action::PopupComplete,
        KeyCode::Enter => Action::PopupChoose,
        _ => return None,
    })
}

/// Typing a character in a pane other than the input goes to the input.
fn pane_typing(key: KeyEvent) -> Action {
    match key.code {
        KeyCode::Char(_)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Action::Edit(key)
        }
        _ => Action::None,
    }
}

/// The action for a mouse event: the wheel scrolls the pane under the pointer.
pub fn map_mouse(ctx: &KeyContext, mouse: MouseEvent) -> Action {
    if ctx.overlay != Overlay::None {
        return Action::None;
    }
    let delta = match mouse.kind {
        MouseEventKind::ScrollUp => -3,
        MouseEventKind::ScrollDown => 3,
        _ => return Action::None,
    };
    Action::ScrollAt {
        column: mouse.column,
        row: mouse.row,
        delta,
    }
}

/// The action for a bracketed paste.
pub fn map_paste(ctx: &KeyContext, text: String) -> Action {
    match ctx.overlay {
        Overlay::None => Action::Paste(text),
        Overlay::Key => Action::KeyDialogPaste(Secret::new(text)),
        Overlay::Help
        | Overlay::ConfirmClear
        | Overlay::ConfirmUndo
        | Overlay::Picker
        | Overlay::Approval => Action::None,
    }
}
