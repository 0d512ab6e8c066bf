//! Ctrl+R in the input: the reverse search through earlier prompts. Opening it asks the agent
//! for the archived sessions (their prompts come with the list, read off the runtime); this
//! session's prompts are searched at once.

use super::effect::Effect;
use crate::agent::AgentCommand;
use crate::tui::keymap::Action;
use crate::tui::state::{Focus, PromptSearch, State};

/// Applies a search action.
pub(super) fn apply(state: &mut State, action: Action, effects: &mut Vec<Effect>) {
    if state.composer.search.is_none() {
        if action == Action::SearchPrompts {
            open(state, effects);
        }
        return;
    }
    let candidates = state.composer.search_candidates();
    let Some(search) = state.composer.search.as_mut() else {
        return;
    };
    match action {
        Action::SearchPrompts => {
            // Past the oldest match the line says so and the match stays, as bash does.
            let count = search.count(&candidates);
            if search.skip + 1 < count {
                search.skip += 1;
                search.failing = false;
            } else {
                search.failing = true;
            }
        }
        Action::SearchType(c) => {
            search.query.push(c);
            search.skip = 0;
            search.failing = false;
        }
        Action::SearchBackspace => {
            search.query.pop();
            search.skip = 0;
            search.failing = false;
        }
        Action::SearchAccept => match search.found(&candidates).cloned() {
            Some(prompt) => {
                state.composer.search = None;
                state.composer.set_input(&prompt);
            }
            // Nothing matched: the input stays as it was.
            None => cancel(state),
        },
        Action::SearchCancel => cancel(state),
        _ => {}
    }
}

/// Opens the search over the input as it stands, and asks for the archived sessions' prompts.
fn open(state: &mut State, effects: &mut Vec<Effect>) {
    state.focus = Focus::Input;
    state.composer.popup = None;
    state.composer.search = Some(PromptSearch {
        draft: state.composer.input_text(),
        pastes: state.composer.pastes.clone(),
        ..Default::default()
    });
    effects.push(Effect::Command(AgentCommand::ListSessions));
}

/// Closes the search and gives the input back as it was when it opened.
fn cancel(state: &mut State) {
    if let Some(search) = state.composer.search.take() {
        state.composer.set_input(&search.draft);
        state.composer.pastes = search.pastes;
    }
}
