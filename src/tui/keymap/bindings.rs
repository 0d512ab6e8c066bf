//! The key bindings: the one table that `map_key` reads and the help (F1) and the README list.
//!
//! A row ([`Binding`]) is a line of the help: its keys, where they work ([`Layer`]) and what
//! they do. Its [`Rule`]s say what each key asks for there, under which condition ([`When`]).
//! `map_key` goes through the layers that are active, in order, and takes the first rule that
//! matches; the help's key names are the rules' keys, so the two cannot tell different stories.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use super::{Action, KeyContext, LineEdit};
use crate::tui::state::Focus;

use Action as A;
use KeyCode as K;
use Layer as L;
use LineEdit as E;

/// A key as a rule names it: a code, and the modifiers it needs and those it refuses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key {
    /// The key.
    pub code: KeyCode,
    /// Whether a letter answers in either case (`y` and `Y` in a dialog).
    pub either_case: bool,
    /// Modifiers that must be held (named in the label: `Ctrl+L`).
    pub held: KeyModifiers,
    /// Modifiers that must not be held.
    pub refused: KeyModifiers,
}

impl Key {
    /// `code`, whatever modifiers are held.
    pub const fn any(code: KeyCode) -> Self {
        Self {
            code,
            either_case: false,
            held: KeyModifiers::NONE,
            refused: KeyModifiers::NONE,
        }
    }

    /// `code` with no modifier at all.
    pub const fn plain(code: KeyCode) -> Self {
        Self::any(code).without(KeyModifiers::all())
    }

    /// `code` with `held` held (others may be too).
    pub const fn with(held: KeyModifiers, code: KeyCode) -> Self {
        Self {
            held,
            ..Self::any(code)
        }
    }

    /// Ctrl and the letter `c`.
    pub const fn ctrl(c: char) -> Self {
        Self::with(KeyModifiers::CONTROL, KeyCode::Char(c))
    }

    /// Alt and the letter `c`.
    pub const fn alt(c: char) -> Self {
        Self::with(KeyModifiers::ALT, KeyCode::Char(c))
    }

    /// The letter `c` in either case, whatever modifiers are held.
    pub const fn letter(c: char) -> Self {
        Self {
            either_case: true,
            ..Self::any(KeyCode::Char(c))
        }
    }

    /// The same key, refusing `refused`.
    pub const fn without(self, refused: KeyModifiers) -> Self {
        Self { refused, ..self }
    }

    /// Whether `key` is this key.
    pub fn matches(&self, key: &KeyEvent) -> bool {
        let code = match (self.code, key.code) {
            (KeyCode::Char(want), KeyCode::Char(got)) if self.either_case => {
                want.eq_ignore_ascii_case(&got)
            }
            (want, got) => want == got,
        };
        code && key.modifiers.contains(self.held) && !key.modifiers.intersects(self.refused)
    }

    /// Whether only a terminal with the kitty keyboard protocol can send this key: without
    /// it, Shift+Enter and Ctrl+Enter arrive as a plain Enter.
    pub fn needs_enhancement(&self) -> bool {
        self.code == KeyCode::Enter
            && self
                .held
                .intersects(KeyModifiers::SHIFT | KeyModifiers::CONTROL)
    }

    /// The key as the help names it: `Ctrl+L`, `Shift+Up`, `PageDown`, `y`.
    pub fn label(&self) -> String {
        let mut out = String::new();
        for (bit, name) in [
            (KeyModifiers::CONTROL, "Ctrl+"),
            (KeyModifiers::ALT, "Alt+"),
            (KeyModifiers::SHIFT, "Shift+"),
        ] {
            if self.held.contains(bit) {
                out.push_str(name);
            }
        }
        match self.code {
            KeyCode::Char(' ') => out.push_str("Space"),
            // Ctrl+L, as keyboards print it; a dialog's letter as typed.
            KeyCode::Char(c) if !self.held.is_empty() => out.push(c.to_ascii_uppercase()),
            KeyCode::Char(c) => out.push(c),
            KeyCode::F(n) => out.push_str(&format!("F{n}")),
            KeyCode::BackTab => out.push_str("Shift+Tab"),
            KeyCode::PageUp => out.push_str("PageUp"),
            KeyCode::PageDown => out.push_str("PageDown"),
            other => out.push_str(&format!("{other:?}")),
        }
        out
    }
}

