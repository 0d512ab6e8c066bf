//! `Notification` hooks: run in the background whenever MiniClaw needs the person (an approval,
//! a turn that ended), so nothing waits for them.

use std::sync::Arc;

use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use crate::events::{AgentEvent, EventSink};
use crate::hooks::Hooks;
use crate::settings::HookEvent;

/// Runs the `Notification` hooks of `hooks` for a notification of `kind` (`permission_prompt`,
/// `idle_prompt`) saying `message`, on a task of their own; a failure is said on `events`.
pub fn notify(hooks: &Arc<Hooks>, kind: &'static str, message: String, events: &EventSink) {
    if !hooks.any(HookEvent::Notification) {
        return;
    }
    let (hooks, events) = (hooks.clone(), events.clone());
    tokio::spawn(async move {
        let mut fields = Map::new();
        fields.insert("message".into(), Value::String(message));
        fields.insert("notification_type".into(), Value::String(kind.into()));
        let verdict = hooks
            .run(
                HookEvent::Notification,
                kind,
                fields,
                &CancellationToken::new(),
            )
            .await;
        for said in verdict.problems.into_iter().chain(verdict.messages) {
            events.send(AgentEvent::Notice(said));
        }
    });
}
