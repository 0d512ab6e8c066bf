//! Hooks: the person's commands run at fixed points of a session (before and after a tool
//! call, when a prompt is submitted, when a turn stops, when MiniClaw needs the person, when a
//! session starts), each given a JSON object on stdin in Claude Code's hook shape, so existing
//! hook scripts work. They run outside the tool jail with the person's rights, in the
//! workspace, with the environment MiniClaw has (no key is in it: keys are taken out at start).
//!
//! The configuration is `settings::HookEntry` (from `config.toml` and a trusted project's
//! `miniclaw.toml`); `run` starts one command, `reply` reads what it said. A hook that fails,
//! hangs or prints garbage is said once (the first time) and blocks nothing; `/hooks` shows
//! every hook's last result.

mod claude;
mod reply;
mod run;
mod scripts;

use std::path::PathBuf;
use std::sync::Mutex;

use regex::Regex;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use reply::{MAX_TEXT_CHARS, Reply};
pub use run::{MAX_OUTPUT_BYTES, Ran};

use crate::settings::{HookEntry, HookEvent, Origin};

/// The configured hooks of a session, with what each last did.
#[derive(Debug)]
pub struct Hooks {
    hooks: Vec<Hook>,
    workspace: PathBuf,
    state: Mutex<Vec<HookState>>,
    /// The session the hooks run for now (the agent says when it changes).
    session: Mutex<HookSession>,
}

#[derive(Debug)]
struct Hook {
    entry: HookEntry,
    matcher: Option<Regex>,
    /// The workspace files its command names, as they were when the hooks were read.
    scripts: scripts::Scripts,
}

#[derive(Clone, Debug, Default)]
struct HookState {
    last: Option<LastRun>,
    /// Its failure was said already (later ones show in `/hooks` only).
    told: bool,
}

/// How a hook's latest run ended, for `/hooks`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LastRun {
    /// When it ran.
    pub at: chrono::DateTime<chrono::Local>,
    /// What it did: `ok`, `blocked: …`, `added context`, or its problem.
    pub summary: String,
    /// Whether it ran without a problem.
    pub ok: bool,
}

/// One hook as `/hooks` lists it.
#[derive(Clone, Debug, PartialEq)]
pub struct HookStatus {
    /// When it runs.
    pub event: HookEvent,
    /// What it selects (`None`: everything).
    pub matcher: Option<String>,
    /// The command.
    pub command: String,
    /// The file it comes from.
    pub origin: Origin,
    /// Its latest run, if it ran.
    pub last: Option<LastRun>,
}

/// The session a hook runs for: what every hook's input names.
#[derive(Clone, Debug, Default)]
pub struct HookSession {
    /// The session's id.
    pub id: String,
    /// The history file the session is saved in (`transcript_path`; MiniClaw's JSON, not
    /// Claude Code's JSONL).
    pub transcript: Option<PathBuf>,
}

/// What the hooks of one event asked, together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    /// One of them blocked, for this reason (the later ones did not run).
    pub block: Option<String>,
    /// One of them said nothing more is to happen (`"continue": false`), for this reason.
    pub stop: Option<String>,
    /// The text they added for the model, in order.
    pub context: Vec<String>,
    /// Failures to say to the person (each hook's first only).
    pub problems: Vec<String>,
    /// What they told the person (`systemMessage`), each with its hook's event.
    pub messages: Vec<String>,
}

impl Hooks {
    /// The hooks of `entries`, run in `workspace` (made canonical: hooks are told absolute
    /// paths). A matcher that is not a regular expression was left out when the file was read.
    /// Blocking file work: the files each command names are fingerprinted now.
    pub fn new(entries: Vec<HookEntry>, workspace: PathBuf) -> Self {
        let workspace = workspace.canonicalize().unwrap_or(workspace);
        let hooks: Vec<Hook> = entries
            .into_iter()
            .map(|entry| Hook {
                matcher: entry
                    .matcher
                    .as_deref()
                    .and_then(|m| Regex::new(&crate::settings::anchored_matcher(m)).ok()),
                scripts: scripts::Scripts::of(entry.named_paths(&workspace)),
                entry,
            })
            .collect();
        let state = Mutex::new(vec![HookState::default(); hooks.len()]);
        Self {
            hooks,
            workspace,
            state,
            session: Mutex::default(),
        }
    }