/// A condition on the state for a rule to apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// Always.
    Always,
    /// A turn runs.
    Busy,
    /// A turn runs and messages wait to be sent when it ends.
    Queued,
    /// No turn runs, and a Ctrl+C less than two seconds ago armed quitting.
    Armed,
    /// A pane other than the input has the focus.
    AwayFromInput,
    /// A proposed plan waits in the input.
    PlanWaiting,
    /// The input is empty.
    EmptyInput,
    /// The input is empty and messages wait to be sent.
    EmptyAndQueued,
    /// The input's cursor is on its first line.
    FirstLine,
    /// The input's cursor is on its last line.
    LastLine,
}

impl When {
    /// Whether the condition holds in `ctx`.
    pub fn holds(self, ctx: &KeyContext) -> bool {
        match self {
            Self::Always => true,
            Self::Busy => ctx.busy,
            Self::Queued => ctx.busy && ctx.queued,
            Self::Armed => !ctx.busy && ctx.quit_armed,
            Self::AwayFromInput => ctx.focus != Focus::Input,
            Self::PlanWaiting => ctx.plan_draft,
            Self::EmptyInput => ctx.input_empty,
            Self::EmptyAndQueued => ctx.input_empty && ctx.queued,
            Self::FirstLine => ctx.on_first_line,
            Self::LastLine => ctx.on_last_line,
        }
    }
}

/// Where keys are looked up. An open overlay takes every key (after Ctrl+C); otherwise the
/// completion popup, the keys of every pane, then the focused pane's, in that order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layer {
    /// Before anything else, whatever is open.
    First,
    /// The clear question (Ctrl+L).
    ClearQuestion,
    /// The undo question ("undo anyway?").
    UndoQuestion,
    /// The picker (sessions, models).
    Picker,
    /// The picker asking whether to delete a session.
    DeleteQuestion,
    /// The approval dialog.
    Approval,
    /// The approval dialog just after it appeared, when keys are ignored.
    ApprovalFresh,
    /// The approval dialog while a reason for a no is typed.
    Reason,
    /// The approval dialog while the prefixes of "don't ask again" are edited.
    Prefix,
    /// The help overlay.
    Help,
    /// The API key dialog.
    KeyDialog,
    /// The completion popup over the input.
    Popup,
    /// Ctrl+R's reverse search, standing in the input.
    Search,
    /// The find in the conversation, standing in the input.
    Find,
    /// No overlay open, whichever pane has the focus.
    Panes,
    /// The input focused.
    Input,
    /// The timeline focused.
    Timeline,
    /// The conversation focused (before [`Layer::Reading`]).
    Conversation,
    /// The conversation, reasoning or tool output pane focused.
    Reading,
}

impl Layer {
    /// Where the help says the layer's keys work; `None`: the usual place, said by no label.
    pub fn label(self) -> Option<&'static str> {
        Some(match self {
            Self::First | Self::Panes | Self::Input => return None,
            Self::ClearQuestion => "clear question",
            Self::UndoQuestion => "undo question",
            Self::Picker => "picker",
            Self::DeleteQuestion => "delete question",
            Self::Approval | Self::ApprovalFresh => "approval dialog",
            Self::Reason => "reason for a no",
            Self::Prefix => "prefix editor",
            Self::Help => "help",
            Self::KeyDialog => "key dialog",
            Self::Popup => "popup",
            Self::Search => "reverse search",
            Self::Find => "find",
            Self::Timeline => "timeline",
            Self::Conversation => "conversation",
            Self::Reading => "conversation, reasoning, tool output",
        })
    }
}

/// What a key asks for, under a condition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The key.
    pub key: Key,
    /// When it applies.
    pub when: When,
    /// What it asks for.
    pub action: Action,
}

/// What a row's keys are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Keys {
    /// Keys the keymap maps, by their rules (within a row, the first that matches wins).
    Mapped(&'static [Rule]),
    /// Input the keymap does not map, by name: a character typed, the mouse.
    Other(&'static str),
}

/// One row of the help: keys, where they work and what they do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// Where the keys work.
    pub layer: Layer,
    /// The keys.
    pub keys: Keys,
    /// What they do, in a few words.
    pub about: &'static str,
}

impl Binding {
    /// The keys' names, each once, in the order of the rules (`Alt+Enter / Ctrl+J`), those a
    /// terminal can send: `enhanced` false leaves out those only the kitty
    /// keyboard protocol tells apart (the help says `Alt+Enter / Ctrl+J` there).
    pub fn key_names_for(&self, enhanced: bool) -> String {
        match &self.keys {
            Keys::Mapped(rules) => {
                let mut names: Vec<String> = Vec::new();
                for rule in rules
                    .iter()
                    .filter(|r| enhanced || !r.key.needs_enhancement())
                {
                    let name = rule.key.label();
                    if !names.contains(&name) {
                        names.push(name);
                    }
                }
                names.join(" / ")
            }
            Keys::Other(name) => name.to_string(),
        }
    }

