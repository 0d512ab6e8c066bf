//! The readline edits of a one-line or many-line text area (Ctrl+W, Ctrl+U, Ctrl+K, undo,
//! redo), shared by the input and the approval dialog's prefix editor.

use crate::tui::keymap::LineEdit;

/// A readline edit of a text area: the input's, or the prefix editor's of the approval dialog.
pub(super) fn apply(input: &mut ratatui_textarea::TextArea<'_>, edit: LineEdit) {
    match edit {
        LineEdit::DeleteToStart => {
            input.delete_line_by_head();
        }
        LineEdit::DeleteToEnd => {
            input.delete_line_by_end();
        }
        LineEdit::DeleteWordBack => {
            input.delete_word();
        }
        LineEdit::Undo => {
            input.undo();
        }
        LineEdit::Redo => {
            input.redo();
        }
    }
}
