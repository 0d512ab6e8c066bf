//! A typed prompt becomes the message the history keeps: the files it mentions (`@path`)
//! attached by `mentions`, and what could not be attached said to the person.

use std::sync::Arc;

use super::mentions;
use super::session::Message;
use super::turn::Agent;
use crate::events::{AgentEvent, EventSink};
use crate::tools::Sandbox;

impl Agent {
    /// The workspace sandbox the tools work in.
    pub fn sandbox(&self) -> &Arc<Sandbox> {
        &self.sandbox
    }

    /// The prompt as the history keeps it: with the files it mentions (`@path`) attached, read
    /// off the runtime; what could not be attached is said in notices. A sub-agent's task is
    /// taken as written.
    pub(super) async fn prompt_message(&self, prompt: &str, events: &EventSink) -> Message {
        if self.request_budget.is_some() || mentions::find(prompt).is_empty() {
            return Message::user(prompt);
        }
        let (sandbox, text) = (self.sandbox.clone(), prompt.to_string());
        let Ok(expanded) =
            tokio::task::spawn_blocking(move || mentions::expand(&sandbox, &text)).await
        else {
            return Message::user(prompt);
        };
        if let Some(attached) = expanded
            .attached
            .as_ref()
            .filter(|a| !a.mentions.is_empty())
        {
            events.send(AgentEvent::FilesAttached(attached.mentions.clone()));
        }
        for note in &expanded.notes {
            events.send(AgentEvent::Notice(note.clone()));
        }
        Message::prompt(expanded)
    }
}
