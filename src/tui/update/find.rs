//! Ctrl+F and `/find`: opening, typing into and stepping through the find in the
//! conversation; the matches themselves are found by the layout pass (`tui/find.rs`).

use std::time::Instant;

use super::effect::flash;
use crate::tui::keymap::Action;
use crate::tui::state::{Find, State};

/// Applies a find action.
pub(super) fn apply(state: &mut State, action: Action, now: Instant) {
    match action {
        Action::FindOpen => open(state, "", now),
        Action::FindClose => state.find = None,
        _ => {}
    }
    let Some(find) = state.find.as_mut() else {
        return;
    };
    match action {
        Action::FindType(c) => {
            find.query.push(c);
            *find = Find::new(&find.query);
        }
        Action::FindBackspace => {
            find.query.pop();
            *find = Find::new(&find.query);
        }
        Action::FindStep(delta) => find.step(delta),
        _ => {}
    }
}

/// Opens the find for `query` (Ctrl+F: empty, typed next), closing the prompt search.
pub(super) fn open(state: &mut State, query: &str, now: Instant) {
    state.composer.search = None;
    state.composer.popup = None;
    state.find = Some(Find::new(query));
    flash(
        state,
        now,
        "Find: Enter / Ctrl+P the match above · Shift+Enter / Ctrl+N below · Esc closes",
    );
}