    /// The keys with where they work, as the help and the README list them:
    /// `Up / Down (timeline)`.
    #[cfg(test)]
    pub fn label(&self) -> String {
        self.label_for(true)
    }

    /// The label as the help shows it in a terminal that does (`enhanced`) or does not tell
    /// Shift+Enter apart.
    pub fn label_for(&self, enhanced: bool) -> String {
        match self.layer.label() {
            Some(place) => format!("{} ({place})", self.key_names_for(enhanced)),
            None => self.key_names_for(enhanced),
        }
    }

    /// The rules, none for input the keymap does not map.
    pub fn rules(&self) -> &'static [Rule] {
        match self.keys {
            Keys::Mapped(rules) => rules,
            Keys::Other(_) => &[],
        }
    }
}

const fn rule(key: Key, action: Action) -> Rule {
    Rule {
        key,
        when: When::Always,
        action,
    }
}

const fn rule_if(key: Key, when: When, action: Action) -> Rule {
    Rule { key, when, action }
}

const fn other(layer: Layer, keys: &'static str, about: &'static str) -> Binding {
    Binding {
        layer,
        keys: Keys::Other(keys),
        about,
    }
}

const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

/// Every key, in the order the help and the README list them.
pub const KEYS: &[Binding] = &[
    // The input.
    Binding {
        layer: L::Input,
        about: "send the message (during a turn it waits, sent when the turn ends)",
        keys: Keys::Mapped(&[rule(
            Key::any(K::Enter).without(CTRL.union(ALT).union(SHIFT)),
            A::Send,
        )]),
    },
    Binding {
        layer: L::Input,
        about: "new line in the message",
        keys: Keys::Mapped(&[
            rule(Key::with(ALT, K::Enter), A::Newline),
            rule(Key::with(SHIFT, K::Enter), A::Newline),
            rule(Key::with(CTRL, K::Enter), A::Newline),
            rule(Key::ctrl('j'), A::Newline),
        ]),
    },
    Binding {
        layer: L::Input,
        about: "earlier prompts (on the first / last line); Up on an empty input takes back a queued message",
        keys: Keys::Mapped(&[
            rule_if(Key::any(K::Up), When::EmptyAndQueued, A::EditQueued),
            rule_if(Key::any(K::Up), When::FirstLine, A::HistoryPrev),
            rule_if(Key::any(K::Down), When::LastLine, A::HistoryNext),
        ]),
    },
    Binding {
        layer: L::Input,
        about: "search the earlier prompts of this folder's sessions, newest first, as a shell's Ctrl+R",
        keys: Keys::Mapped(&[rule(Key::ctrl('r'), A::SearchPrompts)]),
    },
    Binding {
        layer: L::Input,
        about: "delete to the line's start / end · the word before the cursor (as readline does)",
        keys: Keys::Mapped(&[
            rule(Key::ctrl('u'), A::LineEdit(E::DeleteToStart)),
            rule(Key::ctrl('k'), A::LineEdit(E::DeleteToEnd)),
            rule(Key::ctrl('w'), A::LineEdit(E::DeleteWordBack)),
        ]),
    },
    // Ctrl+Z: raw mode turns off the terminal's suspend, so every terminal delivers it;
    // Ctrl+Shift+Z arrives as Ctrl+Z without the kitty protocol, so redo is Alt+Z (Esc z).
    Binding {
        layer: L::Input,
        about: "undo / redo in the input",
        keys: Keys::Mapped(&[
            rule(Key::ctrl('z'), A::LineEdit(E::Undo)),
            rule(Key::with(ALT, K::Char('z')), A::LineEdit(E::Redo)),
        ]),
    },
    Binding {
        layer: L::Input,
        about: "top / bottom of the conversation, when the input is empty (End follows again)",
        keys: Keys::Mapped(&[
            rule_if(Key::any(K::Home), When::EmptyInput, A::ScrollTop),
            rule_if(Key::any(K::End), When::EmptyInput, A::ScrollBottom),
        ]),
    },
    other(
        L::Input,
        "@",
        "mention a file: a popup of workspace files, filtered as you type",
    ),
    other(
        L::Input,
        "/",
        "at the start of the input: the commands, filtered as you type",
    ),
    Binding {
        layer: L::Popup,
        about: "insert the file · complete / run the command",
        keys: Keys::Mapped(&[
            rule(Key::plain(K::Tab), A::PopupComplete),
            rule(Key::plain(K::Enter), A::PopupChoose),
        ]),
    },
    Binding {
        layer: L::Popup,
        about: "choose in the popup · close it (Esc then does not interrupt)",
        keys: Keys::Mapped(&[
            rule(Key::plain(K::Up), A::PopupMove(-1)),
            rule(Key::plain(K::Down), A::PopupMove(1)),
            rule(Key::plain(K::Esc), A::PopupClose),
        ]),
    },
    Binding {
        layer: L::Search,
        about: "the next older match (typing narrows the search)",
        keys: Keys::Mapped(&[rule(Key::ctrl('r'), A::SearchPrompts)]),
    },
    Binding {
        layer: L::Search,
        about: "put the match in the input to edit it",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Enter), A::SearchAccept),
            rule(Key::any(K::Right), A::SearchAccept),
        ]),
    },
    Binding {
        layer: L::Search,
        about: "cancel: the input as it was · delete a letter of the search",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Esc), A::SearchCancel),
            rule(Key::ctrl('g'), A::SearchCancel),
            rule(Key::any(K::Backspace), A::SearchBackspace),
        ]),
    },
    Binding {
        layer: L::Find,
        about: "the match above (older); it starts at the newest",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Enter).without(SHIFT), A::FindStep(-1)),
            rule(Key::ctrl('p'), A::FindStep(-1)),
            rule(Key::any(K::Up), A::FindStep(-1)),
            rule(Key::ctrl('f'), A::FindStep(-1)),
        ]),
    },
    Binding {
        layer: L::Find,
        about: "the match below (newer)",
        keys: Keys::Mapped(&[
            rule(Key::with(SHIFT, K::Enter), A::FindStep(1)),
            rule(Key::ctrl('n'), A::FindStep(1)),
            rule(Key::any(K::Down), A::FindStep(1)),
        ]),
    },
    Binding {
        layer: L::Find,
        about: "close the find · delete a letter of it",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Esc), A::FindClose),
            rule(Key::ctrl('g'), A::FindClose),
            rule(Key::any(K::Backspace), A::FindBackspace),
        ]),
    },
    // Every pane.
    Binding {
        layer: L::Panes,
        about: "this help",
        keys: Keys::Mapped(&[rule(Key::any(K::F(1)), A::ShowHelp)]),
    },
    Binding {
        layer: L::Panes,
        about: "the next model of this provider: DeepSeek's flash ↔ pro, another provider's next listed model",
        keys: Keys::Mapped(&[rule(Key::any(K::F(2)), A::TogglePreset)]),
    },
    Binding {
        layer: L::Panes,
        about: "show / hide the side panes",
        keys: Keys::Mapped(&[rule(Key::any(K::F(3)), A::ToggleSidePanes)]),
    },
    Binding {
        layer: L::Panes,
        about: "clear the conversation: asks first (a archives it, y deletes it)",
        keys: Keys::Mapped(&[rule(Key::ctrl('l'), A::AskClear)]),
    },
    Binding {
        layer: L::Panes,
        about: "find in the conversation (as drawn, expanded previews too; smartcase)",
        keys: Keys::Mapped(&[rule(Key::ctrl('f'), A::FindOpen)]),
    },
    Binding {
        layer: L::Panes,
        about: "scroll the focused pane a page (the conversation while typing)",
        keys: Keys::Mapped(&[
            rule(Key::any(K::PageUp), A::ScrollPage(-1)),
            rule(Key::any(K::PageDown), A::ScrollPage(1)),
        ]),
    },
    Binding {
        layer: L::Panes,
        about: "scroll the focused pane a line",
        keys: Keys::Mapped(&[
            rule(Key::with(SHIFT, K::Up), A::ScrollLine(-1)),
            rule(Key::with(SHIFT, K::Down), A::ScrollLine(1)),
        ]),
    },
    Binding {
        layer: L::Panes,
        about: "top / bottom of the focused pane, from anywhere",
        keys: Keys::Mapped(&[
            rule(Key::with(CTRL, K::Home), A::ScrollTop),
            rule(Key::with(CTRL, K::End), A::ScrollBottom),
        ]),
    },
    other(L::Panes, "Mouse wheel", "scroll the pane under the pointer"),
    Binding {
        layer: L::Panes,
        about: "move the focus: input, conversation, timeline, reasoning, tool output",
        keys: Keys::Mapped(&[rule(Key::any(K::Tab), A::FocusNext)]),
    },
    Binding {
        layer: L::Panes,
        about: "approval mode: auto → ask → read-only",
        keys: Keys::Mapped(&[rule(Key::any(K::BackTab), A::CycleApproval)]),
    },
    Binding {
        layer: L::Panes,
        about: "expand / collapse every step",
        keys: Keys::Mapped(&[rule(Key::ctrl('o'), A::ToggleAllSteps)]),
    },
    Binding {
        layer: L::Panes,
        about: "show / hide the reasoning pane",
        keys: Keys::Mapped(&[rule(Key::ctrl('t'), A::ToggleReasoning)]),
    },
    Binding {
        layer: L::Panes,
        about: "copy the last answer (OSC 52)",
        keys: Keys::Mapped(&[rule(Key::ctrl('y'), A::Copy)]),
    },
    Binding {
        layer: L::Panes,
        about: "interrupt a running turn (with messages queued, first remove the last one) · back to \
         the input · set a waiting plan aside",
        keys: Keys::Mapped(&[
            rule_if(Key::any(K::Esc), When::Queued, A::DropQueued),
            rule_if(Key::any(K::Esc), When::Busy, A::Interrupt),
            rule_if(Key::any(K::Esc), When::AwayFromInput, A::FocusInput),
            rule_if(Key::any(K::Esc), When::PlanWaiting, A::DiscardPlan),
            // Never typed into the input.
            rule(Key::any(K::Esc), A::None),
        ]),
    },
    Binding {
        layer: L::First,
        about: "interrupt a running turn (denying the calls waiting) · clear the input · twice within \
         2 s quits",
        keys: Keys::Mapped(&[
            rule_if(Key::ctrl('c'), When::Busy, A::Interrupt),
            rule_if(Key::ctrl('c'), When::Armed, A::Quit),
            rule(Key::ctrl('c'), A::ClearInput),
        ]),
    },
    Binding {
        layer: L::Panes,
        about: "quit (on an empty input)",
        keys: Keys::Mapped(&[rule_if(Key::ctrl('d'), When::EmptyInput, A::Quit)]),
    },
    other(L::Panes, "Shift+drag", "select text (most terminals)"),
    // The focused pane.
    Binding {
        layer: L::Timeline,
        about: "select a step · expand / collapse it · the first / last step",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Up), A::SelectPrev),
            rule(Key::any(K::Down), A::SelectNext),
            rule(Key::any(K::Enter), A::ToggleStep),
            rule(Key::any(K::Char(' ')), A::ToggleStep),
            rule(Key::any(K::Home), A::ScrollTop),
            rule(Key::any(K::End), A::ScrollBottom),
        ]),
    },
    Binding {
        layer: L::Conversation,
        about: "show whole / fold again the long prompts, call results, diffs and reasoning in view",
        keys: Keys::Mapped(&[rule(Key::any(K::Enter), A::ToggleFold)]),
    },
    Binding {
        layer: L::Reading,
        about: "scroll a line · top / bottom (End follows again)",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Up), A::ScrollLine(-1)),
            rule(Key::any(K::Down), A::ScrollLine(1)),
            rule(Key::any(K::Home), A::ScrollTop),
            rule(Key::any(K::End), A::ScrollBottom),
        ]),
    },
    // The overlays.
    Binding {
        layer: L::Approval,
        about: "yes · yes to this tool for the session · no, then a reason",
        keys: Keys::Mapped(&[
            rule(Key::letter('y'), A::ApproveOnce),
            rule(Key::letter('a'), A::ApproveTool),
            rule(Key::letter('n'), A::Deny),
            rule(Key::any(K::Esc), A::Deny),
        ]),
    },
    Binding {
        layer: L::Approval,
        about: "yes, and don't ask again in this project for commands starting with the prefix shown (run_command; edit it, then Enter)",
        keys: Keys::Mapped(&[rule(Key::letter('p'), A::EditPrefixes)]),
    },
    Binding {
        layer: L::Approval,
        about: "show or hide a file tool's or a command's raw arguments (its diff or command line comes first)",
        keys: Keys::Mapped(&[rule(Key::letter('v'), A::ToggleApprovalArguments)]),
    },
    Binding {
        layer: L::Approval,
        about: "scroll the call's arguments and diff",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Up), A::ScrollApproval(-1)),
            rule(Key::any(K::Down), A::ScrollApproval(1)),
            rule(Key::any(K::PageUp), A::ScrollApproval(-10)),
            rule(Key::any(K::PageDown), A::ScrollApproval(10)),
        ]),
    },
    Binding {
        layer: L::Reason,
        about: "send the no with the reason typed · delete a letter",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Enter), A::SendDenial),
            rule(Key::any(K::Esc), A::SendDenial),
            rule(Key::any(K::Backspace), A::ReasonBackspace),
        ]),
    },
    Binding {
        layer: L::Prefix,
        about: "add the prefixes typed (`;` between two) and say yes · back to the dialog; the other keys edit as in the input (Ctrl+A / Ctrl+E, Ctrl+B / Ctrl+F, Left / Right, Home / End, Backspace / Delete)",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Enter), A::ConfirmPrefixes),
            rule(Key::any(K::Esc), A::CancelPrefixes),
        ]),
    },
    Binding {
        layer: L::Prefix,
        about: "delete to the line's start / end · the word before the cursor (as in the input)",
        keys: Keys::Mapped(&[
            rule(Key::ctrl('u'), A::PrefixLineEdit(E::DeleteToStart)),
            rule(Key::ctrl('k'), A::PrefixLineEdit(E::DeleteToEnd)),
            rule(Key::ctrl('w'), A::PrefixLineEdit(E::DeleteWordBack)),
        ]),
    },
    Binding {
        layer: L::ClearQuestion,
        about: "delete the conversation · archive it (any other key keeps it)",
        keys: Keys::Mapped(&[
            rule(Key::letter('y'), A::ConfirmYes),
            rule(Key::letter('a'), A::ArchiveSession),
        ]),
    },
    Binding {
        layer: L::UndoQuestion,
        about: "undo although files changed since (any other key keeps them)",
        keys: Keys::Mapped(&[rule(Key::letter('y'), A::UndoAnyway)]),
    },
    Binding {
        layer: L::Picker,
        about: "choose a row (typing filters the rows)",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Up), A::PickerMove(-1)),
            rule(Key::any(K::Down), A::PickerMove(1)),
            rule(Key::any(K::PageUp), A::PickerMove(-10)),
            rule(Key::any(K::PageDown), A::PickerMove(10)),
            rule(Key::ctrl('p'), A::PickerMove(-1)),
            rule(Key::alt('p'), A::PickerMove(-1)),
            rule(Key::ctrl('n'), A::PickerMove(1)),
            rule(Key::alt('n'), A::PickerMove(1)),
        ]),
    },
    Binding {
        layer: L::Picker,
        about: "take the row · close the picker · delete the filter's last letter",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Enter), A::PickerChoose),
            rule(Key::any(K::Esc), A::CloseOverlay),
            rule(Key::any(K::Backspace), A::PickerBackspace),
        ]),
    },
    Binding {
        layer: L::Picker,
        about: "delete the session (asks first)",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Delete), A::PickerDelete),
            rule(Key::ctrl('d'), A::PickerDelete),
            rule(Key::alt('d'), A::PickerDelete),
        ]),
    },
    Binding {
        layer: L::DeleteQuestion,
        about: "delete it (any other key keeps it)",
        keys: Keys::Mapped(&[rule(Key::letter('y'), A::PickerConfirmDelete(true))]),
    },
    Binding {
        layer: L::Help,
        about: "close the help (Esc during a turn interrupts it)",
        keys: Keys::Mapped(&[
            rule_if(Key::any(K::Esc), When::Busy, A::Interrupt),
            rule(Key::any(K::Esc), A::CloseOverlay),
            rule(Key::any(K::F(1)), A::CloseOverlay),
            rule(Key::any(K::Enter), A::CloseOverlay),
            rule(Key::any(K::Char('q')), A::CloseOverlay),
        ]),
    },
    Binding {
        layer: L::Help,
        about: "scroll the help",
        keys: Keys::Mapped(&[
            rule(Key::any(K::Up), A::ScrollHelp(-1)),
            rule(Key::any(K::Down), A::ScrollHelp(1)),
            rule(Key::any(K::PageUp), A::ScrollHelp(-10)),
            rule(Key::any(K::PageDown), A::ScrollHelp(10)),
        ]),
    },
    Binding {
        layer: L::KeyDialog,
        about: "close the dialog (its other keys are written in it)",
        keys: Keys::Mapped(&[rule(Key::any(K::Esc), A::CloseOverlay)]),
    },
];
