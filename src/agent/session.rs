//! A conversation: its messages with ids and times, and how they become the API's messages.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use super::mentions::{Attached, Expanded};
use super::plan::PlanMark;
use crate::events::CallOutcome;
use crate::llm::prices::Billed;
use crate::llm::{ChatMessage, Role, ToolCall};

/// Why an answer did not finish. Kept in the history as the text it always was:
/// `interrupted`, `failed: <error>`, or the sentence that says how it was cut.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum Incomplete {
    /// The person interrupted it.
    Interrupted,
    /// An error stopped the stream: the error.
    Failed(String),
    /// The provider cut it short (output limit, content filter): the sentence saying so.
    Cut(String),
}

impl From<String> for Incomplete {
    fn from(text: String) -> Self {
        if text == "interrupted" {
            Self::Interrupted
        } else if let Some(error) = text.strip_prefix("failed: ") {
            Self::Failed(error.to_string())
        } else {
            Self::Cut(text)
        }
    }
}

impl From<Incomplete> for String {
    fn from(why: Incomplete) -> Self {
        match why {
            Incomplete::Interrupted => "interrupted".into(),
            Incomplete::Failed(error) => format!("failed: {error}"),
            Incomplete::Cut(text) => text,
        }
    }
}

/// The instructions that open every conversation.
pub const SYSTEM_PROMPT: &str = "You are MiniClaw, a careful assistant in a terminal. \
You work in a sandboxed workspace folder through the tools you are given; every path is relative \
to that folder. Think step by step, call a tool when it helps, read each result (an Observation) \
before the next step, and answer plainly in Markdown when you are done. Never invent file \
contents or tool results: if a tool fails, say so and try another way.";

/// One message of a conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// A unique id.
    pub id: String,
    /// Who speaks.
    pub role: Role,
    /// The text.
    #[serde(default)]
    pub content: Text,
    /// The model's reasoning (assistant messages in thinking mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<String>,
    /// Calls the assistant made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool result: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// When it was made.
    pub timestamp: DateTime<Utc>,
    /// Set on an answer that was cut short (interrupted, stream cut, length limit): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incomplete: Option<Incomplete>,
    /// For a tool result: how the call ended (sessions saved before it was kept have none; one
    /// this version cannot read counts as none, so the history still loads).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "lenient_outcome"
    )]
    pub outcome: Option<CallOutcome>,
    /// For a tool result: whether a person said yes to the call first.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub approved: bool,
    /// For a tool result: how long the call ran, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// What MiniClaw told the model before a prompt (e.g. that the person undid a turn's
    /// changes): sent ahead of the content, never shown as the person's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For a prompt that mentioned files (`@path`): the prompt as typed (`content` adds the
    /// files) and which mentions were attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attached: Option<Attached>,
    /// For a prompt of a `/plan` run: the planner's, or the executor's for one item.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanMark>,
    /// For an assistant message: the tokens of the response that made it and what they cost,
    /// so a reopened session knows its cost (sessions saved before it was kept have none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub billed: Option<Billed>,
    /// For a compaction (a system message whose content is the summary): what it replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<CompactionMark>,
}

