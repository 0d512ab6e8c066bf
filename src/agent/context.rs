//! Keeping the conversation sent to the model inside a token budget.
//!
//! Tokens are estimated from the text, then corrected by what the server reports. To fit, old tool
//! outputs are shortened first (head and tail kept, the cut noted), then the oldest turns are
//! dropped whole, so a tool call is never separated from its result. The system prompt and the
//! current turn (from the last user message on) are never touched. The saved history keeps
//! everything; only the request is trimmed.

use crate::llm::{ChatMessage, Role};

/// Tool outputs longer than this (in characters) may be shortened when the context is tight.
const SHORTEN_OVER: usize = 2_000;
/// How much of a shortened output's head and tail is kept.
const KEEP_EACH_END: usize = 600;

/// The context budget and the estimate's correction learned from the server.
#[derive(Clone, Debug)]
pub struct ContextBudget {
    /// The most prompt tokens a request may carry.
    pub max_tokens: usize,
    /// Server-reported tokens per estimated token (1.0 until the first response).
    scale: f64,
    /// The budget given for every model (`--context-tokens`), which wins over a model's own.
    configured: Option<usize>,
}

/// The default share of the context budget (percent) a request may reach before the session is
/// compacted.
pub const DEFAULT_COMPACT_AT: u8 = 80;

/// The budget of a model that says nothing of its window (a custom name, a provider's model
/// without `context_tokens`).
pub const DEFAULT_CONTEXT_TOKENS: usize = 100_000;

/// What fitting did to a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FitReport {
    /// The estimated prompt tokens after fitting (corrected).
    pub estimated_tokens: usize,
    /// Tool outputs shortened.
    pub shortened: usize,
    /// Whole earlier turns left out.
    pub dropped_turns: usize,
}

impl ContextBudget {
    /// A budget of `max_tokens` prompt tokens for every model.
    #[cfg(test)]
    pub fn new(max_tokens: usize) -> Self {
        Self::configured(Some(max_tokens))
    }

    /// The budget `tokens` for every model when given, else each model's own window.
    pub fn configured(tokens: Option<usize>) -> Self {
        let configured = tokens.map(|t| t.max(1_000));
        Self {
            max_tokens: configured.unwrap_or(DEFAULT_CONTEXT_TOKENS),
            scale: 1.0,
            configured,
        }
    }

    /// Follows the model of the next request: the configured budget when there is one, else
    /// the model's own window (`tokens`), else [`DEFAULT_CONTEXT_TOKENS`].
    pub fn for_model(&mut self, tokens: Option<usize>) {
        self.max_tokens = self
            .configured
            .or(tokens)
            .unwrap_or(DEFAULT_CONTEXT_TOKENS)
            .max(1_000);
    }

    /// Learns from a response: the server counted `actual` prompt tokens for a request whose raw
    /// estimate was `raw_estimate`.
    pub fn correct(&mut self, raw_estimate: usize, actual: u64) {
        if raw_estimate > 0 && actual > 0 {
            // Bounded: one odd count (a proxy, a cached prefix) must not unbalance the estimate.
            self.scale = (actual as f64 / raw_estimate as f64).clamp(0.5, 2.0);
        }
    }

    /// An estimate corrected by what the server reported.
    pub fn corrected(&self, raw: usize) -> usize {
        (raw as f64 * self.scale).ceil() as usize
    }

    /// The raw estimate that corrects to `tokens`.
    pub fn uncorrected(&self, tokens: usize) -> usize {
        (tokens as f64 / self.scale).floor() as usize
    }

