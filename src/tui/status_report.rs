//! What `/status` says (a notice block in the conversation, so it stays in the scrollback
//! beside what it describes) and what quitting prints: read from the state, never changing it.

use crate::llm::prices::PRICES_DATE;
use crate::terminal_text;
use crate::tui::state::State;

/// Tokens of this session's turns as the screen saw them (a reopened session's earlier turns
/// count when their usage was kept).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tokens {
    /// Tokens sent.
    pub prompt: u64,
    /// Tokens generated.
    pub completion: u64,
    /// The turns counted.
    pub turns: usize,
}

/// The session's tokens added up over its turns.
pub fn session_tokens(state: &State) -> Tokens {
    let turns = &state.view.transcript.turns;
    // Token counts are not saved with a session: the turns counted are this run's.
    let mut tokens = Tokens::default();
    for usage in turns.iter().filter_map(|t| t.usage.as_ref()) {
        tokens.turns += 1;
        tokens.prompt += usage.prompt_tokens;
        tokens.completion += usage.completion_tokens;
    }
    tokens
}

impl Tokens {
    /// `12,345 in · 678 out over 3 turns` (this run's).
    pub fn text(&self) -> String {
        format!(
            "{} in · {} out over {} turn{} this run",
            thousands(self.prompt),
            thousands(self.completion),
            self.turns,
            if self.turns == 1 { "" } else { "s" }
        )
    }
}