/// What a compaction's summary replaces in later requests: every message before it but the
/// system prompt, except those from `kept_from` on (the turn that was running).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionMark {
    /// How many turns it replaced.
    pub turns: usize,
    /// Whether the context budget set it off (not `/compact`).
    #[serde(default)]
    pub automatic: bool,
    /// The id of the first message still sent after it (the running turn's prompt); `None`:
    /// none before it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kept_from: Option<String>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            id: new_id(),
            role,
            content: Text::from(content.into()),
            reasoning: None,
            tool_calls: Vec::new(),
            tool_call_id: None,
            timestamp: Utc::now(),
            incomplete: None,
            outcome: None,
            approved: false,
            duration_ms: None,
            note: None,
            attached: None,
            plan: None,
            compaction: None,
            billed: None,
        }
    }

    /// The system prompt.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    /// A compaction: `summary` stands for what `mark` says it replaced.
    pub fn compaction(summary: impl Into<String>, mark: CompactionMark) -> Self {
        Self {
            compaction: Some(mark),
            ..Self::new(Role::System, summary)
        }
    }

    /// Whether this is the system prompt's kind of message (a system message that is not a
    /// compaction's summary).
    pub fn is_system_prompt(&self) -> bool {
        self.role == Role::System && self.compaction.is_none()
    }

    /// What this message replaced, when it is a compaction's summary (a system message with a
    /// mark; a mark on any other message counts for nothing).
    pub fn summary_mark(&self) -> Option<&CompactionMark> {
        self.compaction
            .as_ref()
            .filter(|_| self.role == Role::System)
    }

    /// A prompt of the person.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// A prompt whose mentions were resolved: `content` carries the files, `attached` says how
    /// it was typed.
    pub fn prompt(expanded: Expanded) -> Self {
        Self {
            attached: expanded.attached,
            ..Self::new(Role::User, expanded.content)
        }
    }

    /// The text as the person wrote it: a prompt without the files it attached (an executor's
    /// prompt: its plan item).
    pub fn shown(&self) -> &str {
        if let Some(item) = self.plan.as_ref().and_then(PlanMark::shown) {
            return item;
        }
        match &self.attached {
            Some(a) => &a.typed,
            None => &self.content,
        }
    }

    /// A model message, maybe with reasoning and tool calls.
    pub fn assistant(
        content: impl Into<String>,
        reasoning: Option<String>,
        tool_calls: Vec<ToolCall>,
    ) -> Self {
        Self {
            reasoning: reasoning.filter(|r| !r.is_empty()),
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// A tool's observation for call `call_id`.
    pub fn tool(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }

    /// A tool's result with how the call ended and whether a person said yes to it.
    pub fn tool_result(
        call_id: impl Into<String>,
        content: impl Into<String>,
        (outcome, approved): (CallOutcome, bool),
    ) -> Self {
        Self {
            outcome: Some(outcome),
            approved,
            ..Self::tool(call_id, content)
        }
    }

    /// The same assistant message, with what its response was billed.
    pub fn billed(mut self, billed: Option<Billed>) -> Self {
        self.billed = billed;
        self
    }

    /// The same tool result, with how long its call ran.
    pub fn timed(mut self, duration: Option<std::time::Duration>) -> Self {
        self.duration_ms = duration.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// The message as the API wants it. With tools in play every assistant message carries
    /// `reasoning_content`, an empty string when it had none: DeepSeek answers 400 otherwise.
    pub fn to_chat(&self, with_tools: bool) -> ChatMessage {
        let is_assistant = self.role == Role::Assistant;
        ChatMessage {
            role: self.role,
            content: if is_assistant && self.content.is_empty() && !self.tool_calls.is_empty() {
                None
            } else if let Some(note) = &self.note {
                Some(format!("{note}\n\n{}", self.content))
            } else {
                Some(self.content.to_string())
            },
            reasoning_content: if is_assistant && with_tools {
                Some(self.reasoning.clone().unwrap_or_default())
            } else {
                None
            },
            tool_calls: (!self.tool_calls.is_empty()).then(|| self.tool_calls.clone()),
            tool_call_id: self.tool_call_id.clone(),
        }
    }
}

/// A saved call's outcome, or none when it is not one this version knows (a later version's, or
/// an edited file): the observation still says what happened.
fn lenient_outcome<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<CallOutcome>, D::Error> {
    let value = serde_json::Value::deserialize(d)?;
    Ok(serde_json::from_value(value).ok())
}

/// What the model is told stands between a prompt that got no answer and the next one.
pub const NO_ANSWER_NOTE: &str =
    "[no answer: that request was interrupted or failed before the model replied]";

/// The note sent after an answer that did not finish, from the reason kept with it.
fn incomplete_mark(why: &Incomplete) -> String {
    match why {
        Incomplete::Interrupted => "[interrupted by the user]".to_string(),
        Incomplete::Failed(error) => format!("[stopped by an error: {error}]"),
        Incomplete::Cut(text) => format!("[cut off: {text}]"),
    }
}

/// The most characters of a title taken from a prompt.
const TITLE_CHARS: usize = 60;

/// The title a session gets from its first prompt: the first line, shortened.
pub fn title_from_prompt(prompt: &str) -> String {
    shorten(
        prompt.trim().lines().next().unwrap_or("").trim(),
        TITLE_CHARS,
    )
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
pub fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// A fresh unique id.
pub fn new_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// A conversation and its times.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// A unique id.
    pub id: String,
    /// When it started.
    pub created_at: DateTime<Utc>,
    /// When it last changed.
    pub updated_at: DateTime<Utc>,
    /// The name given with `/rename` (until then the first prompt's first line stands in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Every message, the system prompt first. Written last: a history's glimpse finds the
    /// session's end as the end of the file (`history::glimpse`).
    pub messages: Vec<Message>,
}

impl Default for Session {
    fn default() -> Self {
        Self::new()
    }
}

impl Session {
    /// A new conversation holding only the system prompt.
    pub fn new() -> Self {
        let now = Utc::now();
        Self {
            id: new_id(),
            created_at: now,
            updated_at: now,
            title: None,
            messages: vec![Message::system(SYSTEM_PROMPT)],
        }
    }

    /// A new conversation opened by a different system prompt (e.g. a sub-agent's).
    pub fn with_system(prompt: impl Into<String>) -> Self {
        let mut s = Self::new();
        s.messages[0] = Message::system(prompt);
        s
    }

    /// The system prompt the conversation opens with, if it has one.
    pub fn system_prompt(&self) -> Option<&str> {
        self.messages
            .first()
            .filter(|m| m.is_system_prompt())
            .map(|m| m.content.as_str())
    }

    /// Opens the conversation with `prompt` from now on. A different prompt becomes a new
    /// message with a new id rather than an edit in place: the history's saves tell what changed
    /// by ids, so the next save writes the session whole. The same prompt changes nothing.
    pub fn set_system_prompt(&mut self, prompt: &str) {
        if self.system_prompt() == Some(prompt) {
            return;
        }
        match self.messages.first() {
            Some(m) if m.is_system_prompt() => self.messages[0] = Message::system(prompt),
            _ => self.messages.insert(0, Message::system(prompt)),
        }
    }

    /// A new, empty conversation opened by the same system prompt as this one.
    pub fn cleared(&self) -> Self {
        Self::with_system(self.system_prompt().unwrap_or(SYSTEM_PROMPT))
    }

    /// The session's name: the one given with `/rename`, else the first prompt's first line
    /// (shortened); none while it is empty and unnamed.
    pub fn title(&self) -> Option<String> {
        match self.title.as_deref().filter(|t| !t.trim().is_empty()) {
            Some(title) => Some(title.to_string()),
            None => self.prompts().next().map(title_from_prompt),
        }
    }

    /// The person's prompts as typed, oldest first.
    pub fn prompts(&self) -> impl Iterator<Item = &str> {
        self.messages
            .iter()
            .filter(|m| m.role == Role::User)
            .map(Message::shown)
    }

    /// Whether the person has asked anything yet.
    pub fn has_prompts(&self) -> bool {
        self.prompts().next().is_some()
    }

    /// The text of the last assistant message, if any.
    pub fn last_answer(&self) -> Option<&str> {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant && m.tool_calls.is_empty())
            .map(|m| m.content.as_str())
    }

    /// Appends a message and updates the time.
    pub fn push(&mut self, message: Message) {
        self.updated_at = Utc::now();
        self.messages.push(message);
    }

    /// The latest compaction: its index and mark.
    pub fn last_compaction(&self) -> Option<(usize, &CompactionMark)> {
        self.messages
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, m)| m.summary_mark().map(|mark| (i, mark)))
    }

    /// Where the messages sent after the system prompt begin: after the latest compaction
    /// (or at the running turn it kept), else after the system prompt. A kept turn begins with
    /// a prompt: a mark naming anything else (an edited file) keeps nothing before it, so no
    /// tool result is sent without its call and the system prompt is never sent twice.
    pub fn sent_from(&self) -> usize {
        let first = usize::from(self.system_prompt().is_some());
        match self.last_compaction() {
            None => first,
            Some((at, mark)) => mark
                .kept_from
                .as_ref()
                .and_then(|id| {
                    self.messages[..at]
                        .iter()
                        .position(|m| m.id == *id && m.role == Role::User)
                })
                .filter(|&kept| kept >= first)
                .unwrap_or(at + 1),
        }
    }

    /// The messages as the API wants them: the system prompt (with the latest compaction's
    /// summary after it), then what that compaction did not replace.
    pub fn to_chat(&self, with_tools: bool) -> Vec<ChatMessage> {
        let mut out: Vec<ChatMessage> = Vec::with_capacity(self.messages.len() + 1);
        let summary = self.last_compaction().map(|(at, _)| &self.messages[at]);
        if let Some(system) = self.messages.first().filter(|m| m.is_system_prompt()) {
            let mut chat = system.to_chat(with_tools);
            if let Some(summary) = summary {
                let base = chat.content.take().unwrap_or_default();
                chat.content = Some(format!("{base}\n\n{}", summary.content));
            }
            out.push(chat);
        }
        for m in &self.messages[self.sent_from()..] {
            if m.summary_mark().is_some() {
                continue;
            }
            // A prompt that got no answer (its turn failed or was interrupted first) must not
            // sit next to the next prompt: the model is told what happened in between.
            if m.role == Role::User && out.last().is_some_and(|prev| prev.role == Role::User) {
                out.push(Message::assistant(NO_ANSWER_NOTE, None, vec![]).to_chat(with_tools));
            }
            let mut chat = m.to_chat(with_tools);
            if let (Some(why), true) = (&m.incomplete, m.tool_calls.is_empty()) {
                // An answer that did not finish goes back marked, so "continue" works.
                let text = chat.content.take().unwrap_or_default();
                let mark = incomplete_mark(why);
                chat.content = Some(if text.is_empty() {
                    mark
                } else {
                    format!("{text}\n\n{mark}")
                });
            }
            out.push(chat);
        }
        out
    }

    /// Makes the history valid for the API whatever happened before: every assistant tool call
    /// gets a result (a note that it never ran), and results without their call are dropped.
    pub fn repair(&mut self) {
        // Almost always whole: looked over first, since rebuilding moves every message (a long
        // session's are megabytes).
        if !self.is_whole() {
            self.rebuild();
        }
    }

    /// Repairs the session by rebuilding its messages (see [`Session::repair`]).
    fn rebuild(&mut self) {
        let mut fixed: Vec<Message> = Vec::with_capacity(self.messages.len());
        let mut open: Vec<String> = Vec::new();
        for mut m in std::mem::take(&mut self.messages) {
            if m.compaction.is_some() {
                if m.role == Role::System {
                    if m.content.len() > SUMMARY_CHARS {
                        cap_summary(m.content.make_mut());
                    }
                } else {
                    // Only a system message is a summary: a mark elsewhere (an edited file)
                    // is dropped and the message is sent as what it is.
                    m.compaction = None;
                }
            }
            match m.role {
                Role::Tool => {
                    let id = m.tool_call_id.clone().unwrap_or_default();
                    if let Some(pos) = open.iter().position(|o| *o == id) {
                        open.remove(pos);
                        fixed.push(m);
                    }
                }
                _ => {
                    close_open_calls(&mut fixed, &mut open);
                    if m.role == Role::Assistant {
                        open = m.tool_calls.iter().map(|c| c.id.clone()).collect();
                    }
                    fixed.push(m);
                }
            }
        }
        close_open_calls(&mut fixed, &mut open);
        if fixed.first().is_none_or(|m| !m.is_system_prompt()) {
            fixed.insert(0, Message::system(SYSTEM_PROMPT));
        }
        self.messages = fixed;
    }
}

