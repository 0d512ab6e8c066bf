//! The approval dialog's keys: yes, yes for the tool, yes with prefixes not to ask again (a
//! command), no with a reason; and the mode.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyModifiers};

use super::effect::{Effect, flash};
use crate::approval::{ApprovalMode, Decision};
use crate::tui::keymap::Action;
use crate::tui::state::{Overlay, State};

/// Applies an action of the approval dialog to the first waiting call.
pub(super) fn apply(state: &mut State, action: Action, effects: &mut Vec<Effect>) {
    let Some(view) = state.approvals.first_mut() else {
        state.overlay = Overlay::None;
        return;
    };
    let decision = match action {
        Action::ApproveOnce => Decision::Approve,
        Action::ApproveTool => Decision::ApproveTool,
        Action::Deny => {
            view.reason = Some(String::new());
            return;
        }
        Action::ReasonType(c) => {
            view.reason.get_or_insert_with(String::new).push(c);
            return;
        }
        Action::ReasonBackspace => {
            if let Some(reason) = &mut view.reason {
                reason.pop();
            }
            return;
        }
        Action::SendDenial => Decision::Deny(view.reason.take().unwrap_or_default()),
        Action::EditPrefixes => {
            // Offered only for a command that can be read and does not ask for the network.
            view.prefix = view.offered_editor();
            view.prefix_problem = None;
            return;
        }
        Action::PrefixEdit(key) => {
            // One line: nothing the editor would take as a new line or a tab.
            let newline = matches!(key.code, KeyCode::Enter | KeyCode::Tab | KeyCode::BackTab)
                || (key.modifiers.contains(KeyModifiers::CONTROL)
                    && matches!(key.code, KeyCode::Char('m' | 'j')));
            if let (Some(editor), false) = (&mut view.prefix, newline) {
                editor.area().input(key);
            }
            view.prefix_problem = None;
            return;
        }
        Action::PrefixLineEdit(edit) => {
            if let Some(editor) = &mut view.prefix {
                super::line_edit::apply(editor.area(), edit);
            }
            view.prefix_problem = None;
            return;
        }
        Action::CancelPrefixes => {
            view.prefix = None;
            view.prefix_problem = None;
            return;
        }
        Action::ConfirmPrefixes => {
            let typed = view.prefix.as_ref().map(|e| e.text()).unwrap_or_default();
            let line = view.request.command.as_ref().map(|c| c.line.as_str());
            match crate::command_rules::CommandRule::parse_list(&typed)
                .map_err(|e| e.to_string())
                .and_then(|rules| {
                    // The rules in force count too: with them the gate would let it through.
                    let mut all: Vec<_> = state
                        .command_rules
                        .list()
                        .iter()
                        .map(|l| l.rule().clone())
                        .collect();
                    all.extend(rules.iter().cloned());
                    match line.map(|l| uncovered(&rules, &all, l)) {
                        Some(Some(why)) => Err(why),
                        _ => Ok(rules),
                    }
                }) {
                Ok(rules) => Decision::ApprovePrefixes(rules),
                Err(why) => {
                    view.prefix_problem = Some(why);
                    return;
                }
            }
        }
        Action::ToggleApprovalArguments => {
            view.toggle_arguments();
            return;
        }
        Action::ScrollApproval(delta) => {
            // Clamped to the wrapped lines when drawn; here only kept from running away.
            let most: usize = view.lines.iter().map(|l| l.len() / 24 + 1).sum();
            view.scroll = view.scroll.saturating_add_signed(delta).min(most);
            return;
        }
        _ => return,
    };
    let view = state.approvals.remove(0);
    effects.push(Effect::Answer(view.request.id, decision));
    if state.approvals.is_empty() {
        state.overlay = Overlay::None;
    }
}

/// Why `rules` would not let `line` run unasked, as the gate reads it (`None`: they cover it):
/// a rule saved for a yes must cover the command being approved.
/// `all` holds the rules typed and those in force.
fn uncovered(
    typed: &[crate::command_rules::CommandRule],
    all: &[crate::command_rules::CommandRule],
    line: &str,
) -> Option<String> {
    let parts = crate::command_line::split(line).ok()?;
    let part = crate::command_rules::CommandRule::first_uncovered(all, &parts)?;
    let words: Vec<String> = part
        .texts()
        .iter()
        .map(|w| crate::command_line::quote(w))
        .collect();
    Some(format!(
        "`{}` does not cover `{}`: each command of the line must start with a prefix, whole words",
        crate::command_rules::list_text(typed),
        words.join(" ")
    ))
}

/// Shows the oldest waiting call once no other dialog is open (a call never takes over the key
/// dialog or a picker), and starts its answer grace when it first shows.
pub(crate) fn show_waiting(state: &mut State, now: Instant) {
    if state.overlay == Overlay::None && !state.approvals.is_empty() {
        state.overlay = Overlay::Approval;
    }
    if state.overlay == Overlay::Approval
        && let Some(view) = state.approvals.first_mut()
        && view.shown_at.is_none()
    {
        view.shown_at = Some(now);
    }
}

/// Uses `mode` from now on, saying so in the status line.
pub(super) fn set_mode(
    state: &mut State,
    mode: ApprovalMode,
    now: Instant,
    effects: &mut Vec<Effect>,
) {
    state.approval_mode = mode;
    state.approval_source = crate::approval::ApprovalSource::Folder;
    effects.push(Effect::SetApproval(mode, state.folder.clone()));
    // The status line names a mode other than auto itself: the flash only says what it does,
    // so the mode is not said twice.
    let what = match mode {
        ApprovalMode::Auto => "approval: auto — calls inside the sandbox run without asking",
        ApprovalMode::Ask => "changes, commands and the web ask first",
        ApprovalMode::ReadOnly => "changes, commands and the web are refused",
    };
    flash(state, now, what);
}
