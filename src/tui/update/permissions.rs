//! `/permissions`: the rules that let `run_command` run without asking in the `ask` mode,
//! numbered (the project's, removable; the person's config file's, with that file); and
//! `/permissions remove N`.

use super::effect::Effect;
use crate::command_rules::Listed;
use crate::tui::state::{EntryKind, Pane, State};

/// `/permissions` lists the rules; `/permissions remove N` removes the N-th (a project rule).
pub(super) fn run(
    state: &mut State,
    verb: Option<&str>,
    n: Option<&str>,
    effects: &mut Vec<Effect>,
) {
    match (verb, n) {
        (None, _) => list(state),
        (Some("remove"), Some(n)) => remove(state, n, effects),
        _ => {
            state.view.push(
                EntryKind::Error,
                "Use /permissions to list the command rules, /permissions remove N to remove one.",
            );
        }
    }
    state.scroll[Pane::Conversation].jump_to_bottom();
}

/// The rules, numbered, each with where it comes from.
fn list(state: &mut State) {
    let rules = state.command_rules.list();
    let mut text = String::from(
        "Command rules: in the ask mode, run_command runs without asking when every command of \
         its line starts with one of these (a command with the network asks every time).",
    );
    if rules.is_empty() {
        text.push_str(
            "\n  none yet — answer p in a command's approval dialog, or add \
             [commands] allow = [\"cargo test\"] to your config.toml.",
        );
    }
    for (i, listed) in rules.iter().enumerate() {
        let rule = crate::tui::state::codes_shown(&listed.rule().to_string());
        let from = match listed {
            Listed::Project(_) => "this project (/permissions remove N removes it)".to_string(),
            Listed::Config(c) => format!(
                "{} (edit that file to remove it)",
                crate::tui::calls::one_line(&c.file.display().to_string())
            ),
        };
        text.push_str(&format!("\n  {}. {rule} — {from}", i + 1));
    }
    state.view.push(EntryKind::Notice, text);
}

/// Removes the `n`-th rule of the list, when it is the project's.
fn remove(state: &mut State, n: &str, effects: &mut Vec<Effect>) {
    let rules = state.command_rules.list();
    let index = n.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
    let Some(listed) = index.and_then(|i| rules.get(i)) else {
        let error = match rules.len() {
            0 => "There are no command rules to remove.".to_string(),
            count => format!(
                "`/permissions remove {n}`: give a number from 1 to {count} (/permissions lists them)."
            ),
        };
        state.view.push(EntryKind::Error, error);
        return;
    };
    match listed {
        Listed::Project(rule) => {
            state.command_rules.forget(rule);
            effects.push(Effect::ForgetCommandRule(rule.clone()));
            state.view.push(
                EntryKind::Notice,
                format!(
                    "Removed `{}`: commands starting with it ask again in this project.",
                    crate::tui::state::codes_shown(&rule.to_string())
                ),
            );
        }
        Listed::Config(c) => {
            state.view.push(
                EntryKind::Error,
                format!(
                    "`{}` is written in {}: remove it there (MiniClaw does not edit your config file).",
                    crate::tui::state::codes_shown(&c.rule.to_string()),
                    crate::tui::calls::one_line(&c.file.display().to_string())
                ),
            );
        }
    }
}
