//! Slash commands (`/model`, `/steps`, `/copy N`, ...) and the actions they share with keys.

use std::time::Instant;

use super::effect::{Effect, flash};
use super::preset::set_preset;
use crate::agent::AgentCommand;
use crate::tui::commands::{self, COMMANDS, CommandId};
use crate::tui::state::{EntryKind, Overlay, State};

/// Whether `command` (without its `/`) must wait for the running turn to end: a command of
/// the table that says so, or a custom command (it starts a turn).
pub(super) fn waits_for_the_turn(state: &State, command: &str) -> bool {
    let name = command.split_whitespace().next().unwrap_or("");
    match commands::find(name) {
        Some(c) => c.waits,
        None => state.custom_commands.find(name).is_some(),
    }
}

/// Asks before clearing; refuses under a running turn, whose answer would otherwise land in a
/// history just emptied, and while the session is still being read.
pub(super) fn ask_clear(state: &mut State, now: Instant) {
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: press Esc to interrupt it, then clear the history",
        );
    } else if state.view.opening.is_some() {
        // Its answer would come after the session read meanwhile, which would show it again.
        flash(
            state,
            now,
            "The session is still being read: clear it in a moment",
        );
    } else {
        state.overlay = Overlay::ConfirmClear;
    }
}

/// Runs `command` (the input without its `/`): a command of the table, or says it is unknown.
pub(super) fn slash(state: &mut State, command: &str, now: Instant, effects: &mut Vec<Effect>) {
    let mut words = command.split_whitespace();
    let name = words.next().unwrap_or("");
    let Some(found) = commands::find(name) else {
        let custom = state.custom_commands.clone();
        return match custom.find(name) {
            Some(custom) => {
                let args = command.trim_start()[name.len()..].trim();
                super::custom::run(state, custom, command, args, now, effects)
            }
            None => unknown(state, name),
        };
    };
    let arg = words.next();
    // The whole rest of the line, for arguments that may hold spaces (titles, tasks).
    let rest = command.trim_start()[name.len()..].trim();
    match found.id {
        CommandId::Model => model(state, arg, effects),
        CommandId::Approval => approval(state, arg, now, effects),
        CommandId::Undo => effects.push(Effect::Command(AgentCommand::Undo(false))),
        CommandId::Diff => effects.push(Effect::Command(AgentCommand::ShowDiff)),
        CommandId::New => effects.push(Effect::Command(AgentCommand::NewSession)),
        CommandId::Resume if arg.is_none() => super::picker::open_sessions(state, effects),
        CommandId::Resume => effects.push(Effect::Command(AgentCommand::Resume(rest.into()))),
        CommandId::Rename => rename(state, rest, effects),
        CommandId::Steps => steps(state, arg, effects),
        CommandId::Copy => match arg {
            None => copy(state, effects),
            Some(n) => copy_block(state, n, effects),
        },
        CommandId::Plan => super::plan::start(state, rest, effects, now),
        CommandId::Init => init(state, now, effects),
        CommandId::Compact => compact(state, rest, now, effects),
        CommandId::Instructions => instructions(state, arg, effects),
        CommandId::Clear => ask_clear(state, now),
        CommandId::Tools => tools(state),
        CommandId::Mcp => mcp(state, arg, words.next(), effects),
        CommandId::Skills => super::custom::list_skills(state),
        CommandId::Skill => super::custom::use_skill(state, command, rest, now, effects),
        CommandId::Jobs => jobs(state, arg, words.next(), effects),
        CommandId::Hooks => effects.push(Effect::Command(AgentCommand::Hooks)),
        CommandId::Permissions => super::permissions::run(state, arg, words.next(), effects),
        CommandId::Key => super::key_dialog::open(state),
        CommandId::Find => super::find::open(state, rest, now),
        CommandId::Status => {
            let report = crate::tui::status_report::report(state);
            state.view.push(EntryKind::Notice, report);
            state.scroll[crate::tui::state::Pane::Conversation].jump_to_bottom();
        }
        CommandId::Help => state.overlay = Overlay::Help { scroll: 0 },
        CommandId::Quit => {
            state.quit = true;
        }
    }
}

/// A name the table does not hold: says so, with every command.
fn unknown(state: &mut State, name: &str) {
    let all: Vec<String> = COMMANDS
        .iter()
        .map(|c| c.usage())
        .chain(state.custom_commands.iter().map(|c| format!("/{}", c.name)))
        .collect();
    state.view.push(
        EntryKind::Error,
        format!("Unknown command `/{name}`. Commands: {}.", all.join(", ")),
    );
}

