//! Actions in: each goes to its handler, and effects come out.

use std::time::Instant;

use super::effect::{Effect, QUIT_WINDOW};
use super::{
    approval, find, input, key_dialog, navigate, picker, plan, popup, preset, search, slash,
};
use crate::agent::AgentCommand;
use crate::tui::keymap::{Action, KeyContext};
use crate::tui::state::{Focus, Overlay, State};

/// The keymap's view of the state at `now`.
pub fn key_context(state: &State, now: Instant) -> KeyContext {
    let row = state.composer.input.cursor().0;
    KeyContext {
        focus: state.focus,
        overlay: state.overlay.kind(),
        busy: state.busy(),
        input_empty: state.composer.input_empty(),
        on_first_line: row == 0,
        on_last_line: row + 1 >= state.composer.input.lines().len(),
        queued: !state.composer.queued.is_empty(),
        picker_confirming: state.overlay.picker().is_some_and(|p| p.confirm_delete),
        typing_reason: state.approvals.first().is_some_and(|a| a.reason.is_some()),
        editing_prefix: state.approvals.first().is_some_and(|a| a.prefix.is_some()),
        answer_fresh: state.approvals.first().is_some_and(|a| a.fresh(now)),
        popup: state.composer.popup.is_some(),
        plan_draft: state.view.plans.draft(),
        searching: state.composer.search.is_some(),
        finding: state.find.is_some(),
        quit_armed: state
            .composer
            .last_ctrl_c
            .is_some_and(|t| now.saturating_duration_since(t) < QUIT_WINDOW),
    }
}

/// Applies an action.
pub fn apply(state: &mut State, action: Action, now: Instant) -> Vec<Effect> {
    let mut effects = Vec::new();
    // Typing opens the completion popup; anything else only keeps it in line with the input.
    let typed = matches!(
        action,
        Action::Edit(_) | Action::LineEdit(_) | Action::Paste(_) | Action::Newline
    );
    let popup_key = matches!(
        action,
        Action::PopupMove(_) | Action::PopupComplete | Action::PopupChoose | Action::PopupClose
    );
    match action {
        Action::None => {}
        Action::Send => input::send(state, now, &mut effects),
        Action::Newline => state.composer.input.insert_newline(),
        Action::Edit(key) => input::edit(state, key),
        Action::LineEdit(edit) => input::line_edit(state, edit),
        Action::Paste(text) => input::paste(state, &text),
        Action::SearchPrompts
        | Action::SearchType(_)
        | Action::SearchBackspace
        | Action::SearchAccept
        | Action::SearchCancel => search::apply(state, action, &mut effects),
        Action::FindOpen
        | Action::FindType(_)
        | Action::FindBackspace
        | Action::FindStep(_)
        | Action::FindClose => find::apply(state, action, now),
        Action::HistoryPrev => input::recall(state, -1),
        Action::HistoryNext => input::recall(state, 1),
        Action::ClearInput => input::clear(state, now),
        Action::EditQueued => input::edit_queued(state),
        Action::DropQueued => input::drop_queued(state, now),
        Action::ToggleFold => navigate::toggle_fold(state, now),
        Action::TogglePreset => {
            let preset = state.preset.toggled();
            preset::set_preset(state, preset, &mut effects);
        }
        // Clearing under a running turn would let its answer land in a history just emptied.
        Action::AskClear => slash::ask_clear(state, now),
        Action::ConfirmYes => {
            state.overlay = Overlay::None;
            state.clear_conversation();
            effects.push(Effect::Command(AgentCommand::ClearHistory));
        }
        Action::ArchiveSession => {
            state.overlay = Overlay::None;
            effects.push(Effect::Command(AgentCommand::NewSession));
        }
        Action::CloseOverlay if matches!(state.overlay, Overlay::Key(_)) => {
            key_dialog::dismiss(state, now)
        }
        Action::ConfirmNo | Action::CloseOverlay => state.overlay = Overlay::None,
        Action::PickerType(_)
        | Action::PickerBackspace
        | Action::PickerMove(_)
        | Action::PickerChoose
        | Action::PickerDelete
        | Action::PickerConfirmDelete(_) => picker::apply(state, action, &mut effects),
        Action::ApproveOnce
        | Action::ApproveTool
        | Action::Deny
        | Action::ReasonType(_)
        | Action::ReasonBackspace
        | Action::SendDenial
        | Action::EditPrefixes
        | Action::PrefixEdit(_)
        | Action::PrefixLineEdit(_)
        | Action::ConfirmPrefixes
        | Action::CancelPrefixes
        | Action::ScrollApproval(_)
        | Action::ToggleApprovalArguments => approval::apply(state, action, &mut effects),
        Action::UndoAnyway => {
            state.overlay = Overlay::None;
            effects.push(Effect::Command(AgentCommand::Undo(true)));
        }
        Action::CycleApproval => {
            let mode = state.approval_mode.next();
            approval::set_mode(state, mode, now, &mut effects);
        }
        Action::KeyDialog(key) => key_dialog::key(state, key, &mut effects),
        Action::KeyDialogPaste(text) => key_dialog::paste(state, &text),
        Action::ScrollPage(_)
        | Action::ScrollLine(_)
        | Action::ScrollAt { .. }
        | Action::ScrollTop
        | Action::ScrollBottom => navigate::scroll(state, action),
        Action::FocusNext => navigate::cycle_focus(state, 1),
        Action::FocusInput => state.focus = Focus::Input,
        Action::SelectPrev | Action::SelectNext | Action::ToggleStep | Action::ToggleAllSteps => {
            navigate::steps(state, action)
        }
        Action::ToggleReasoning
        | Action::ToggleSidePanes
        | Action::ShowHelp
        | Action::ScrollHelp(_) => navigate::view(state, action),
        Action::Interrupt => interrupt(state, &mut effects),
        Action::Quit => state.quit = true,
        Action::Copy => slash::copy(state, &mut effects),
        Action::DiscardPlan => plan::discard(state, now),
        Action::PopupMove(_) | Action::PopupComplete | Action::PopupChoose | Action::PopupClose => {
            popup::apply(state, action, now, &mut effects)
        }
    }
    if !popup_key {
        popup::refresh(state, typed, now, &mut effects);
    }
    approval::show_waiting(state, now);
    effects
}

/// Esc or Ctrl+C during a turn (or a plan's run): interrupt it.
fn interrupt(state: &mut State, effects: &mut Vec<Effect>) {
    if state.busy() {
        // Ctrl+C in the approval dialog denies every waiting call and interrupts.
        state.approvals.clear();
        if state.overlay == Overlay::Approval {
            state.overlay = Overlay::None;
        }
        effects.push(Effect::Interrupt);
    }
}
