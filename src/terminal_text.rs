//! Neutralising untrusted text before it is written to a terminal: whole escape sequences (CSI,
//! OSC, DCS, APC, PM, SOS, two-character escapes), C1 controls and every other control character
//! except newline and tab are removed, so model output cannot set the clipboard (OSC 52), retitle
//! the window, clear the screen or move the cursor.
//!
//! The parser follows the shape of a terminal's own (DEC/ECMA-48 states), but it only has to be
//! safe, not faithful: its output never holds an escape or control character, whatever it parses.
//! It keeps state between pieces, so a sequence split across two streamed deltas is still removed.

/// Where the cleaner is within a possible escape sequence.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum State {
    /// Plain text.
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and intermediate bytes (e.g. `ESC ( B`).
    EscapeIntermediate,
    /// Inside a control sequence (`ESC [` or U+009B), up to its final byte.
    Csi,
    /// Inside a string (OSC, DCS, SOS, PM, APC), up to BEL or ST.
    String,
    /// After ESC inside a string: `\` ends it (ST); anything else starts a new escape.
    StringEscape,
}

const ESC: char = '\u{1b}';
const BEL: char = '\u{07}';
/// CAN and SUB abort any sequence in a terminal.
const CAN: char = '\u{18}';
const SUB: char = '\u{1a}';

/// A stateful cleaner for one stream of text (e.g. one model's reasoning deltas).
///
/// Feed it the pieces in order with [`TerminalCleaner::push`]; start a new cleaner (or call
/// [`TerminalCleaner::reset`]) for an unrelated stream, so an unterminated sequence in one stream
/// cannot swallow the next.
#[derive(Clone, Debug, Default)]
pub struct TerminalCleaner {
    state: State,
}

impl TerminalCleaner {
    /// A cleaner at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cleans the next piece of the stream, appending what is safe to show to `out`.
    pub fn push_into(&mut self, piece: &str, out: &mut String) {
        // Outside a sequence, text without a control character passes whole. (A C1 control,
        // U+0080–U+009F, is the byte 0xC2 then another: text with 0xC2 goes the slow way.)
        let plain = |b: u8| (b >= 0x20 || b == b'\n' || b == b'\t') && b != 0x7f && b != 0xc2;
        if self.state == State::Ground && piece.bytes().all(plain) {
            out.push_str(piece);
            return;
        }
        for c in piece.chars() {
            self.feed(c, out);
        }
    }

    /// Cleans the next piece of the stream and returns what is safe to show.
    pub fn push(&mut self, piece: &str) -> String {
        let mut out = String::with_capacity(piece.len());
        self.push_into(piece, &mut out);
        out
    }

    /// Forgets any sequence in progress: the next piece starts a new stream.
    pub fn reset(&mut self) {
        self.state = State::Ground;
    }

    /// Whether the stream ended inside an escape sequence (which was dropped).
    pub fn in_sequence(&self) -> bool {
        self.state != State::Ground
    }

    fn feed(&mut self, c: char, out: &mut String) {
        self.state = match self.state {
            State::Ground => ground(c, out),
            State::Escape => escape(c, out),
            State::EscapeIntermediate => match c {
                ' '..='/' => State::EscapeIntermediate,
                '0'..='~' => State::Ground,
                _ => ground(c, out),
            },
            State::Csi => match c {
                // Parameter and intermediate bytes.
                ' '..='?' => State::Csi,
                // The final byte ends the sequence.
                '@'..='~' => State::Ground,
                // Other C0 controls inside a sequence are ignored by terminals; we drop them.
                _ if c.is_ascii_control() && c != '\n' && c != ESC && c != CAN && c != SUB => {
                    State::Csi
                }
                // Anything else cannot be part of a sequence: end it there, keep the text.
                _ => ground(c, out),
            },
            State::String => match c {
                BEL | CAN | SUB | '\u{9c}' => State::Ground,
                // A string left open must not hide the rest of the text: a line ends it (OSC
                // payloads that matter, titles and clipboard data, never span lines).
                '\n' => ground(c, out),
                ESC => State::StringEscape,
                _ => State::String,
            },
            State::StringEscape => match c {
                '\\' => State::Ground,
                _ => escape(c, out),
            },
        };
    }
}

/// The character after ESC.
fn escape(c: char, out: &mut String) -> State {
    match c {
        '[' => State::Csi,
        ']' | 'P' | 'X' | '^' | '_' => State::String,
        ' '..='/' => State::EscapeIntermediate,
        '0'..='~' => State::Ground,
        // ESC ESC: the first one was a lone ESC.
        ESC => State::Escape,
        CAN | SUB => State::Ground,
        // A lone ESC before anything else: drop the ESC, keep what follows.
        _ => ground(c, out),
    }
}

/// A character in plain text: shown, dropped, or the start of a sequence.
fn ground(c: char, out: &mut String) -> State {
    match c {
        ESC => State::Escape,
        // C1 CSI, and the C1 string introducers OSC, DCS, SOS, PM, APC.
        '\u{9b}' => State::Csi,
        '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => State::String,
        '\n' | '\t' => {
            out.push(c);
            State::Ground
        }
        _ if c.is_control() => State::Ground,
        _ => {
            out.push(c);
            State::Ground
        }
    }
}