/// `/model` opens the picker; `/model NAME` takes any name, as --model does: a name that is not
/// a preset is sent as it is; a provider that is not configured is refused (never DeepSeek with
/// DeepSeek's key).
fn model(state: &mut State, name: Option<&str>, effects: &mut Vec<Effect>) {
    let Some(name) = name else {
        return super::picker::open_models(state);
    };
    match state.providers.resolve(name) {
        Ok(preset) => {
            let text = super::preset::chosen_text(&preset);
            set_preset(state, preset, effects);
            state.view.push(EntryKind::Notice, text);
        }
        Err(e) => {
            state
                .view
                .push(EntryKind::Error, format!("/model {name}: {e}."));
        }
    }
}

/// `/steps` shows the step limit; `/steps N` sets it.
fn steps(state: &mut State, n: Option<&str>, effects: &mut Vec<Effect>) {
    let Some(n) = n else {
        let text = format!(
            "Steps per turn: at most {} (/steps N sets it for the rest of this session, 1 to 100).",
            state.status.max_steps
        );
        state.view.push(EntryKind::Notice, text);
        return;
    };
    match n.parse::<usize>() {
        Ok(max @ 1..=100) => {
            state.status.max_steps = max;
            effects.push(Effect::Command(AgentCommand::SetMaxSteps(max)));
            state.view.push(
                EntryKind::Notice,
                format!("Steps per turn: at most {max} from the next turn on."),
            );
        }
        _ => {
            state.view.push(
                EntryKind::Error,
                format!("`/steps {n}`: give a whole number from 1 to 100."),
            );
        }
    }
}

/// `/approval` shows the approval mode; `/approval MODE` sets it.
fn approval(state: &mut State, name: Option<&str>, now: Instant, effects: &mut Vec<Effect>) {
    let Some(name) = name else {
        let text = format!(
            "Approval: {} (/approval auto|ask|read-only or Shift+Tab changes it).",
            state.approval_mode.name()
        );
        state.view.push(EntryKind::Notice, text);
        return;
    };
    match crate::approval::ApprovalMode::from_name(name) {
        Some(mode) => {
            super::approval::set_mode(state, mode, now, effects);
            state
                .view
                .push(EntryKind::Notice, format!("Approval: {}.", mode.name()));
        }
        None => {
            state.view.push(
                EntryKind::Error,
                format!("`/approval {name}`: the modes are auto, ask and read-only."),
            );
        }
    }
}

/// `/rename TITLE` names this session.
fn rename(state: &mut State, title: &str, effects: &mut Vec<Effect>) {
    if title.is_empty() {
        state.view.push(
            EntryKind::Error,
            "`/rename` needs a title: /rename TITLE names this session.",
        );
    } else {
        effects.push(Effect::Command(AgentCommand::Rename(title.into())));
    }
}

/// `/instructions` (or `/instructions diff`) shows how AGENTS.md changed.
fn instructions(state: &mut State, arg: Option<&str>, effects: &mut Vec<Effect>) {
    match arg {
        None | Some("diff") => effects.push(Effect::Command(AgentCommand::InstructionsDiff)),
        Some(other) => {
            state.view.push(
                EntryKind::Error,
                format!("`/instructions {other}`: use /instructions or /instructions diff."),
            );
        }
    }
}

/// `/tools` lists the tools, built-in, plugin and MCP.
fn tools(state: &mut State) {
    let mut text = String::from("Tools:");
    if state.tools.is_empty() {
        text.push_str(" none.");
    }
    for tool in &state.tools {
        text.push_str(&format!(
            "\n  {} [{}] — {}",
            tool.name, tool.source, tool.summary
        ));
    }
    for server in &state.mcp {
        for (tool, summary) in &server.tools {
            text.push_str(&format!("\n  {tool} [mcp {}] — {summary}", server.name));
        }
    }
    state.view.push(EntryKind::Notice, text);
}

/// `/init`: the turn in which the model writes a starter AGENTS.md.
fn init(state: &mut State, now: Instant, effects: &mut Vec<Effect>) {
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: wait for it, or press Esc to interrupt it",
        );
    } else {
        state.status.sent(now);
        effects.push(Effect::Command(AgentCommand::Init));
    }
}

/// `/compact [what to keep]`: the model summarizes the session so far; its request runs like a
/// turn (busy until `Compacted` or `CompactionFailed`).
fn compact(state: &mut State, keep: &str, now: Instant, effects: &mut Vec<Effect>) {
    if state.busy() {
        flash(
            state,
            now,
            "A turn is running: wait for it, or press Esc to interrupt it",
        );
    } else {
        state.status.sent(now);
        let keep = (!keep.is_empty()).then(|| keep.to_string());
        effects.push(Effect::Command(AgentCommand::Compact(keep)));
    }
}

