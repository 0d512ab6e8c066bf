//! Telling the person when to look: the terminal's title follows what MiniClaw is doing
//! (`MiniClaw · working`, `MiniClaw · waiting for you`, `MiniClaw`), and when a turn ends or
//! a call waits for a yes or no while the terminal says it lost the focus (or always, if
//! `MINICLAW_NOTIFY=always`), a desktop notification (OSC 9) and a bell. Pure: it says what
//! to write; the event loop writes it.

/// The environment variable that says when to notify.
pub const NOTIFY_VAR: &str = "MINICLAW_NOTIFY";

/// When to send a notification and a bell.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NotifyWhen {
    /// At every turn's end and every approval, even while the person looks.
    Always,
    /// Only while the terminal reports it lost the focus (the default; a terminal that never
    /// reports focus never notifies).
    #[default]
    Unfocused,
    /// Never (the title still follows).
    Off,
}

impl NotifyWhen {
    /// The setting `value` names (any case); an unknown one is an error naming the choices.
    pub fn parse(value: &str) -> Result<Self, String> {
        match value.trim().to_ascii_lowercase().as_str() {
            "always" => Ok(Self::Always),
            "unfocused" | "" => Ok(Self::Unfocused),
            "off" | "never" => Ok(Self::Off),
            _ => Err(format!(
                "{NOTIFY_VAR}={} is not always, unfocused or off; unfocused is used.",
                crate::terminal_text::clean(value)
            )),
        }
    }
}

/// What MiniClaw needs from the person.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Attention {
    /// Nothing runs: the next prompt is theirs.
    Idle,
    /// A turn runs.
    Working,
    /// A call waits for their yes or no.
    Waiting,
}

impl Attention {
    /// What is asked of the person: a call `waiting` for them, or a turn that is `busy`.
    pub fn of(waiting: bool, busy: bool) -> Self {
        if waiting {
            Self::Waiting
        } else if busy {
            Self::Working
        } else {
            Self::Idle
        }
    }

    /// The terminal's title for it.
    pub fn title(self) -> &'static str {
        match self {
            Self::Idle => "MiniClaw",
            Self::Working => "MiniClaw · working",
            Self::Waiting => "MiniClaw · waiting for you",
        }
    }
}

/// Follows the attention from frame to frame and says what to write when it changes.
#[derive(Clone, Debug)]
pub struct Notifier {
    when: NotifyWhen,
    focused: bool,
    last: Option<Attention>,
}

/// The longest notification text, in characters (a session title can be long).
const MAX_MESSAGE: usize = 160;

impl Notifier {
    /// A notifier by `when`; the person counts as looking until the terminal says otherwise.
    pub fn new(when: NotifyWhen) -> Self {
        Self {
            when,
            focused: true,
            last: None,
        }
    }

    /// The terminal reported that it gained (`true`) or lost the focus.
    pub fn focus(&mut self, focused: bool) {
        self.focused = focused;
    }

    /// What to write for `now`: the title when the attention changed (the first call sets
    /// it), and OSC 9 with a bell when a turn ended or a call began to wait and the person is
    /// away (or `always`). `session` is the session's title, untrusted text: cleaned here.
    pub fn update(&mut self, now: Attention, session: Option<&str>) -> Option<String> {
        let before = self.last.replace(now);
        if before == Some(now) {
            return None;
        }
        let mut out = format!("\x1b]2;{}\x07", now.title());
        let moment = match (before, now) {
            (Some(Attention::Working | Attention::Waiting), Attention::Idle) => {
                Some("the turn ended")
            }
            (Some(_), Attention::Waiting) => Some("a call waits for your yes or no"),
            _ => None,
        };
        let away = match self.when {
            NotifyWhen::Always => true,
            NotifyWhen::Unfocused => !self.focused,
            NotifyWhen::Off => false,
        };
        if let (Some(moment), true) = (moment, away) {
            out.push_str(&osc9(&message(moment, session)));
            out.push('\x07');
        }
        Some(out)
    }
}

/// The notification's text: what happened, and in which session.
fn message(moment: &str, session: Option<&str>) -> String {
    match session {
        Some(title) => format!("MiniClaw: {moment} · {title}"),
        None => format!("MiniClaw: {moment}"),
    }
}

/// OSC 9 carrying `text` cleaned of escapes and of every control character (a BEL or ESC in a
/// session title would end the sequence early and write the rest to the terminal), shortened.
pub fn osc9(text: &str) -> String {
    let clean: String = crate::terminal_text::clean(text)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_MESSAGE)
        .collect();
    format!("\x1b]9;{clean}\x07")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_title_follows_and_a_notification_comes_only_when_away() {
        let mut n = Notifier::new(NotifyWhen::Unfocused);
        assert_eq!(
            n.update(Attention::Idle, None).as_deref(),
            Some("\x1b]2;MiniClaw\x07")
        );
        assert_eq!(n.update(Attention::Idle, None), None, "nothing changed");
        let working = n.update(Attention::Working, None).unwrap();
        assert_eq!(working, "\x1b]2;MiniClaw · working\x07");
        // Focused: the turn's end changes the title only.
        assert_eq!(
            n.update(Attention::Idle, Some("t")).as_deref(),
            Some("\x1b]2;MiniClaw\x07")
        );
        n.update(Attention::Working, None);
        n.focus(false);
        let waiting = n.update(Attention::Waiting, Some("fix it")).unwrap();
        assert_eq!(
            waiting,
            "\x1b]2;MiniClaw · waiting for you\x07\x1b]9;MiniClaw: a call waits for your yes or no · fix it\x07\x07"
        );
        let ended = n.update(Attention::Idle, None).unwrap();
        assert!(
            ended.ends_with("\x1b]9;MiniClaw: the turn ended\x07\x07"),
            "{ended:?}"
        );
    }

    #[test]
    fn always_notifies_while_focused_and_off_never() {
        let mut always = Notifier::new(NotifyWhen::Always);
        always.update(Attention::Working, None);
        assert!(
            always
                .update(Attention::Idle, None)
                .unwrap()
                .contains("\x1b]9;")
        );
        let mut off = Notifier::new(NotifyWhen::Off);
        off.focus(false);
        off.update(Attention::Working, None);
        assert!(
            !off.update(Attention::Idle, None)
                .unwrap()
                .contains("\x1b]9;")
        );
    }

    #[test]
    fn a_hostile_session_title_cannot_end_the_sequence() {
        let text = osc9("MiniClaw: x · \x07\x1b]2;pwned\x07\x1b[31mred\u{9b}31m\r\n");
        let inner = &text["\x1b]9;".len()..text.len() - 1];
        assert!(
            inner.chars().all(|c| !c.is_control()),
            "no control character inside: {text:?}"
        );
        assert!(!inner.contains("\x1b"), "{text:?}");
    }

    #[test]
    fn the_setting_parses_and_names_its_choices() {
        assert_eq!(NotifyWhen::parse("ALWAYS"), Ok(NotifyWhen::Always));
        assert_eq!(NotifyWhen::parse("off"), Ok(NotifyWhen::Off));
        assert_eq!(NotifyWhen::parse(""), Ok(NotifyWhen::Unfocused));
        let e = NotifyWhen::parse("loud\x1b[2J").unwrap_err();
        assert!(
            e.contains("always, unfocused or off") && !e.contains('\x1b'),
            "{e}"
        );
    }
}