impl Session {
    /// Whether [`Session::repair`] would leave the session as it is: it opens with the system
    /// prompt, every call has its one result right after its message, and only system messages
    /// hold summaries, none too long.
    fn is_whole(&self) -> bool {
        let mut open: Vec<&str> = Vec::new();
        for m in &self.messages {
            if m.compaction.is_some() && (m.role != Role::System || m.content.len() > SUMMARY_CHARS)
            {
                return false;
            }
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                match open.iter().position(|o| *o == id) {
                    Some(pos) => {
                        open.remove(pos);
                    }
                    None => return false,
                }
            } else if !open.is_empty() {
                return false;
            } else if m.role == Role::Assistant {
                open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
            }
        }
        open.is_empty() && self.messages.first().is_some_and(Message::is_system_prompt)
    }
}

/// A message's text. Shared, not copied, when it is cloned: a saved call's observation is
/// held by the conversation too (a long session's tool outputs are most of its weight). It
/// reads as a `str`; [`Text::make_mut`] edits it (a copy, if it is shared).
#[derive(Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Text(std::sync::Arc<String>);

impl Text {
    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, shared.
    pub fn shared(&self) -> std::sync::Arc<String> {
        std::sync::Arc::clone(&self.0)
    }

    /// The text to edit (copied first when it is shared).
    pub fn make_mut(&mut self) -> &mut String {
        std::sync::Arc::make_mut(&mut self.0)
    }
}

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self(std::sync::Arc::new(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self(std::sync::Arc::new(text.to_string()))
    }
}

