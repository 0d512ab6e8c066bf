//! What the person is told when a turn cannot go on: each model error as a sentence that says
//! what to do next, and the step-limit notice.

use crate::events::FailCause;
use crate::llm::LlmError;

/// Why a turn that met `e` failed.
pub fn fail_cause(e: &LlmError) -> FailCause {
    match e {
        LlmError::MissingKey | LlmError::MissingProviderKey { .. } => FailCause::MissingKey,
        LlmError::Http {
            status: 401 | 403, ..
        } => FailCause::RefusedKey,
        LlmError::Transport { .. } | LlmError::IdleTimeout(_) | LlmError::StreamCut => {
            FailCause::Network
        }
        LlmError::Http { .. }
        | LlmError::QueuedTooLong(_)
        | LlmError::EventTooLarge { .. }
        | LlmError::InStream(_)
        | LlmError::Malformed(_) => FailCause::Server,
        LlmError::UnknownProvider { .. } | LlmError::Setup { .. } | LlmError::Cancelled => {
            FailCause::Request
        }
    }
}

/// What is said when a turn reaches its step limit.
pub fn step_limit_notice(max: usize, way_on: &str) -> String {
    format!(
        "Stopped after {max} step{} without a final answer (the step limit). {way_on}",
        if max == 1 { "" } else { "s" }
    )
}

/// What a compaction did, in a line: `Compacted 126 turns into a summary of 900 tokens`.
pub fn compacted_line(c: &crate::events::Compaction) -> String {
    let why = if c.automatic {
        " (the context was nearly full)"
    } else {
        ""
    };
    format!(
        "Compacted {} turn{} into a summary of {} tokens{why}",
        c.turns,
        if c.turns == 1 { "" } else { "s" },
        c.summary_tokens
    )
}

/// A prompt a `UserPromptSubmit` hook blocked.
pub fn prompt_blocked(reason: &str) -> String {
    format!("A UserPromptSubmit hook blocked this prompt; nothing was sent. It said: {reason}")
}

/// `/compact` stopped by the person.
pub const COMPACTION_INTERRUPTED: &str = "Compaction interrupted; nothing changed.";

/// Why compacting failed, and what happens instead.
pub fn compaction_failed_notice(reason: &str, automatic: bool) -> String {
    let instead = if automatic {
        " Older turns are trimmed to fit the context window instead, as before; /compact tries again."
    } else {
        ""
    };
    format!("Could not compact the session: {reason}.{instead}")
}

/// What fitting a request into the context window left out.
pub fn trimmed_notice(dropped_turns: usize, shortened: usize) -> String {
    let mut parts = Vec::new();
    if dropped_turns > 0 {
        parts.push(format!("left out {dropped_turns} earlier turn(s)"));
    }
    if shortened > 0 {
        parts.push(format!("shortened {shortened} tool output(s)"));
    }
    format!(
        "To fit the context window, this request {}; the history keeps them whole. /compact summarizes older turns instead.",
        parts.join(" and ")
    )
}

/// The error as a sentence that says what to do next.
pub fn error_advice(e: &LlmError) -> String {
    let next = match e {
        LlmError::MissingKey => return crate::secrets::missing_key_message(),
        LlmError::MissingProviderKey { .. } | LlmError::UnknownProvider { .. } => {
            "Then send the prompt again, or choose another model with /model."
        }
        LlmError::Http { status: 401, .. } => {
            "A key changed there is used from the next prompt on (in the full-screen UI, /key enters one)."
        }
        LlmError::Http { status: 402, .. } => "Then send the prompt again.",
        LlmError::Http {
            status: 400 | 422, ..
        } => {
            "This is likely a bug in MiniClaw or an unsupported model setting; try the other preset (F2) or clear the history."
        }
        LlmError::QueuedTooLong(_) => "Send the prompt again in a few minutes.",
        _ => "Try the prompt again.",
    };
    let text = e.to_string();
    let stop = if text.ends_with(['.', '…', '!', '?']) {
        ""
    } else {
        "."
    };
    format!("{text}{stop} {next}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advice_names_the_next_step() {
        assert!(error_advice(&LlmError::MissingKey).contains("DEEPSEEK_API_KEY"));
        let e = LlmError::Http {
            status: 402,
            message: "Insufficient Balance".into(),
        };
        let text = error_advice(&e);
        assert!(text.contains("Insufficient Balance") && text.contains("top up"));
        assert!(!text.contains(".."), "{text}");
    }
}
