//! `/skills`, `/skill NAME [TEXT]` and the custom slash commands: each starts a turn (or lists)
//! from instructions read at start. The turn is shown as typed and sent expanded.

use std::time::Instant;

use super::effect::{Effect, flash};
use crate::agent::{AgentCommand, ExpandedPrompt};
use crate::custom_commands::CustomCommand;
use crate::tui::state::{EntryKind, Pane, State};

/// `/skills`: each skill's name, where it is from and its description (cleaned when read).
pub(super) fn list_skills(state: &mut State) {
    let mut text = String::from("Skills:");
    if state.skills.is_empty() {
        text.push_str(
            " none (a folder with a SKILL.md in <config dir>/miniclaw/skills/, ~/.agents/skills/ \
             or, once this folder is trusted, .agents/skills/).",
        );
    }
    for skill in state.skills.iter() {
        text.push_str(&format!(
            "\n  {} [{}] — {}",
            skill.name,
            skill.origin.name(),
            skill.description
        ));
    }
    state.view.push(EntryKind::Notice, text);
    state.scroll[Pane::Conversation].jump_to_bottom();
}

/// `/skill NAME [TEXT]`: a turn whose prompt tells the model to use the skill.
pub(super) fn use_skill(
    state: &mut State,
    typed: &str,
    rest: &str,
    now: Instant,
    effects: &mut Vec<Effect>,
) {
    let (name, text) = rest
        .split_once(char::is_whitespace)
        .map_or((rest, ""), |(n, t)| (n, t.trim()));
    if state.skills.get(name).is_none() {
        let names: Vec<&str> = state.skills.iter().map(|s| s.name.as_str()).collect();
        let known = if names.is_empty() {
            "there are none (/skills says where they go)".to_string()
        } else {
            format!("the skills are: {}", names.join(", "))
        };
        let what = if name.is_empty() {
            "`/skill` needs a skill's name".to_string()
        } else {
            format!("There is no skill `{name}`")
        };
        state
            .view
            .push(EntryKind::Error, format!("{what}; {known}."));
        return;
    }
    let content = crate::skills::Skills::use_prompt(name, text);
    start(state, typed, content, None, now, effects);
}

/// `/NAME args` for a custom command: its prompt with the arguments put in, with its model
/// for this turn when it names one MiniClaw knows.
pub(super) fn run(
    state: &mut State,
    command: &CustomCommand,
    typed: &str,
    args: &str,
    now: Instant,
    effects: &mut Vec<Effect>,
) {
    let (preset, ignored) = command.preset(&state.providers);
    if let Some(notice) = ignored {
        state.view.push(EntryKind::Notice, notice);
    }
    start(state, typed, command.expand(args), preset, now, effects);
}

/// Starts the turn (or says a turn is running).
fn start(
    state: &mut State,
    typed: &str,
    content: String,
    preset: Option<crate::llm::Preset>,
    now: Instant,
    effects: &mut Vec<Effect>,
) {
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: wait for it, or press Esc to interrupt it",
        );
        return;
    }
    state.composer.prompt_history.push(format!("/{typed}"));
    state.status.sent(now);
    effects.push(Effect::Command(AgentCommand::Expanded(ExpandedPrompt {
        shown: format!("/{}", typed.trim()),
        content,
        preset,
    })));
}
