//! State changes: actions and agent events in, effects out as data (the event loop performs
//! them). Time is passed in so tests are deterministic.
//!
//! `keys` maps an action to its handler; `input`, `navigate`, `picker`, `popup` (completion, with
//! `choices`), `slash` and `key_dialog` hold them; `events` applies what the agent reports;
//! `effect` is what flows back out.

mod approval;
mod choices;
mod custom;
mod effect;
mod events;
mod find;
mod input;
mod key_dialog;
mod keys;
mod line_edit;
mod navigate;
mod permissions;
mod picker;
mod plan;
mod popup;
mod preset;
mod search;
mod slash;

pub use effect::Effect;
pub use events::{on_event, show_glimpse, show_session};
pub use key_dialog::{KeyReport, on_report as on_key_report, open as open_key_dialog};
pub use keys::{apply, key_context};
pub(crate) use picker::open_sessions;
pub use popup::on_files;
pub(crate) use preset::note_recent;