    /// Trims `messages` to fit beside `overhead` tokens that are always sent (the tool schemas);
    /// returns them with a report and the raw (uncorrected) estimate.
    pub fn fit(
        &self,
        mut messages: Vec<ChatMessage>,
        overhead: usize,
    ) -> (Vec<ChatMessage>, FitReport, usize) {
        let mut report = FitReport::default();
        let mut raw = overhead + estimate_messages(&messages);
        let current = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .unwrap_or(messages.len());
        // Shorten old tool outputs, oldest first.
        self.shorten_outputs(&mut messages, 0..current, None, &mut raw, &mut report);
        // Then drop the oldest whole turns (a user message and all that follows until the next).
        let mut first_kept = messages
            .iter()
            .position(|m| m.role == Role::User)
            .unwrap_or(current);
        let head_end = first_kept;
        while self.corrected(raw) > self.max_tokens && first_kept < current {
            let next = messages[first_kept + 1..current]
                .iter()
                .position(|m| m.role == Role::User)
                .map_or(current, |p| first_kept + 1 + p);
            raw -= estimate_messages(&messages[first_kept..next]);
            first_kept = next;
            report.dropped_turns += 1;
        }
        if report.dropped_turns > 0 {
            messages.drain(head_end..first_kept);
            if let Some(system) = messages.first_mut().filter(|m| m.role == Role::System) {
                let note = format!(
                    "\n\n[{} earlier turn(s) of this conversation were left out to fit the context window.]",
                    report.dropped_turns
                );
                raw += estimate_tokens(&note);
                system
                    .content
                    .get_or_insert_with(String::new)
                    .push_str(&note);
            }
        }
        // Last resort, when the current turn alone is too big (a few large files read): shorten
        // its tool outputs too, oldest first, rather than send a request the server must refuse.
        // The newest output stays whole: the model is about to read it.
        let current = messages
            .iter()
            .rposition(|m| m.role == Role::User)
            .unwrap_or(messages.len());
        let newest_tool = messages.iter().rposition(|m| m.role == Role::Tool);
        let end = messages.len();
        self.shorten_outputs(
            &mut messages,
            current..end,
            newest_tool,
            &mut raw,
            &mut report,
        );
        // Still too big: the newest output alone does not fit what is left, so it is cut to fit
        // too (head and tail kept, the cut noted) — no request may exceed the budget.
        if let Some(i) = newest_tool
            && self.corrected(raw) > self.max_tokens
            && let Some(text) = messages[i].content.clone()
        {
            let own = estimate_tokens(&text);
            let others = raw - own;
            let allowed =
                ((self.max_tokens as f64 / self.scale).floor() as usize).saturating_sub(others);
            let cut = cut_to_tokens(&text, allowed);
            raw = others + estimate_tokens(&cut);
            messages[i].content = Some(cut);
            report.shortened += 1;
        }
        report.estimated_tokens = self.corrected(raw);
        (messages, report, raw)
    }

    /// Shortens the tool outputs among `messages[range]` (but `keep`), oldest first, until the
    /// estimate fits.
    fn shorten_outputs(
        &self,
        messages: &mut [ChatMessage],
        range: std::ops::Range<usize>,
        keep: Option<usize>,
        raw: &mut usize,
        report: &mut FitReport,
    ) {
        for i in range {
            if self.corrected(*raw) <= self.max_tokens {
                break;
            }
            let m = &mut messages[i];
            if m.role != Role::Tool || Some(i) == keep {
                continue;
            }
            if let Some(text) = &m.content
                && let Some(short) = shorten(text)
            {
                *raw = *raw - estimate_tokens(text) + estimate_tokens(&short);
                m.content = Some(short);
                report.shortened += 1;
            }
        }
    }
}

/// A rough token count: about four ASCII characters a token, one token per other character
/// (CJK text is close to a token a character).
pub fn estimate_tokens(text: &str) -> usize {
    let (ascii, other) = text.chars().fold((0usize, 0usize), |(a, o), c| {
        if c.is_ascii() { (a + 1, o) } else { (a, o + 1) }
    });
    ascii.div_ceil(4) + other
}

/// The estimate for the tool schemas sent with every request.
pub fn estimate_schemas(schemas: &[crate::llm::ToolSchema]) -> usize {
    schemas
        .iter()
        .map(|s| {
            8 + estimate_tokens(&s.name)
                + estimate_tokens(&s.description)
                + estimate_tokens(&s.parameters.to_string())
        })
        .sum()
}

