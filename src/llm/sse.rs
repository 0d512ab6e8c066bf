//! Server-sent events: bytes in any cut -> frames -> stream events.
//!
//! A pure, synchronous, incremental parser following the WHATWG event-stream rules: lines end in
//! CRLF, LF or CR; `:` lines are comments; `data:` fields of one event are joined with `\n`; a blank
//! line dispatches the event. Bytes are only decoded once a whole line is buffered, so a multi-byte
//! UTF-8 character (or a CR/LF pair) split across reads decodes exactly as if it came whole.

/// One dispatched event of a chat-completions stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// The event's data text (its `data:` lines joined with `\n`).
    Data(String),
    /// `data: [DONE]`: the stream is complete.
    Done,
    /// A comment line (`: keep-alive`): the server is there but has nothing to say yet
    /// (DeepSeek keeps a queued request open with them).
    Comment,
}

/// The most bytes one line or one event's data may hold. Real chat-completions events are a
/// few hundred bytes (a long tool call arrives in many small deltas); a server that sends
/// megabytes without a line break is broken or hostile, and buffering it would grow memory
/// until the idle timeout.
pub const MAX_EVENT_BYTES: usize = 4 * 1024 * 1024;

/// Turns a byte stream, fed in pieces of any size, into frames.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Set once a line or an event grew past [`MAX_EVENT_BYTES`]; nothing more is buffered.
    overflowed: bool,
    /// Bytes of the line being read (no terminator yet).
    line: Vec<u8>,
    /// The last byte seen was a CR, so an immediate LF belongs to the same line end.
    after_cr: bool,
    /// The `data` buffer of the event being built.
    data: String,
    /// Whether the event being built has a `data` field at all.
    has_data: bool,
    /// Whether the first line (where a byte-order mark may sit) has been seen.
    started: bool,
}

impl SseParser {
    /// A parser at the start of a stream.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether a line or an event grew past [`MAX_EVENT_BYTES`]: the stream must be abandoned
    /// (the parser buffers nothing more once it has).
    pub fn overflowed(&self) -> bool {
        self.overflowed
    }

    /// Feeds the next bytes and returns the frames they complete, in order (none once
    /// [`SseParser::overflowed`]).
    pub fn push(&mut self, bytes: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        let mut rest = bytes;
        while let Some(frame) = self.next_frame(&mut rest) {
            frames.push(frame);
        }
        frames
    }

    /// Reads `input` up to the end of the next frame and returns that frame, leaving what
    /// follows it in `input`; `None` once `input` is used up (an unfinished line or event stays
    /// buffered) or the parser [overflowed](SseParser::overflowed). A stream's reader takes its
    /// frames one at a time so that each event's text can be [given back](SseParser::recycle).
    pub fn next_frame(&mut self, input: &mut &[u8]) -> Option<Frame> {
        while !input.is_empty() && !self.overflowed {
            let rest = *input;
            // An LF right after a CR ends nothing: the two were one line end.
            if std::mem::take(&mut self.after_cr) && rest[0] == b'\n' {
                *input = &rest[1..];
                continue;
            }
            let end = memchr::memchr2(b'\n', b'\r', rest);
            let (text, terminator) = match end {
                Some(i) => (&rest[..i], Some(rest[i])),
                None => (rest, None),
            };
            self.line.extend_from_slice(text);
            if self.line.len() + self.data.len() > MAX_EVENT_BYTES {
                self.overflow();
                break;
            }
            let Some(terminator) = terminator else {
                *input = &[];
                return None;
            };
            self.after_cr = terminator == b'\r';
            *input = &rest[text.len() + 1..];
            // The line's buffer is kept for the next one.
            let mut line = std::mem::take(&mut self.line);
            let frame = self.line_done(&line);
            line.clear();
            if !self.overflowed {
                self.line = line;
            }
            if frame.is_some() {
                return frame;
            }
        }
        if self.overflowed {
            *input = &[];
        }
        None
    }