/// Cleans one complete piece of text (a stream of its own).
pub fn clean(text: &str) -> String {
    TerminalCleaner::new().push(text)
}

/// Whether `c` may reach a terminal: newline, tab, or not a control character at all.
pub fn is_safe(c: char) -> bool {
    c == '\n' || c == '\t' || !c.is_control()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn whole_sequences_go_and_the_text_around_them_stays() {
        assert_eq!(clean("a\x1b]52;c;aGk=\x07b"), "ab", "OSC 52 ended by BEL");
        assert_eq!(clean("a\x1b]0;title\x1b\\b"), "ab", "OSC 0 ended by ST");
        assert_eq!(clean("a\x1b[2Jb\x1b[31;1mc\x1b[0m"), "abc", "CSI");
        assert_eq!(clean("a\u{9b}31mb"), "ab", "C1 CSI");
        assert_eq!(clean("a\u{9d}0;t\u{9c}b"), "ab", "C1 OSC and ST");
        assert_eq!(clean("a\x1bPq#0\x1b\\b"), "ab", "DCS");
        assert_eq!(clean("a\x1b_apc\x07b\x1b^pm\x07c\x1bXsos\x07d"), "abcd");
        assert_eq!(clean("a\x1b(Bb\x1b7c\x1bcd"), "abcd", "short escapes");
    }

    #[test]
    fn a_string_left_open_ends_at_the_line_so_nothing_after_it_is_hidden() {
        assert_eq!(clean("a\x1b]0;title\nvisible"), "a\nvisible");
        assert_eq!(clean("a\u{9d}52;c;x\nshown\x07"), "a\nshown");
    }

    #[test]
    fn other_controls_go_but_newline_and_tab_stay() {
        assert_eq!(clean("a\rb\x08c\x00d\x7fe\u{85}f"), "abcdef");
        assert_eq!(clean("a\tb\nc"), "a\tb\nc");
        assert_eq!(clean("你好 🙂 é"), "你好 🙂 é");
    }

    #[test]
    fn a_lone_or_broken_escape_drops_only_itself() {
        assert_eq!(clean("a\x1b"), "a");
        assert_eq!(clean("a\x1b\x1bb"), "a");
        assert_eq!(clean("a\x1bé"), "aé");
        assert_eq!(clean("a\x1b[12é"), "aé", "a sequence cut by text");
        assert_eq!(clean("a\x1b[1\nb"), "a\nb", "a sequence cut by a newline");
        assert_eq!(
            clean("a\x1b]0;x\x1b[2Jb"),
            "ab",
            "ESC inside a string ends it"
        );
        assert_eq!(clean("a\x1b]0;x\x18b"), "ab", "CAN aborts");
    }

    #[test]
    fn a_sequence_split_across_pieces_is_still_removed() {
        let mut c = TerminalCleaner::new();
        let shown: String = ["think \x1b", "]52;c;aGk", "=\x07 more \u{9b}", "2", "J!"]
            .iter()
            .map(|p| c.push(p))
            .collect();
        assert_eq!(shown, "think  more !");
        assert!(!c.in_sequence());
        c.push("\x1b]0;unterminated");
        assert!(c.in_sequence());
        c.reset();
        assert_eq!(c.push("next"), "next");
    }

    /// Hostile building blocks; random strings of them cover sequences of every kind.
    fn hostile() -> impl Strategy<Value = String> {
        let parts = prop::sample::select(vec![
            "\x1b",
            "[",
            "]",
            "52;c;aGk=",
            "0;title",
            "2J",
            "31m",
            "\x07",
            "\\",
            "\u{9b}",
            "\u{9c}",
            "\u{9d}",
            "\u{90}",
            "P",
            "_",
            "^",
            "X",
            "(",
            "\r",
            "\x08",
            "\x00",
            "\x7f",
            "\n",
            "\t",
            "\x18",
            "text ",
            "é",
            "你",
            "🙂",
            ";",
            "?",
            "1",
        ]);
        prop::collection::vec(parts, 0..40).prop_map(|v| v.concat())
    }

    proptest! {
        #[test]
        fn any_cutting_into_pieces_gives_the_same_clean_text(
            text in hostile(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..8),
        ) {
            let whole = clean(&text);
            prop_assert!(whole.chars().all(is_safe), "{whole:?}");
            let bounds: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            let mut at: Vec<usize> = if bounds.is_empty() {
                Vec::new()
            } else {
                cuts.iter().map(|i| bounds[i.index(bounds.len())]).collect()
            };
            at.sort_unstable();
            at.dedup();
            let mut cleaner = TerminalCleaner::new();
            let mut pieces = String::new();
            let mut start = 0;
            for end in at.into_iter().chain([text.len()]) {
                pieces.push_str(&cleaner.push(&text[start..end]));
                start = end;
            }
            prop_assert_eq!(pieces, whole);
        }

        #[test]
        fn the_plain_text_shortcut_cleans_as_each_character_would(text in hostile()) {
            let mut slow = TerminalCleaner::new();
            let mut out = String::new();
            for c in text.chars() {
                slow.feed(c, &mut out);
            }
            prop_assert_eq!(clean(&text), out);
        }

        #[test]
        fn arbitrary_text_never_yields_a_control_character(text in any::<String>()) {
            prop_assert!(clean(&text).chars().all(is_safe));
        }
    }
}