impl From<Text> for String {
    fn from(text: Text) -> Self {
        std::sync::Arc::unwrap_or_clone(text.0)
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_str().fmt(f)
    }
}

/// The longest summary a loaded session sends: about 50,000 tokens, far past what the
/// summarizer writes, so only an edited or planted file is cut.
pub const SUMMARY_CHARS: usize = 200_000;

fn cap_summary(text: &mut String) {
    if text.len() > SUMMARY_CHARS {
        let mut end = SUMMARY_CHARS;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n\n[The rest of this summary was cut when the session was loaded.]");
    }
}

fn close_open_calls(fixed: &mut Vec<Message>, open: &mut Vec<String>) {
    for id in open.drain(..) {
        let name = fixed
            .iter()
            .rev()
            .flat_map(|m| m.tool_calls.iter())
            .find(|c| c.id == id)
            .map(|c| c.function.name.clone())
            .unwrap_or_default();
        fixed.push(Message::tool_result(
            id,
            serde_json::json!({"ok": false, "tool": name, "error": "the call did not run: the turn was interrupted"})
                .to_string(),
            (CallOutcome::Interrupted, false),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::FunctionCall;

    fn call(id: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            kind: "function".into(),
            function: FunctionCall {
                name: "list_files".into(),
                arguments: "{}".into(),
            },
        }
    }

    #[test]
    fn assistant_messages_carry_reasoning_content_when_tools_are_sent() {
        let plain = Message::assistant("hi", None, vec![]);
        assert_eq!(plain.to_chat(true).reasoning_content.as_deref(), Some(""));
        assert_eq!(plain.to_chat(false).reasoning_content, None);
        let thought = Message::assistant("", Some("hmm".into()), vec![call("a")]);
        let wire = thought.to_chat(true);
        assert_eq!(wire.reasoning_content.as_deref(), Some("hmm"));
        assert_eq!(wire.content, None);
        assert_eq!(Message::user("x").to_chat(true).reasoning_content, None);
    }

    #[test]
    fn a_new_system_prompt_replaces_the_old_one_under_a_new_id() {
        let mut s = Session::new();
        s.push(Message::user("go"));
        let old_id = s.messages[0].id.clone();
        s.set_system_prompt(SYSTEM_PROMPT);
        assert_eq!(s.messages[0].id, old_id, "the same prompt changes nothing");
        s.set_system_prompt("new rules");
        assert_eq!(s.system_prompt(), Some("new rules"));
        assert_ne!(s.messages[0].id, old_id);
        assert_eq!(s.messages.len(), 2);
        let cleared = s.cleared();
        assert_eq!(cleared.system_prompt(), Some("new rules"));
        assert_eq!(cleared.messages.len(), 1);
        assert_ne!(cleared.id, s.id);

        let mut headless = Session::new();
        headless.messages.clear();
        headless.set_system_prompt("rules");
        assert_eq!(headless.system_prompt(), Some("rules"));
    }

    proptest::proptest! {
        /// The look-over that spares a whole session its rebuild says "whole" exactly when the
        /// rebuild would change nothing.
        #[test]
        fn a_session_is_whole_exactly_when_repair_changes_nothing(
            ops in proptest::collection::vec((0u8..6, 0u8..3, 0u8..3), 0..12),
            prompt_first in proptest::bool::ANY,
        ) {
            let mut s = Session::new();
            if !prompt_first {
                s.messages.clear();
            }
            for (kind, a, b) in ops {
                let id = |n: u8| format!("c{n}");
                s.push(match kind {
                    0 => Message::user("go"),
                    1 => Message::assistant("", None, (0..=a).map(|n| call(&id(n + b))).collect()),
                    2 => Message::assistant("done", None, vec![]),
                    3 => Message::compaction("SUMMARY", CompactionMark { turns: 1, automatic: a == 0, kept_from: None }),
                    4 => Message { compaction: Some(CompactionMark { turns: 1, automatic: false, kept_from: None }), ..Message::user("edited") },
                    _ => Message::tool(id(a), "{}"),
                });
            }
            let mut rebuilt = s.clone();
            rebuilt.rebuild();
            proptest::prop_assert_eq!(s.is_whole(), rebuilt.messages == s.messages);
        }
    }

    #[test]
    fn repair_gives_every_call_a_result_and_drops_orphans() {
        let mut s = Session::new();
        s.push(Message::user("go"));
        s.push(Message::assistant("", None, vec![call("a"), call("b")]));
        s.push(Message::tool("a", "{}"));
        s.push(Message::tool("zzz", "{}"));
        s.repair();
        let ids: Vec<_> = s
            .messages
            .iter()
            .filter_map(|m| m.tool_call_id.clone())
            .collect();
        assert_eq!(ids, vec!["a", "b"]);
        assert!(s.messages.last().unwrap().content.contains("did not run"));
    }

    #[test]
    fn a_saved_outcome_this_version_cannot_read_counts_as_none_and_the_rest_loads() {
        let text = r#"{"id":"m1","role":"tool","content":"{}","tool_call_id":"c1","timestamp":"2026-01-01T00:00:00Z","outcome":{"kind":"teleported","where":"mars"},"approved":true,"duration_ms":18446744073709551615}"#;
        let m: Message = serde_json::from_str(text).unwrap();
        assert_eq!(m.outcome, None);
        assert!(m.approved);
        assert_eq!(m.duration_ms, Some(u64::MAX));
        let kept = Message::tool_result("c2", "{}", (CallOutcome::Interrupted, false));
        let back: Message = serde_json::from_str(&serde_json::to_string(&kept).unwrap()).unwrap();
        assert_eq!(back.outcome, Some(CallOutcome::Interrupted));
    }

    #[test]
    fn a_compaction_sends_its_summary_after_the_system_prompt_and_only_what_it_kept() {
        let mut s = Session::new();
        for n in 0..3 {
            s.push(Message::user(format!("old {n}")));
            s.push(Message::assistant(format!("answer {n}"), None, vec![]));
        }
        s.push(Message::user("running"));
        let kept = s.messages.last().unwrap().id.clone();
        s.push(Message::assistant("", None, vec![call("a")]));
        s.push(Message::tool("a", "{}"));
        let mark = CompactionMark {
            turns: 3,
            automatic: true,
            kept_from: Some(kept),
        };
        s.push(Message::compaction("SUMMARY", mark));
        s.push(Message::assistant("done", None, vec![]));
        let chat = s.to_chat(true);
        assert_eq!(
            chat[0].content.as_deref(),
            Some(format!("{SYSTEM_PROMPT}\n\nSUMMARY").as_str())
        );
        let rest: Vec<_> = chat[1..].iter().map(|m| m.role).collect();
        assert_eq!(
            rest,
            [Role::User, Role::Assistant, Role::Tool, Role::Assistant]
        );
        assert_eq!(chat[1].content.as_deref(), Some("running"));
        // The history keeps every message, and the prompts are the person's only.
        assert_eq!(s.messages.len(), 12);
        assert_eq!(s.prompts().count(), 4);
        // A second compaction between turns replaces everything before it.
        s.push(Message::compaction(
            "SECOND",
            CompactionMark {
                turns: 1,
                automatic: false,
                kept_from: None,
            },
        ));
        s.push(Message::user("next"));
        let chat = s.to_chat(true);
        assert_eq!(chat.len(), 2);
        assert!(chat[0].content.as_deref().unwrap().ends_with("SECOND"));
        assert_eq!(chat[1].content.as_deref(), Some("next"));
    }

    /// A history read back from a file: `Session::messages` round-tripped through JSON and
    /// repaired as loading does.
    fn loaded(messages: Vec<Message>) -> Session {
        let text = serde_json::to_string(&messages).unwrap();
        let mut s = Session::new();
        s.messages = serde_json::from_str(&text).unwrap();
        s.repair();
        s
    }

    fn mark(kept_from: Option<String>) -> CompactionMark {
        CompactionMark {
            turns: 1,
            automatic: false,
            kept_from,
        }
    }

    /// Every tool result sent follows the assistant message that called it, and the system
    /// prompt is sent once, first.
    fn assert_well_formed(chat: &[ChatMessage]) {
        assert_eq!(chat[0].role, Role::System);
        assert!(chat[1..].iter().all(|m| m.role != Role::System), "{chat:?}");
        for (i, m) in chat.iter().enumerate() {
            if m.role == Role::Tool {
                let id = m.tool_call_id.as_deref().unwrap();
                assert!(
                    chat[..i].iter().rev().any(|p| p
                        .tool_calls
                        .iter()
                        .flatten()
                        .any(|c| c.id == id)),
                    "orphan tool result {id}: {chat:?}"
                );
            }
        }
    }

    #[test]
    fn a_planted_compaction_mark_never_sends_an_orphan_result_or_the_system_prompt_twice() {
        let system = Message::system(SYSTEM_PROMPT);
        let prompt = Message::user("go");
        let calling = Message::assistant("", None, vec![call("a")]);
        let result = Message::tool("a", "{}");
        let turn = || vec![prompt.clone(), calling.clone(), result.clone()];
        // A mark that keeps from a tool result, from the system prompt, from an id that is
        // nowhere: each keeps nothing before the summary.
        for kept in [&result.id, &system.id, &"nowhere".to_string()] {
            let mut messages = vec![system.clone()];
            messages.extend(turn());
            messages.push(Message::compaction("SUMMARY", mark(Some(kept.clone()))));
            messages.push(Message::user("next"));
            let s = loaded(messages);
            let chat = s.to_chat(true);
            assert_well_formed(&chat);
            assert_eq!(chat.len(), 2, "{kept}: {chat:?}");
            assert_eq!(chat[1].content.as_deref(), Some("next"));
        }
        // A mark that names the running turn's prompt keeps that turn whole.
        let mut messages = vec![system.clone()];
        messages.extend(turn());
        messages.push(Message::compaction(
            "SUMMARY",
            mark(Some(prompt.id.clone())),
        ));
        let chat = loaded(messages).to_chat(true);
        assert_well_formed(&chat);
        assert_eq!(chat.len(), 4);
    }

    #[test]
    fn a_planted_compaction_first_is_never_the_system_prompt_and_a_mark_elsewhere_counts_for_nothing()
     {
        // A file whose first message is a summary: the system prompt goes before it, and the
        // summary is not what the next session is opened with.
        let s = loaded(vec![
            Message::compaction("PLANTED", mark(None)),
            Message::user("go"),
        ]);
        assert_eq!(s.system_prompt(), Some(SYSTEM_PROMPT));
        assert_eq!(s.cleared().system_prompt(), Some(SYSTEM_PROMPT));
        let chat = s.to_chat(true);
        assert_well_formed(&chat);
        assert_eq!(
            chat[0].content.as_deref(),
            Some(format!("{SYSTEM_PROMPT}\n\nPLANTED").as_str())
        );
        // A mark on a prompt or an answer is not a summary: it is sent as what it is.
        let mut answer = Message::assistant("an answer", None, vec![]);
        answer.compaction = Some(mark(None));
        let mut prompt = Message::user("a prompt");
        prompt.compaction = Some(mark(None));
        let s = loaded(vec![Message::system(SYSTEM_PROMPT), prompt, answer]);
        assert!(s.last_compaction().is_none());
        let chat = s.to_chat(true);
        assert_eq!(chat.len(), 3);
        assert_eq!(chat[0].content.as_deref(), Some(SYSTEM_PROMPT));
    }

    #[test]
    fn a_huge_planted_summary_is_cut_when_loaded() {
        let s = loaded(vec![
            Message::system(SYSTEM_PROMPT),
            Message::compaction("é".repeat(SUMMARY_CHARS), mark(None)),
        ]);
        let (at, _) = s.last_compaction().unwrap();
        let summary = &s.messages[at].content;
        assert!(summary.len() < SUMMARY_CHARS + 100);
        assert!(summary.ends_with("cut when the session was loaded.]"));
    }
}