/// `/mcp` lists the MCP servers; `/mcp restart NAME` restarts one.
/// `/jobs` lists the background jobs (the answer is an `AgentEvent::Jobs`); `/jobs stop N`
/// ends one.
fn jobs(state: &mut State, verb: Option<&str>, id: Option<&str>, effects: &mut Vec<Effect>) {
    match (verb, id.map(str::parse::<u32>)) {
        (None, _) => effects.push(Effect::Command(AgentCommand::Jobs)),
        (Some("stop"), Some(Ok(id))) => effects.push(Effect::Command(AgentCommand::StopJob(id))),
        _ => {
            state.view.push(
                EntryKind::Notice,
                "Usage: /jobs lists the background jobs; /jobs stop N ends job N.",
            );
        }
    }
}

fn mcp(state: &mut State, verb: Option<&str>, name: Option<&str>, effects: &mut Vec<Effect>) {
    match (verb, name) {
        (None, _) => {
            let mut text = String::from("MCP servers:");
            if state.mcp.is_empty() {
                text.push_str(" none configured ([mcp_servers.NAME] in config.toml or miniclaw.toml, or .mcp.json).");
            }
            for s in &state.mcp {
                text.push_str(&format!(
                    "\n  {} — {}, {} tool(s) [{}]",
                    s.name,
                    s.state.name(),
                    s.tools.len(),
                    s.source
                ));
                if let Some(error) = &s.last_error {
                    text.push_str(&format!("\n    last error: {error}"));
                }
            }
            state.view.push(EntryKind::Notice, text);
        }
        (Some("restart"), Some(name)) if state.mcp.iter().any(|s| s.name == name) => {
            effects.push(Effect::Command(AgentCommand::McpRestart(name.to_string())));
            state.view.push(
                EntryKind::Notice,
                format!("Restarting the MCP server `{name}`…"),
            );
        }
        (Some("restart"), Some(name)) => {
            let names: Vec<&str> = state.mcp.iter().map(|s| s.name.as_str()).collect();
            state.view.push(
                EntryKind::Error,
                format!(
                    "There is no MCP server `{name}`; the servers are: {}.",
                    names.join(", ")
                ),
            );
        }
        _ => {
            state.view.push(
                EntryKind::Error,
                "Use /mcp to list the MCP servers, /mcp restart NAME to restart one.",
            );
        }
    }
}

pub(super) fn copy(state: &mut State, effects: &mut Vec<Effect>) {
    match state.view.last_answer().map(str::to_string) {
        Some(answer) => {
            let chars = answer.chars().count();
            effects.push(Effect::Copy(answer));
            state.view.push(
                EntryKind::Notice,
                format!(
                    "Sent the last answer ({chars} characters) to the clipboard with OSC 52. \
                     If nothing was copied, your terminal does not allow it (in tmux: \
                     set -g set-clipboard on)."
                ),
            );
        }
        None => {
            state
                .view
                .push(EntryKind::Notice, "There is no answer to copy yet.");
        }
    }
}

/// `/copy N`: the N-th code block of the last answer (the number in its header).
pub(super) fn copy_block(state: &mut State, n: &str, effects: &mut Vec<Effect>) {
    let blocks = state
        .view
        .last_answer()
        .map(crate::tui::markdown::code_blocks)
        .unwrap_or_default();
    let count = blocks.len();
    let pick = n
        .parse::<usize>()
        .ok()
        .and_then(|i| i.checked_sub(1))
        .and_then(|i| blocks.into_iter().nth(i));
    match pick {
        Some(code) => {
            let lines = code.lines().count();
            effects.push(Effect::Copy(code));
            state.view.push(
                EntryKind::Notice,
                format!(
                    "Sent code block {n} ({lines} lines) to the clipboard with OSC 52. If nothing \
                     was copied, your terminal does not allow it (in tmux: set -g set-clipboard on)."
                ),
            );
        }
        None if count == 0 => {
            state.view.push(
                EntryKind::Error,
                "The last answer has no code block: /copy copies the whole answer.",
            );
        }
        None => {
            state.view.push(
                EntryKind::Error,
                format!(
                    "`/copy {n}`: the last answer has {count} code block{}; give a number from 1 to {count} (the number in the block's header).",
                    if count == 1 { "" } else { "s" }
                ),
            );
        }
    }
}
