//! A headless prompt that starts with `/`: a custom command (`/review-pr 12`) or `/skill NAME
//! [TEXT]` runs as it does in the UI — shown as typed, sent expanded, with a command's model
//! for its turn — so a script can call the person's commands as Claude Code's `-p` does. Any
//! other prompt is sent as it is.

use crate::agent::TurnInput;
use crate::custom_commands::CustomCommands;
use crate::llm::Providers;
use crate::skills::Skills;

/// The turn for `prompt` when it names a custom command or a skill, with a notice when the
/// command's model is not used; `Err` for `/skill` with a name no skill has.
pub fn expand(
    prompt: &str,
    commands: &CustomCommands,
    skills: &Skills,
    providers: &Providers,
) -> Result<Option<(TurnInput, Option<String>)>, String> {
    let Some(typed) = prompt.trim().strip_prefix('/') else {
        return Ok(None);
    };
    let (name, rest) = typed
        .split_once(char::is_whitespace)
        .map_or((typed, ""), |(n, r)| (n, r.trim()));
    let turn = |content: String, preset| TurnInput {
        prompt: prompt.trim().to_string(),
        content: Some(content),
        preset,
        ..TurnInput::default()
    };
    if name == "skill" {
        let (skill, text) = rest
            .split_once(char::is_whitespace)
            .map_or((rest, ""), |(n, t)| (n, t));
        if skills.get(skill).is_none() {
            let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "there is no skill `{skill}`; the skills are: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            ));
        }
        return Ok(Some((turn(Skills::use_prompt(skill, text), None), None)));
    }
    Ok(commands.find(name).map(|command| {
        let (preset, notice) = command.preset(providers);
        (turn(command.expand(rest), preset), notice)
    }))
}