    /// Takes back the text of a [`Frame::Data`] once it was read: the next event's data is
    /// gathered in it, so a stream allocates no text per event. (A text grown past a few
    /// events' size is let go rather than kept for the rest of the stream.)
    pub fn recycle(&mut self, mut text: String) {
        const KEPT: usize = 64 * 1024;
        // Empty with no room: taken by the frame this text came in, and nothing gathered since.
        if self.data.capacity() == 0 && text.capacity() <= KEPT && !self.overflowed {
            text.clear();
            self.data = text;
        }
    }

    /// At the end of the byte stream: the event a last line without its blank line would have
    /// completed, if any.
    pub fn finish(&mut self) -> Option<Frame> {
        if self.overflowed || !self.is_mid_event() {
            return None;
        }
        self.push(b"\n\n").pop()
    }

    /// Whether bytes of an unfinished line or event are buffered (the stream stopped mid-event).
    pub fn is_mid_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    /// Handles one complete line; returns a frame when it was the blank line ending an event.
    fn line_done(&mut self, raw: &[u8]) -> Option<Frame> {
        // `from_utf8` checks ASCII a word at a time; the lossy decoder goes through its chunk
        // iterator even for valid text (2% of a fast stream's samples), so only bad bytes take it.
        let decoded = match std::str::from_utf8(raw) {
            Ok(text) => std::borrow::Cow::Borrowed(text),
            Err(_) => String::from_utf8_lossy(raw),
        };
        let mut line: &str = &decoded;
        if !self.started {
            self.started = true;
            line = line.strip_prefix('\u{FEFF}').unwrap_or(line);
        }
        if line.is_empty() {
            return self.dispatch();
        }
        if line.starts_with(':') {
            return Some(Frame::Comment); // e.g. `: keep-alive`
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        // `event`, `id` and `retry` mean nothing to a chat-completions client.
        if field == "data" {
            if self.has_data {
                self.data.push('\n');
            }
            self.data.push_str(value);
            self.has_data = true;
        }
        None
    }

    /// Drops what was buffered and refuses the rest of the stream.
    fn overflow(&mut self) {
        self.overflowed = true;
        self.line = Vec::new();
        self.data = String::new();
        self.has_data = false;
    }

    /// Ends the event being built.
    fn dispatch(&mut self) -> Option<Frame> {
        if !self.has_data {
            return None;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        if data.trim() == "[DONE]" {
            Some(Frame::Done)
        } else {
            Some(Frame::Data(data))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_utf8_become_replacement_characters_and_the_rest_is_kept() {
        let mut p = SseParser::new();
        assert_eq!(
            p.push(b"data: caf\xc3\xa9 a\xffb\xe4\xb8\n\n"),
            vec![Frame::Data("café a\u{FFFD}b\u{FFFD}".into())]
        );
    }

    #[test]
    fn a_line_or_an_event_past_the_cap_stops_the_parser_and_frees_its_buffer() {
        let mut p = SseParser::new();
        assert_eq!(
            p.push(b"data: {\"a\":1}\n\n"),
            vec![Frame::Data("{\"a\":1}".into())]
        );
        let piece = vec![b'x'; 64 * 1024];
        let mut pushed = 0;
        while !p.overflowed() {
            assert!(p.push(&piece).is_empty());
            pushed += piece.len();
            assert!(pushed <= MAX_EVENT_BYTES + piece.len(), "no cap");
        }
        assert!(p.line.capacity() == 0 && p.data.capacity() == 0);
        assert!(p.push(b"\n\ndata: [DONE]\n\n").is_empty());
        assert_eq!(p.finish(), None);
        // Many data lines of one event add up to the same cap.
        let mut p = SseParser::new();
        let line = format!("data: {}\n", "y".repeat(1000));
        for _ in 0..(MAX_EVENT_BYTES / 1000 + 2) {
            p.push(line.as_bytes());
        }
        assert!(p.overflowed());
    }

    fn all(input: &[u8]) -> Vec<Frame> {
        SseParser::new().push(input)
    }

    #[test]
    fn data_events_comments_and_done() {
        let frames = all(b": keep-alive\n\ndata: {\"a\":1}\n\ndata: [DONE]\n\n");
        assert_eq!(
            frames,
            vec![Frame::Comment, Frame::Data("{\"a\":1}".into()), Frame::Done]
        );
        // A comment between an event's data lines does not end the event.
        let frames = all(b"data: a\n: ping\ndata: b\n\n");
        assert_eq!(frames, vec![Frame::Comment, Frame::Data("a\nb".into())]);
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let frames = all(b"data: one\ndata:two\ndata\n\n");
        assert_eq!(frames, vec![Frame::Data("one\ntwo\n".into())]);
    }

    #[test]
    fn crlf_cr_and_lf_all_end_lines() {
        let frames = all(b"data: a\r\n\r\ndata: b\r\rdata: c\n\n");
        let expected: Vec<Frame> = ["a", "b", "c"]
            .iter()
            .map(|s| Frame::Data(s.to_string()))
            .collect();
        assert_eq!(frames, expected);
    }

    #[test]
    fn a_split_between_cr_and_lf_is_one_line_end() {
        let mut p = SseParser::new();
        let mut frames = p.push(b"data: a\r");
        frames.extend(p.push(b"\n\r"));
        frames.extend(p.push(b"\ndata: b\n\n"));
        assert_eq!(
            frames,
            vec![Frame::Data("a".into()), Frame::Data("b".into())]
        );
    }

    #[test]
    fn a_character_split_across_reads_decodes_whole() {
        let text = "data: héllo 天气\n\n".as_bytes();
        let mut p = SseParser::new();
        let mut frames = Vec::new();
        for b in text {
            frames.extend(p.push(std::slice::from_ref(b)));
        }
        assert_eq!(frames, vec![Frame::Data("héllo 天气".into())]);
    }

    #[test]
    fn an_unfinished_event_is_not_dispatched() {
        let mut p = SseParser::new();
        assert!(p.push(b"data: {\"a\"").is_empty());
        assert!(p.is_mid_event());
        assert!(p.push(b":1}\n").is_empty());
        assert!(p.is_mid_event());
    }

    #[test]
    fn done_without_its_blank_line_still_counts_at_the_end() {
        let mut p = SseParser::new();
        assert_eq!(
            p.push(b"data: {}\n\ndata: [DONE]\n"),
            vec![Frame::Data("{}".into())]
        );
        assert_eq!(p.finish(), Some(Frame::Done));
        let mut cut = SseParser::new();
        assert!(cut.push(b"data: {\"a\"").is_empty());
        assert_eq!(cut.finish(), Some(Frame::Data("{\"a\"".into())));
        assert_eq!(SseParser::new().finish(), None);
    }

    #[test]
    fn a_leading_byte_order_mark_is_ignored() {
        assert_eq!(
            all("\u{FEFF}data: x\n\n".as_bytes()),
            vec![Frame::Data("x".into())]
        );
    }

    use proptest::prelude::*;

    proptest! {
        /// Frames taken one at a time, each text given back, from the bytes cut anywhere, are
        /// the frames of the whole read at once; and a recycled text carries nothing over.
        #[test]
        fn frames_one_at_a_time_with_texts_given_back_are_the_frames_of_the_whole(
            events in proptest::collection::vec(
                prop_oneof![
                    "[a-z{}\":, é天]{0,40}".prop_map(|d| format!("data: {d}\n\n")),
                    "[a-z ]{0,10}".prop_map(|c| format!(": {c}\r\n")),
                    ("[a-z]{0,8}", "[a-z]{0,8}").prop_map(|(a, b)| format!("data:{a}\rdata: {b}\r\r")),
                    Just("data: [DONE]\n\n".to_string()),
                ],
                0..12,
            ),
            cuts in proptest::collection::vec(0usize..400, 0..8),
        ) {
            let bytes = events.concat().into_bytes();
            let whole = SseParser::new().push(&bytes);
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.push(bytes.len());
            cuts.sort_unstable();
            let mut p = SseParser::new();
            let mut frames = Vec::new();
            let mut from = 0;
            for to in cuts {
                let mut rest = &bytes[from..to];
                while let Some(frame) = p.next_frame(&mut rest) {
                    if let Frame::Data(text) = &frame {
                        p.recycle(text.clone());
                    }
                    frames.push(frame);
                }
                prop_assert!(rest.is_empty());
                from = to;
            }
            prop_assert_eq!(frames, whole);
        }
    }
}