    /// Runs for `session` from now on.
    pub fn set_session(&self, session: HookSession) {
        if let Ok(mut s) = self.session.lock() {
            *s = session;
        }
    }

    /// Whether any hook runs for `event`.
    pub fn any(&self, event: HookEvent) -> bool {
        self.hooks.iter().any(|h| h.entry.event == event)
    }

    /// Whether no hook is configured.
    pub fn is_empty(&self) -> bool {
        self.hooks.is_empty()
    }

    /// Runs the hooks of `event` whose matcher selects `subject` (the tool's name, the
    /// session's source, the notification's type), one after another, each with `fields` and
    /// the common fields on stdin; the first that blocks ends the run.
    pub async fn run(
        &self,
        event: HookEvent,
        subject: &str,
        fields: Map<String, Value>,
        cancel: &CancellationToken,
    ) -> Verdict {
        let mut verdict = Verdict::default();
        let selected: Vec<usize> = (0..self.hooks.len())
            .filter(|&i| self.selects(i, event, subject))
            .collect();
        if selected.is_empty() {
            return verdict;
        }
        let session = self.session.lock().map(|s| s.clone()).unwrap_or_default();
        let mut input = json!({
            "session_id": session.id,
            "transcript_path": session.transcript,
            "cwd": self.workspace,
            "hook_event_name": event.name(),
        });
        if let Value::Object(o) = &mut input {
            o.extend(fields);
            if let Some(tool_input) = o.get_mut("tool_input") {
                claude::add_fields(tool_input, &self.workspace);
            }
        }
        // A hook selected by Claude Code's name for the tool is told that name.
        let alias = claude::name(subject).filter(|_| is_tool_event(event));
        let as_claude = alias.map(|name| {
            let mut input = input.clone();
            input["tool_name"] = Value::String(name.into());
            input.to_string().into_bytes()
        });
        let input = input.to_string().into_bytes();
        let dir = self.workspace.to_string_lossy().into_owned();
        let env = [
            ("MINICLAW_PROJECT_DIR", dir.as_str()),
            // What Claude Code's scripts read their project folder from.
            ("CLAUDE_PROJECT_DIR", dir.as_str()),
        ];
        for i in selected {
            let hook = &self.hooks[i].entry;
            let reply = match self.changed_script(i).await {
                Some(changed) => self.not_run(event, hook, &changed),
                None => {
                    let by_alias = self.hooks[i]
                        .matcher
                        .as_ref()
                        .is_some_and(|m| !m.is_match(subject));
                    let input = match (&as_claude, by_alias) {
                        (Some(claude), true) => claude,
                        _ => &input,
                    };
                    let ran = run::run(
                        &hook.command,
                        input,
                        &self.workspace,
                        &env,
                        hook.timeout,
                        cancel,
                    )
                    .await;
                    if ran == Ran::Interrupted {
                        break;
                    }
                    reply::read(event, &ran)
                }
            };
            tracing::info!(
                event = event.name(),
                command = %hook.command,
                blocked = reply.block.is_some(),
                problem = reply.problem.as_deref().unwrap_or(""),
                "hook ran"
            );
            if let Some(problem) = &reply.problem
                && self.first_failure(i)
            {
                let after = match reply.block {
                    Some(_) => ".",
                    None => "; it blocks nothing, and /hooks shows its later results.",
                };
                verdict.problems.push(clean(&format!(
                    "The {} hook `{}` (from {}) {problem}{after}",
                    event.name(),
                    hook.command,
                    hook.origin.file.display()
                )));
            }
            self.record(i, &reply);
            verdict.context.extend(reply.context.as_deref().map(clean));
            verdict.messages.extend(
                reply
                    .message
                    .as_deref()
                    .map(|m| clean(&format!("{} hook: {m}", event.name()))),
            );
            if let Some(reason) = &reply.stop {
                verdict.stop = Some(clean(reason));
            }
            if let Some(reason) = reply.block {
                verdict.block = Some(clean(&reason));
                break;
            }
            if verdict.stop.is_some() {
                break;
            }
        }
        verdict
    }