/// The estimate for a list of messages, with a small overhead each.
pub fn estimate_messages(messages: &[ChatMessage]) -> usize {
    messages
        .iter()
        .map(|m| {
            4 + m.content.as_deref().map_or(0, estimate_tokens)
                + m.reasoning_content.as_deref().map_or(0, estimate_tokens)
                + m.tool_calls.as_ref().map_or(0, |calls| {
                    calls
                        .iter()
                        .map(|c| {
                            8 + estimate_tokens(&c.function.name)
                                + estimate_tokens(&c.function.arguments)
                        })
                        .sum()
                })
        })
        .sum()
}

/// Head and tail of a long text with the cut noted; `None` when it is short enough already.
fn shorten(text: &str) -> Option<String> {
    let count = text.chars().count();
    if count <= SHORTEN_OVER {
        return None;
    }
    let head: String = text.chars().take(KEEP_EACH_END).collect();
    let tail: String = text.chars().skip(count - KEEP_EACH_END).collect();
    Some(format!(
        "{head}\n…[{} characters cut to fit the context window]…\n{tail}",
        count - 2 * KEEP_EACH_END
    ))
}

/// Head and tail of `text` within about `tokens` tokens, the cut noted in the middle.
fn cut_to_tokens(text: &str, tokens: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let note = |n: usize| format!("\n…[{n} characters cut to fit the context window]…\n");
    // Start from the text's own characters-per-token ratio, then tighten until it fits.
    let per_token = chars.len() as f64 / estimate_tokens(text).max(1) as f64;
    let mut keep = ((tokens.saturating_sub(24)) as f64 * per_token) as usize;
    loop {
        keep = keep.min(chars.len());
        let head: String = chars[..keep / 2].iter().collect();
        let tail: String = chars[chars.len() - keep / 2..].iter().collect();
        let cut = format!("{head}{}{tail}", note(chars.len() - 2 * (keep / 2)));
        if estimate_tokens(&cut) <= tokens || keep == 0 {
            return cut;
        }
        keep = keep * 9 / 10;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::session::{Message, Session};
    use crate::llm::{FunctionCall, ToolCall};

    fn read_call(id: String) -> ToolCall {
        ToolCall {
            id,
            kind: "function".into(),
            function: FunctionCall {
                name: "read_text_file".into(),
                arguments: "{}".into(),
            },
        }
    }

    fn turn(s: &mut Session, n: usize, output_len: usize) {
        s.push(Message::user(format!("question {n}")));
        s.push(Message::assistant(
            "",
            None,
            vec![read_call(format!("c{n}"))],
        ));
        s.push(Message::tool(format!("c{n}"), "x".repeat(output_len)));
        s.push(Message::assistant(format!("answer {n}"), None, vec![]));
    }

    #[test]
    fn a_conversation_that_fits_is_sent_whole() {
        let mut s = Session::new();
        turn(&mut s, 1, 100);
        let msgs = s.to_chat(true);
        let (fitted, report, _) = ContextBudget::new(100_000).fit(msgs.clone(), 0);
        assert_eq!(fitted, msgs);
        assert_eq!(report.dropped_turns + report.shortened, 0);
    }

    #[test]
    fn old_tool_outputs_are_shortened_before_turns_are_dropped() {
        let mut s = Session::new();
        for n in 0..5 {
            turn(&mut s, n, 20_000);
        }
        s.push(Message::user("now"));
        let (fitted, report, _) = ContextBudget::new(5_000).fit(s.to_chat(true), 0);
        assert_eq!(report.shortened, 5);
        assert_eq!(report.dropped_turns, 0);
        assert!(report.estimated_tokens <= 5_000);
        let tool = fitted.iter().find(|m| m.role == Role::Tool).unwrap();
        assert!(tool.content.as_ref().unwrap().contains("characters cut"));
    }

    #[test]
    fn the_oldest_turns_go_whole_and_the_current_turn_stays() {
        let mut s = Session::new();
        for n in 0..30 {
            turn(&mut s, n, 1_500);
        }
        s.push(Message::user("the current question"));
        let big_current = "y".repeat(3_000);
        s.push(Message::tool("orphan-free", big_current.clone()));
        let msgs = s.to_chat(true);
        let (fitted, report, _) = ContextBudget::new(4_000).fit(msgs, 0);
        assert!(report.dropped_turns > 0);
        assert_eq!(fitted[0].role, Role::System);
        assert!(fitted[0].content.as_ref().unwrap().contains("left out"));
        assert_eq!(fitted[1].role, Role::User, "turns are dropped whole");
        // Every call kept has its result right after it.
        for (i, m) in fitted.iter().enumerate() {
            if let Some(calls) = &m.tool_calls {
                assert_eq!(
                    fitted[i + 1].tool_call_id.as_deref(),
                    Some(calls[0].id.as_str())
                );
            }
        }
        let last = fitted.last().unwrap();
        assert_eq!(
            last.content.as_deref(),
            Some(big_current.as_str()),
            "current turn untouched"
        );
    }

    #[test]
    fn a_current_turn_too_big_alone_has_its_older_outputs_shortened_but_the_newest_kept() {
        let mut s = Session::new();
        s.push(Message::user("read three big files"));
        for n in 0..3 {
            s.push(Message::assistant(
                "",
                None,
                vec![read_call(format!("c{n}"))],
            ));
            s.push(Message::tool(format!("c{n}"), "z".repeat(40_000)));
        }
        let (fitted, report, _) = ContextBudget::new(15_000).fit(s.to_chat(true), 500);
        assert_eq!(report.shortened, 2);
        assert!(report.estimated_tokens <= 15_000, "{report:?}");
        let newest = fitted.last().unwrap().content.as_ref().unwrap();
        assert_eq!(newest.len(), 40_000, "the newest output stays whole");
    }

    #[test]
    fn an_output_that_alone_does_not_fit_is_cut_too_head_and_tail_kept() {
        let mut s = Session::new();
        s.push(Message::user("read the big file"));
        s.push(Message::assistant("", None, vec![read_call("c0".into())]));
        let text = format!("HEAD{}TAIL", "y".repeat(118_000));
        s.push(Message::tool("c0", text));
        let (fitted, report, _) = ContextBudget::new(4_000).fit(s.to_chat(true), 500);
        assert!(report.estimated_tokens <= 4_000, "{report:?}");
        assert!(estimate_messages(&fitted) + 500 <= 4_000);
        let newest = fitted.last().unwrap().content.as_ref().unwrap();
        assert!(
            newest.starts_with("HEAD") && newest.ends_with("TAIL"),
            "head and tail kept"
        );
        assert!(newest.contains("characters cut to fit the context window"));
        assert!(
            newest.len() > 4_000,
            "as much as fits is kept: {}",
            newest.len()
        );
    }

    #[test]
    fn the_budget_follows_the_model_unless_one_is_given_for_all() {
        let mut own = ContextBudget::configured(None);
        own.for_model(crate::llm::Preset::Pro.context_tokens());
        assert_eq!(own.max_tokens, 1_000_000, "DeepSeek's V4 window");
        own.for_model(crate::llm::Preset::Custom("local".into()).context_tokens());
        assert_eq!(own.max_tokens, DEFAULT_CONTEXT_TOKENS);
        own.for_model(Some(32_768));
        assert_eq!(own.max_tokens, 32_768, "a provider model's context_tokens");
        let mut given = ContextBudget::configured(Some(8_000));
        given.for_model(crate::llm::Preset::Flash.context_tokens());
        assert_eq!(given.max_tokens, 8_000, "--context-tokens wins");
    }

    #[test]
    fn the_server_count_corrects_the_estimate() {
        let mut b = ContextBudget::new(10_000);
        b.correct(1_000, 2_000);
        assert_eq!(b.corrected(1_000), 2_000);
        assert_eq!(estimate_tokens("你好"), 2);
        assert_eq!(estimate_tokens("abcdefgh"), 2);
    }
}
