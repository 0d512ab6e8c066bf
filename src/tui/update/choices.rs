//! What the command popup offers: the slash commands with their descriptions, and the values
//! of a command's argument (models, step limits, code block numbers).

use crate::approval::ApprovalMode;
use crate::llm::Preset;
use crate::tui::commands::{self, COMMANDS, STEP_CHOICES, Values};
use crate::tui::state::{Choice, PopupKind, State};
use crate::tui::wrap::truncate;

/// The widest code line shown beside a code block's number.
const CODE_PREVIEW: usize = 60;

/// The choices of a command or value popup.
pub(super) fn for_kind(state: &State, kind: PopupKind) -> Vec<Choice> {
    match kind {
        PopupKind::Files => Vec::new(),
        PopupKind::Commands => COMMANDS
            .iter()
            .map(|c| Choice {
                label: format!("/{}", c.name),
                detail: if c.takes_argument() {
                    format!("{} · {}", c.argument_text(), c.about)
                } else {
                    c.about.to_string()
                },
                insert: if c.takes_argument() {
                    format!("/{} ", c.name)
                } else {
                    format!("/{}", c.name)
                },
            })
            .chain(state.custom_commands.iter().map(custom))
            .collect(),
        PopupKind::Values(name) => match commands::find(name).map(|c| c.values) {
            Some(Values::Models) => models(state),
            Some(Values::Steps) => steps(state),
            Some(Values::CodeBlocks) => code_blocks(state),
            Some(Values::Approval) => approval_modes(state),
            Some(Values::Skills) => skills(state),
            Some(Values::None) | None => Vec::new(),
        },
    }
}

/// A custom command's row: its argument hint and description, and whose it is. Its text was
/// cleaned of control characters when read (`custom_commands`).
fn custom(c: &crate::custom_commands::CustomCommand) -> Choice {
    let about = c.description.as_deref().unwrap_or("custom command");
    let detail = match &c.argument_hint {
        Some(hint) => format!("{hint} · {about} ({})", c.origin.name()),
        None => format!("{about} ({})", c.origin.name()),
    };
    Choice {
        label: format!("/{}", c.name),
        detail,
        insert: format!("/{} ", c.name),
    }
}

/// The skills, by name, with their descriptions.
fn skills(state: &State) -> Vec<Choice> {
    state
        .skills
        .iter()
        .map(|s| Choice {
            label: s.name.clone(),
            detail: s.description.clone(),
            insert: format!("{} ", s.name),
        })
        .collect()
}

/// A value choice: what it is, and that it is the current one when it is.
fn value(label: String, what: &str, current: bool) -> Choice {
    Choice {
        insert: label.clone(),
        label,
        detail: if current {
            format!("{what} · current")
        } else {
            what.to_string()
        },
    }
}

/// The presets, the configured providers' models, then the names used recently.
fn models(state: &State) -> Vec<Choice> {
    let current = state.preset.to_string();
    let mut out: Vec<Choice> = Preset::NAMES
        .iter()
        .map(|name| value(name.to_string(), "preset", *name == current))
        .collect();
    for (label, detail) in state.providers.listed() {
        let is_current = label == current;
        out.push(value(label, &detail, is_current));
    }
    for name in &state.recent_models {
        if !out.iter().any(|c| &c.insert == name) {
            out.push(value(name.clone(), "used before", *name == current));
        }
    }
    out
}

/// A few step limits, the current one among them.
fn steps(state: &State) -> Vec<Choice> {
    let mut limits: Vec<usize> = STEP_CHOICES.to_vec();
    if !limits.contains(&state.status.max_steps) {
        limits.push(state.status.max_steps);
        limits.sort_unstable();
    }
    limits
        .into_iter()
        .map(|n| value(n.to_string(), "steps a turn", n == state.status.max_steps))
        .collect()
}

/// The approval modes, the current one marked.
fn approval_modes(state: &State) -> Vec<Choice> {
    ApprovalMode::ALL
        .into_iter()
        .map(|mode| {
            let what = match mode {
                ApprovalMode::Auto => "everything in the sandbox runs",
                ApprovalMode::Ask => "changes, commands and the web ask first",
                ApprovalMode::ReadOnly => "changes, commands and the web are refused",
            };
            value(mode.name().to_string(), what, mode == state.approval_mode)
        })
        .collect()
}

/// The code blocks of the last answer, by the number in their header, with their first line.
fn code_blocks(state: &State) -> Vec<Choice> {
    let blocks = state
        .view
        .last_answer()
        .map(crate::tui::markdown::code_blocks)
        .unwrap_or_default();
    blocks
        .iter()
        .enumerate()
        .map(|(i, code)| {
            let first = code.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let lines = code.lines().count();
            let what = format!(
                "{lines} line{} · {}",
                if lines == 1 { "" } else { "s" },
                truncate(first.trim(), CODE_PREVIEW)
            );
            value((i + 1).to_string(), &what, false)
        })
        .collect()
}