    /// Every hook, in the order of [`HookEvent::ALL`] and then of the files.
    pub fn statuses(&self) -> Vec<HookStatus> {
        let state = self.state.lock().map(|s| s.clone()).unwrap_or_default();
        let mut out: Vec<HookStatus> = self
            .hooks
            .iter()
            .zip(
                state
                    .into_iter()
                    .chain(std::iter::repeat(HookState::default())),
            )
            .map(|(h, s)| HookStatus {
                event: h.entry.event,
                matcher: h.entry.matcher.clone(),
                command: h.entry.command.clone(),
                origin: h.entry.origin.clone(),
                last: s.last,
            })
            .collect();
        out.sort_by_key(|s| HookEvent::ALL.iter().position(|e| *e == s.event));
        out
    }

    fn selects(&self, i: usize, event: HookEvent, subject: &str) -> bool {
        let hook = &self.hooks[i];
        if hook.entry.event != event {
            return false;
        }
        match (&hook.matcher, event.matches_on()) {
            (Some(matcher), Some(_)) => {
                matcher.is_match(subject)
                    || (is_tool_event(event)
                        && claude::name(subject).is_some_and(|n| matcher.is_match(n)))
            }
            // No matcher, or an event that has nothing to match: every run.
            _ => true,
        }
    }

    /// What a hook whose file `changed` says instead of running: a problem, and for a guard
    /// (`PreToolUse`, `UserPromptSubmit`) a block, so what it guards does not happen unguarded.
    fn not_run(&self, event: HookEvent, hook: &HookEntry, changed: &std::path::Path) -> Reply {
        let why = format!(
            "was not run: {} changed since MiniClaw read its hooks (a tool or a command may have written it); check it and start MiniClaw again",
            changed
                .strip_prefix(&self.workspace)
                .unwrap_or(changed)
                .display()
        );
        Reply {
            block: matches!(event, HookEvent::PreToolUse | HookEvent::UserPromptSubmit)
                .then(|| format!("the {} hook `{}` {why}", event.name(), hook.command)),
            problem: Some(why),
            ..Reply::default()
        }
    }

    /// The first file hook `i` names that changed since the hooks were read (file work off the
    /// runtime).
    async fn changed_script(&self, i: usize) -> Option<PathBuf> {
        let scripts = self.hooks[i].scripts.clone();
        if scripts.is_empty() {
            return None;
        }
        tokio::task::spawn_blocking(move || scripts.changed().map(std::path::Path::to_path_buf))
            .await
            .unwrap_or(None)
    }

    fn first_failure(&self, i: usize) -> bool {
        let Ok(mut state) = self.state.lock() else {
            return false;
        };
        state
            .get_mut(i)
            .is_some_and(|s| !std::mem::replace(&mut s.told, true))
    }

    fn record(&self, i: usize, reply: &Reply) {
        let summary = match (&reply.problem, &reply.block, &reply.context) {
            (Some(problem), _, _) => problem.clone(),
            (None, Some(reason), _) => format!("blocked: {reason}"),
            (None, None, Some(_)) => "ok, added context".to_string(),
            (None, None, None) => "ok".to_string(),
        };
        if let Ok(mut state) = self.state.lock()
            && let Some(s) = state.get_mut(i)
        {
            s.last = Some(LastRun {
                at: chrono::Local::now(),
                summary: clean(&summary),
                ok: reply.problem.is_none(),
            });
        }
    }
}

/// A hook's words as MiniClaw passes them on: no terminal escapes (they reach the screen, a
/// log, the model).
fn clean(text: &str) -> String {
    crate::terminal_text::clean(text)
}

fn is_tool_event(event: HookEvent) -> bool {
    matches!(event, HookEvent::PreToolUse | HookEvent::PostToolUse)
}
