//! The gate for `run_command`: `auto` runs it (the jail is the protection), `ask` asks unless
//! every simple command of its line starts with a rule, `read-only` refuses it; a command that
//! asks for the network asks every time in every mode that runs commands, and no rule nor
//! session-wide yes covers it.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::{ASK_HEADLESS, Approvals, Gate, READ_ONLY, denied, off_runtime, refusal};
use crate::approval::{ApprovalMode, ApprovalRequest, CommandPrompt, Decision};
use crate::command_rules::{CommandCall, CommandRule, CommandRules, CommandTimeouts, jail_summary};
use crate::events::{AgentEvent, EventSink};

/// Why a command with the network did not run in headless mode, whatever the approval mode.
const NETWORK_HEADLESS: &str = "denied: this command asks for the network (network: true), \
     which needs a person's yes every time in every approval mode, and there is no one to ask \
     in headless mode; run it without the network, or in the UI";

/// Whether a `run_command` call with `arguments` would ask now.
pub(super) fn asks(approvals: &Approvals, arguments: &str) -> bool {
    let call = CommandCall::from_arguments(arguments);
    match approvals.mode() {
        ApprovalMode::ReadOnly => false,
        _ if call.network => true,
        ApprovalMode::Auto => false,
        ApprovalMode::Ask => !lets_through(approvals, &call),
    }
}

/// Whether `call` runs unasked in the `ask` mode: the tool is let through for the session, or
/// every part of its line starts with a rule.
fn lets_through(approvals: &Approvals, call: &CommandCall) -> bool {
    approvals.allowed_for_session(crate::command_rules::RUN_COMMAND)
        || call
            .parts
            .as_ref()
            .is_ok_and(|parts| approvals.commands.covers(parts))
}

/// Decides about a `run_command` call.
pub(super) async fn gate(
    approvals: &Approvals,
    mut request: ApprovalRequest,
    events: &EventSink,
    cancel: &CancellationToken,
) -> Gate {
    let tool = request.name.clone();
    let call = CommandCall::from_arguments(&request.arguments);
    match approvals.mode() {
        ApprovalMode::ReadOnly => return refusal(&tool, READ_ONLY),
        _ if call.network => {}
        ApprovalMode::Auto => return Gate::Run { asked: false },
        ApprovalMode::Ask if lets_through(approvals, &call) => {
            // Said on the call's line: which rules let it run unasked.
            if !approvals.allowed_for_session(crate::command_rules::RUN_COMMAND)
                && let Ok(parts) = &call.parts
                && let Some(rules) = approvals.commands.covering(parts)
            {
                events.send(AgentEvent::AllowedByRules {
                    id: request.id.clone(),
                    rules,
                });
            }
            return Gate::Run { asked: false };
        }
        ApprovalMode::Ask => {}
    }
    let Some(asker) = &approvals.asker else {
        return refusal(
            &tool,
            if call.network {
                NETWORK_HEADLESS
            } else {
                ASK_HEADLESS
            },
        );
    };
    request.command = Some(prompt(
        &call,
        &approvals.commands,
        &approvals.command_timeouts,
    ));
    let decision = match approvals.ask(asker, request, events, cancel).await {
        Ok(decision) => decision,
        Err(gate) => return gate,
    };
    match decision {
        Decision::Approve => Gate::Run { asked: true },
        // A yes for the session never covers the network: it asks each time.
        Decision::ApproveTool if call.network => Gate::Run { asked: true },
        Decision::ApproveTool => {
            if let Ok(mut allowed) = approvals.allowed.lock() {
                allowed.insert(tool);
            }
            Gate::Run { asked: true }
        }
        // Not offered for these; should an answer name prefixes anyway, it is a yes to this
        // call alone.
        Decision::ApprovePrefixes(_) if call.network || call.parts.is_err() => {
            Gate::Run { asked: true }
        }
        Decision::ApprovePrefixes(rules) => {
            keep(&approvals.commands, rules, events).await;
            Gate::Run { asked: true }
        }
        Decision::Deny(reason) => denied(&tool, &reason),
    }
}

/// What the dialog shows for `call`, with the time limit `timeouts` give it.
fn prompt(call: &CommandCall, rules: &CommandRules, timeouts: &CommandTimeouts) -> CommandPrompt {
    let folder = match &call.working_dir {
        Some(dir) if !dir.trim().is_empty() && dir.trim() != "." => rules.folder().join(dir),
        _ => rules.folder().to_path_buf(),
    };
    let prefixes = match &call.parts {
        Ok(parts) if !call.network => parts
            .iter()
            .map(CommandRule::default_for)
            .collect::<Option<Vec<_>>>()
            .map(dedup),
        _ => None,
    };
    CommandPrompt {
        line: call.line.clone(),
        folder: folder.display().to_string(),
        jail: jail_summary(call, timeouts),
        network: call.network,
        unreadable: call.parts.as_ref().err().map(ToString::to_string),
        prefixes,
    }
}

/// `rules` without repeats, in their order.
fn dedup(rules: Vec<CommandRule>) -> Vec<CommandRule> {
    let mut out: Vec<CommandRule> = Vec::with_capacity(rules.len());
    for rule in rules {
        if !out.contains(&rule) {
            out.push(rule);
        }
    }
    out
}

/// Adds `rules` for this run and keeps them in the folder records (off the runtime), saying
/// which in the conversation.
async fn keep(book: &Arc<CommandRules>, rules: Vec<CommandRule>, events: &EventSink) {
    book.add(&rules);
    let shown = crate::command_rules::list_text(&rules);
    let saving = {
        let (book, rules) = (book.clone(), rules.clone());
        off_runtime(move || book.save_added(&rules)).await
    };
    let notice = match saving {
        Ok(Ok(())) => format!(
            "From now on, commands starting with `{shown}` run without asking in this project (/permissions lists the rules and removes them)."
        ),
        Ok(Err(e)) => format!("The rule `{shown}` holds for this session only: {e}."),
        Err(e) => {
            format!("The rule `{shown}` holds for this session only: it could not be kept ({e}).")
        }
    };
    events.send(AgentEvent::Notice(notice));
}
