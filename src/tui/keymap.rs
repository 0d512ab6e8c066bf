//! Keys and mouse to actions: a pure function of a small context and the event. What each key
//! does is the table in `bindings.rs`, which the help and the README list too.

pub(crate) mod bindings;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseEvent, MouseEventKind};

use bindings::{Binding, KEYS, Layer};

// The keymap needs only which overlay is open, not what it holds.
use super::state::{Focus, OverlayKind as Overlay};
use crate::secrets::Secret;

/// The input's readline edits. Ctrl+U and Ctrl+R were the editor's undo and redo; readline,
/// Codex and Claude Code give Ctrl+U to deleting the line's start, so undo and redo move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEdit {
    /// Delete from the line's start to the cursor (Ctrl+U).
    DeleteToStart,
    /// Delete from the cursor to the line's end (Ctrl+K).
    DeleteToEnd,
    /// Delete the word before the cursor (Ctrl+W).
    DeleteWordBack,
    /// Undo the last edit.
    Undo,
    /// Redo the edit undone.
    Redo,
}

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
    /// A readline edit of the input, named so its key is in the table (and the help).
    LineEdit(LineEdit),
    /// Open the reverse search through earlier prompts, or go to the next older match.
    SearchPrompts,
    /// Type into the reverse search.
    SearchType(char),
    /// Delete the search's last character.
    SearchBackspace,
    /// Put the match in the input to edit it, closing the search.
    SearchAccept,
    /// Close the search, giving the input back as it was.
    SearchCancel,
    /// Open the find in the conversation (Ctrl+F).
    FindOpen,
    /// Type into the find.
    FindType(char),
    /// Delete the find's last character.
    FindBackspace,
    /// Go to another match (negative: up, older).
    FindStep(isize),
    /// Close the find.
    FindClose,
    /// Recall the previous prompt.
    HistoryPrev,
    /// Recall the next prompt.
    HistoryNext,
    /// Switch to the provider's next model (DeepSeek: flash ↔ pro).
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
    /// Open the prefix editor of "yes, and don't ask again in this project" (`run_command`).
    EditPrefixes,
    /// Give the key to the prefix editor (typing, moving, deleting as the input does).
    PrefixEdit(KeyEvent),
    /// A readline edit of the prefixes (Ctrl+W, Ctrl+U, Ctrl+K).
    PrefixLineEdit(LineEdit),
    /// Say yes, and add the prefixes typed as this project's rules.
    ConfirmPrefixes,
    /// Close the prefix editor, back to the dialog's keys.
    CancelPrefixes,
    /// Scroll the approval dialog's arguments and diff.
    ScrollApproval(isize),
    /// Show or fold away a file tool's raw arguments in the approval dialog.
    ToggleApprovalArguments,
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
    /// Whether the prefixes of "don't ask again" are being edited in the approval dialog.
    pub editing_prefix: bool,
    /// Whether the approval dialog appeared too recently for a key to answer it.
    pub answer_fresh: bool,
    /// Whether the completion popup (files after `@`, commands after `/`) is open.
    pub popup: bool,
    /// Whether a proposed plan waits in the input to be run.
    pub plan_draft: bool,
    /// Whether Ctrl+R's reverse search is open in the input.
    pub searching: bool,
    /// Whether the find in the conversation is open.
    pub finding: bool,
}

/// The action for a key: the first rule of [`KEYS`] that matches in the layers active in
/// `ctx`, or what the last of them does with a key it has no rule for.
pub fn map_key(ctx: &KeyContext, key: KeyEvent) -> Action {
    if key.kind == KeyEventKind::Release {
        return Action::None;
    }
    for layer in layers(ctx) {
        let rule = KEYS
            .iter()
            .filter(|b| b.layer == layer)
            .flat_map(Binding::rules)
            .find(|r| r.key.matches(&key) && r.when.holds(ctx));
        if let Some(rule) = rule {
            return rule.action.clone();
        }
        if let Some(action) = otherwise(layer, key) {
            return action;
        }
    }
    Action::None
}

/// The layers whose rules apply in `ctx`, in the order they are tried.
pub fn layers(ctx: &KeyContext) -> Vec<Layer> {
    let overlay = match ctx.overlay {
        Overlay::ConfirmClear => Some(Layer::ClearQuestion),
        Overlay::ConfirmUndo => Some(Layer::UndoQuestion),
        Overlay::Picker if ctx.picker_confirming => Some(Layer::DeleteQuestion),
        Overlay::Picker => Some(Layer::Picker),
        Overlay::Approval if ctx.typing_reason => Some(Layer::Reason),
        Overlay::Approval if ctx.editing_prefix => Some(Layer::Prefix),
        // A key pressed just as the dialog appeared was meant for something else.
        Overlay::Approval if ctx.answer_fresh => Some(Layer::ApprovalFresh),
        Overlay::Approval => Some(Layer::Approval),
        Overlay::Help => Some(Layer::Help),
        Overlay::Key => Some(Layer::KeyDialog),
        Overlay::None => None,
    };
    if let Some(overlay) = overlay {
        return vec![Layer::First, overlay];
    }
    // The search line stands in the input and takes every key, as a shell's does.
    if ctx.searching {
        return vec![Layer::First, Layer::Search];
    }
    // So is the find's, which stands in the input's place.
    if ctx.finding {
        return vec![Layer::First, Layer::Find];
    }
    let mut out = vec![Layer::First];
    if ctx.popup && ctx.focus == Focus::Input {
        out.push(Layer::Popup);
    }
    out.push(Layer::Panes);
    out.extend_from_slice(match ctx.focus {
        Focus::Input => &[Layer::Input][..],
        Focus::Timeline => &[Layer::Timeline],
        Focus::Conversation => &[Layer::Conversation, Layer::Reading],
        Focus::Reasoning | Focus::ToolOutput => &[Layer::Reading],
    });
    out
}

/// What `layer` does with a key none of its rules takes: an overlay and a focused pane take
/// every key (typing goes to the text being typed), the others let it through (`None`).
fn otherwise(layer: Layer, key: KeyEvent) -> Option<Action> {
    let typed = match key.code {
        KeyCode::Char(c)
            if !key
                .modifiers
                .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
        {
            Some(c)
        }
        _ => None,
    };
    Some(match layer {
        Layer::First | Layer::Popup | Layer::Panes | Layer::Conversation => return None,
        Layer::ClearQuestion | Layer::UndoQuestion => Action::ConfirmNo,
        Layer::DeleteQuestion => Action::PickerConfirmDelete(false),
        Layer::Picker => typed.map_or(Action::None, Action::PickerType),
        Layer::Reason => typed.map_or(Action::None, Action::ReasonType),
        // Every other key is the editor's, as the input's are.
        Layer::Prefix => Action::PrefixEdit(key),
        Layer::Search => typed.map_or(Action::None, Action::SearchType),
        Layer::Find => typed.map_or(Action::None, Action::FindType),
        // Logged, so a key held back can be told from one lost: the pseudo-terminal tests
        // wait on it.
        Layer::ApprovalFresh => {
            tracing::debug!("a key came as the approval dialog appeared: not taken as its answer");
            Action::None
        }
        Layer::Approval | Layer::Help => Action::None,
        // Every key but Esc is the dialog's, whatever its stage.
        Layer::KeyDialog => Action::KeyDialog(key),
        Layer::Input => Action::Edit(key),
        // Typing in another pane goes to the input.
        Layer::Timeline | Layer::Reading => match typed {
            Some(_) => Action::Edit(key),
            None => Action::None,
        },
    })
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