/// `1234567` as `1,234,567` (the paste markers' way of saying it).
fn thousands(n: u64) -> String {
    crate::tui::paste::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The `/status` block: model and provider, approval mode (and where it came from when
/// known), workspace, session, tokens and context, skills and custom commands, MCP servers.
pub fn report(state: &State) -> String {
    let mut lines = vec!["Status:".to_string()];
    lines.push(format!(
        "  Model       {} (provider {})",
        state.preset.model(),
        state.preset.provider()
    ));
    let source = format!(" ({})", state.approval_source.describe());
    lines.push(format!(
        "  Approval    {}{source}",
        state.approval_mode.name()
    ));
    lines.push(format!("  Workspace   {}", state.workspace));
    let title = state
        .view
        .session_title
        .as_deref()
        .map(|t| format!("“{}”", one_line(t)))
        .unwrap_or_else(|| "(empty)".into());
    let id = state
        .session_id
        .as_deref()
        .map(|id| format!(" · id {id}"))
        .unwrap_or_default();
    lines.push(format!("  Session     {title}{id}"));
    lines.push(format!("  Tokens      {}", session_tokens(state).text()));
    // A reopened session's earlier turns count: each response's cost is saved with it.
    let cost = state.view.transcript.cost().described().map_or_else(
        || "none known (only DeepSeek's models and those priced in [cost] have a price)".into(),
        |spent| format!("{spent} this session"),
    );
    lines.push(format!("  Cost        {cost}"));
    let last_turn = state
        .view
        .transcript
        .turns
        .last()
        .and_then(|t| t.cost.described());
    if let Some(turn) = last_turn {
        lines.push(format!("              {turn} the last turn"));
    }
    lines.push(format!(
        "  Prices      DeepSeek's of {PRICES_DATE} (peak: weekdays 09–12 and 14–18 Beijing time, \
         twice off-peak); [cost] in config.toml sets your own"
    ));
    let context = match state.status.context.filter(|g| g.budget > 0) {
        Some(g) => format!(
            "{} of {} tokens ({}%) in the last request; {}",
            thousands(g.used as u64),
            thousands(g.budget as u64),
            crate::tui::panes::status::context_percent(g.used, g.budget),
            match g.compact_at {
                Some(at) => format!(
                    "compacted by itself past {} tokens ({}%)",
                    thousands(at as u64),
                    crate::tui::panes::status::context_percent(at, g.budget)
                ),
                None => "never compacted by itself ([context] compact_at = 0)".into(),
            }
        ),
        None => "not known until a request was sent".into(),
    };
    lines.push(format!("  Context     {context}"));
    lines.push(match &state.run_command {
        Ok(()) => {
            "  Commands    run_command runs in the jail (/jobs lists its background jobs)".into()
        }
        Err(why) => format!(
            "  Commands    run_command is not offered: {}",
            one_line(why)
        ),
    });
    lines.push(format!(
        "  Skills      {} (/skills) · custom commands: {}",
        state.skills.iter().count(),
        state.custom_commands.iter().count()
    ));
    if state.mcp.is_empty() {
        lines.push("  MCP         none configured".into());
    } else {
        for (i, server) in state.mcp.iter().enumerate() {
            lines.push(format!(
                "  {}{} — {}, {} tool(s)",
                if i == 0 {
                    "MCP         "
                } else {
                    "            "
                },
                one_line(&server.name),
                server.state.name(),
                server.tools.len()
            ));
        }
    }
    lines.join("\n")
}

/// The `/jobs` block: each background job with its state, age and command.
pub fn jobs(jobs: &[crate::events::JobInfo]) -> String {
    if jobs.is_empty() {
        return "Background jobs: none in this session (run_command starts one with `background`)."
            .into();
    }
    let mut lines = vec!["Background jobs (/jobs stop N ends one):".to_string()];
    for job in jobs {
        let secs = job.age.as_secs();
        let age = if secs < 120 {
            format!("{secs} s")
        } else {
            format!("{} min", secs / 60)
        };
        lines.push(format!(
            "  {}  {} · {age} · in {} · {}",
            job.id,
            job.state.describe(),
            one_line(&job.dir),
            one_line(&job.command)
        ));
    }
    lines.join("\n")
}

/// What `/hooks` shows: each hook by event, what it selects, its command, the file it comes
/// from and its last result.
pub fn hooks(hooks: &[crate::hooks::HookStatus]) -> String {
    if hooks.is_empty() {
        return "Hooks: none configured ([[hooks.PreToolUse]] and the other events in your config.toml, or a trusted project's miniclaw.toml; the README shows how).".into();
    }
    let mut lines = vec!["Hooks (they run with your rights, outside the tool jail):".to_string()];
    for hook in hooks {
        let selects = hook
            .matcher
            .as_deref()
            .map(|m| format!(" [{}]", one_line(m)))
            .unwrap_or_default();
        lines.push(format!(
            "  {}{selects}  {}  ({})",
            hook.event.name(),
            one_line(&hook.command),
            one_line(&hook.origin.file.display().to_string())
        ));
        lines.push(match &hook.last {
            Some(last) => format!(
                "    last run {}: {}",
                last.at.format("%H:%M:%S"),
                one_line(&last.summary)
            ),
            None => "    not run yet".to_string(),
        });
    }
    lines.join("\n")
}

/// What quitting prints once the terminal is restored: how to reopen the session and what it
/// cost; nothing for an empty session.
pub fn farewell(state: &State) -> Option<String> {
    let tokens = session_tokens(state);
    if tokens.turns == 0 {
        return None;
    }
    // The id names the session for certain; a title may be shared. Without the id (the
    // history was cleared since start) the title is the way back.
    let name = match (&state.session_id, &state.view.session_title) {
        // MiniClaw's ids are letters, digits, `-` and `_`; a planted history's may be
        // anything, and is cleaned like a title.
        (Some(id), _)
            if !id.is_empty()
                && id.len() <= 64
                && id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            id.clone()
        }
        (Some(id), _) => one_line(id),
        (None, Some(title)) => one_line(title),
        (None, None) => return None,
    };
    let mut out = format!(
        "To continue this session: miniclaw-tui --resume {}",
        shell_quote(&name)
    );
    if let (Some(_), Some(title)) = (&state.session_id, &state.view.session_title) {
        out.push_str(&format!("  (“{}”)", one_line(title)));
    }
    if tokens.turns > 0 {
        out.push_str(&format!("\nTokens used: {}", tokens.text()));
    }
    if let Some(spent) = state.view.transcript.cost().described() {
        out.push_str(&format!("\nCost of this session: {spent}"));
    }
    out.push('\n');
    Some(out)
}

/// `text` cleaned of escapes and control characters, on one line (a title is untrusted).
fn one_line(text: &str) -> String {
    terminal_text::clean(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// `text` quoted for a POSIX shell: in double quotes when nothing in it is special there, else
/// in single quotes (inside which only `'` needs care).
pub fn shell_quote(text: &str) -> String {
    if !text
        .chars()
        .any(|c| matches!(c, '"' | '$' | '`' | '\\' | '!' | '\''))
    {
        return format!("\"{text}\"");
    }
    format!("'{}'", text.replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_the_shell_from_reading_anything_into_it() {
        assert_eq!(shell_quote("fix the parser"), "\"fix the parser\"");
        assert_eq!(shell_quote("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(shell_quote("a `b` \\ \"c\""), "'a `b` \\ \"c\"'");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1234567), "1,234,567");
    }

    #[test]
    fn a_planted_title_reaches_the_output_without_escapes() {
        let line = one_line("x\x1b]2;pwned\x07\x1b[31mred\r\nnext");
        assert!(line.chars().all(|c| !c.is_control()), "{line:?}");
    }
}
