//! A streamed answer rendered incrementally: finished blocks are rendered once ("frozen"), only
//! the open block again as text arrives, and a code block still streaming keeps its
//! highlighting state so each of its lines is highlighted once.

use pulldown_cmark::{Event, Parser};
use ratatui::text::{Line, Span};

use super::blocks;
use super::code::{self, Resume};
use super::linebreak;
use crate::tui::theme::Theme;

/// The rendering of a growing markdown text for one width and theme.
///
/// Two ways to read it: [`StreamingMarkdown::lines`] renders the whole committed text (exact,
/// costs the whole text); [`StreamingMarkdown::update`] keeps finished blocks rendered once
/// ("frozen") and re-renders only the open block, so a delta costs the same at any length.
#[derive(Clone, Debug, Default)]
pub struct StreamingMarkdown {
    /// The width and theme everything here was rendered for (another one starts afresh).
    view: Option<(usize, Theme)>,
    committed_src: String,
    committed: Vec<Line<'static>>,
    /// Whether the committed text ends inside a code block opened at column 0.
    committed_in_code: bool,
    /// Bytes of the text covered by `frozen`.
    frozen_len: usize,
    /// The last bytes before `frozen_len`, to notice a replaced text without comparing it all.
    frozen_tail: String,
    /// Rendered lines of the frozen blocks (with the blank line between blocks) not yet taken
    /// by [`StreamingMarkdown::take_frozen`].
    frozen: Vec<Line<'static>>,
    /// Whether any frozen block rendered to lines (taken or not): the next block follows a
    /// blank line.
    frozen_any: bool,
    /// Code blocks among the frozen blocks (the open block's are numbered after them).
    frozen_codes: usize,
    /// How far the committed text was scanned for block boundaries.
    scanned: usize,
    /// What the scan knows at `scanned`.
    scan: Scan,
    /// The rendering of the open block and which text it shows (start, end, done).
    block: Vec<Line<'static>>,
    block_key: (usize, usize, bool),
    /// The open block and the tail after it, and which text they show.
    open: Vec<Line<'static>>,
    open_key: (usize, usize, usize, bool),
    /// The highlighting of a code block still streaming.
    resume: Option<Resume>,
}

/// How many bytes before the frozen end are compared to notice a replaced text.
const CHECK_BYTES: usize = 64;

/// Where a code fence opens or closes: the fence character and its length.
fn fence_of(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.chars().take_while(|x| *x == c).count();
    // After backticks, a backtick in the rest makes it inline code, not a fence.
    (n >= 3 && !(c == '`' && t[n..].contains('`'))).then_some((c, n))
}

/// Whether a block starting with `line` after a blank line renders the same on its own: not a
/// continuation (indented), not another item of the same list, not a link definition or HTML.
fn starts_own_block(line: &str) -> bool {
    let Some(first) = line.chars().next() else {
        return false;
    };
    if first.is_whitespace() || matches!(first, '[' | '<') {
        return false;
    }
    let bullet = ["- ", "* ", "+ "].iter().any(|b| line.starts_with(b));
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    let ordered = digits > 0 && matches!(line[digits..].chars().next(), Some('.' | ')'));
    !bullet && !ordered
}

/// Whether `line` is a link reference or footnote definition (`[name]: ...`).
fn is_definition(line: &str) -> bool {
    let t = line.trim_start_matches(' ');
    line.len() - t.len() <= 3 && t.starts_with('[') && t.contains("]:")
}

/// Whether, in pulldown-cmark's own reading of `part`, a top-level block starts on the line
/// `at..line_end` and none runs across `at`: then the blocks before render the same on their
/// own. (The line scan only proposes such places; HTML blocks, for one, can hide a fence.)
fn starts_top_level(part: &str, at: usize, line_end: usize) -> bool {
    let mut depth = 0usize;
    for (event, range) in Parser::new_ext(part, blocks::options()).into_offset_iter() {
        let top = depth == 0;
        match event {
            Event::Start(_) => depth += 1,
            Event::End(_) => depth = depth.saturating_sub(1),
            _ => {}
        }
        if !top || matches!(event, Event::End(_)) {
            continue;
        }
        if range.start < at {
            if range.end > at {
                return false;
            }
        } else {
            return range.start < line_end;
        }
    }
    false
}

/// What is known about the text scanned so far, line by line, to propose where a finished
/// block may be frozen: it must render the same on its own as within the whole text.
#[derive(Clone, Debug, Default)]
struct Scan {
    /// The fence (character, length) of an open code block.
    fence: Option<(char, usize)>,
    /// Whether that fence opened at column 0 (a top-level block).
    fence_top: bool,
    /// Whether the last line was blank.
    prev_blank: bool,
    /// Whether a link definition was seen: later text stays in the open block with it.
    defines: bool,
    /// A top-level code block just closed: the next line starts a new block.
    after_fence: bool,
}

impl Scan {
    /// Takes the next line (with its newline); returns whether a block may start at it.
    fn line(&mut self, line: &str) -> bool {
        if let Some((c, n)) = self.fence {
            let closes = fence_of(line).is_some_and(|(fc, fnn)| {
                fc == c && fnn >= n && line.trim().chars().all(|x| x == c)
            });
            if closes {
                self.fence = None;
                self.after_fence = self.fence_top;
            }
            self.prev_blank = false;
            return false;
        }
        let blank = line.trim().is_empty();
        self.defines |= is_definition(line);
        let opens = fence_of(line);
        let top = opens.is_some() && (line.starts_with("```") || line.starts_with("~~~"));
        // A fence at column 0 interrupts a paragraph or list: a new top-level block.
        let boundary = !blank
            && !self.defines
            && ((self.prev_blank && starts_own_block(line)) || top || self.after_fence);
        if !blank {
            self.after_fence = false;
        }
        self.fence = opens;
        self.fence_top = top;
        self.prev_blank = blank;
        boundary
    }

    /// Whether the text ends inside a code block opened at column 0.
    fn in_top_fence(&self) -> bool {
        self.fence.is_some() && self.fence_top
    }
}

fn same_start(text: &str, at: usize, check: &str) -> bool {
    at <= text.len()
        && text.is_char_boundary(at)
        && at >= check.len()
        && text.is_char_boundary(at - check.len())
        && &text[at - check.len()..at] == check
}

/// The lines for the open tail (a line still arriving): inside an open code block drawn as
/// code, otherwise as plain text, wrapped either way.
fn tail_lines(tail: &str, in_code: bool, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    if tail.is_empty() {
        return Vec::new();
    }
    let rows = if in_code {
        code::tail_rows(tail, width, theme)
    } else {
        linebreak::wrap(&[Span::styled(tail.to_string(), theme.text)], width)
    };
    rows.into_iter().map(Line::from).collect()
}

impl StreamingMarkdown {
    /// Starts afresh when the width or theme changed; returns whether something rendered for
    /// another view was thrown away.
    fn set_view(&mut self, width: usize, theme: &Theme) -> bool {
        let same = self
            .view
            .as_ref()
            .is_some_and(|(w, t)| *w == width && t == theme);
        if same {
            return false;
        }
        let had_view = self.view.is_some();
        *self = Self {
            view: Some((width, theme.clone())),
            ..Self::default()
        };
        had_view
    }

    /// The lines for `text` at `width`: when `done`, exactly the rendering of the whole text;
    /// otherwise the committed part rendered and the open tail as plain text.
    pub fn lines(
        &mut self,
        text: &str,
        done: bool,
        width: usize,
        theme: &Theme,
    ) -> Vec<Line<'static>> {
        self.set_view(width, theme);
        let cut = if done {
            text.len()
        } else {
            text.rfind('\n').map_or(0, |i| i + 1)
        };
        // Comparing the source (not just its length) notices a replaced text too.
        if text[..cut] != self.committed_src {
            self.committed_src = text[..cut].to_string();
            self.committed = if cut == 0 {
                Vec::new()
            } else {
                super::render(&self.committed_src, width, theme)
            };
            let mut scan = Scan::default();
            for line in self.committed_src.split_inclusive('\n') {
                scan.line(line);
            }
            self.committed_in_code = scan.in_top_fence();
        }
        let mut out = self.committed.clone();
        out.extend(tail_lines(
            &text[cut..],
            self.committed_in_code,
            width,
            theme,
        ));
        out
    }

    /// Brings the incremental rendering up to `text` (which usually only grew) at `width`.
    /// Returns `false` when everything was rendered afresh (a replaced text, another width or
    /// theme).
    pub fn update(&mut self, text: &str, done: bool, width: usize, theme: &Theme) -> bool {
        let fresh = self.set_view(width, theme);
        let kept = same_start(text, self.frozen_len, &self.frozen_tail);
        // A link definition applies to the whole text, also to blocks frozen before it arrived:
        // the finished answer is then rendered whole, once.
        let defines = done && self.frozen_any && text.lines().any(is_definition);
        if !kept || defines {
            *self = Self {
                view: self.view.take(),
                ..Self::default()
            };
        }
        if defines {
            self.scanned = text.len();
        }
        let committed = text.rfind('\n').map_or(0, |i| i + 1);
        if self.scanned > committed {
            self.scanned = self.frozen_len;
            self.scan = Scan::default();
        }
        // Find block boundaries in the newly committed lines; freeze each finished block.
        while self.scanned < committed {
            let start = self.scanned;
            let end = text[start..committed]
                .find('\n')
                .map_or(committed, |i| start + i + 1);
            self.scanned = end;
            let part = &text[self.frozen_len..end];
            if self.scan.line(&text[start..end])
                && start > self.frozen_len
                && starts_top_level(part, start - self.frozen_len, end - self.frozen_len)
            {
                self.freeze(text, start, width, theme);
            }
        }
        let end = if done { text.len() } else { committed };
        let block_key = (self.frozen_len, end, done);
        if block_key != self.block_key {
            let block = &text[self.frozen_len..end];
            self.block = if block.is_empty() {
                Vec::new()
            } else {
                let first = self.frozen_codes + 1;
                blocks::render(block, width, theme, first, &mut self.resume).0
            };
            if self.frozen_any && !self.block.is_empty() {
                self.block.insert(0, Line::default());
            }
            self.block_key = block_key;
        }
        let key = (self.frozen_len, end, text.len(), done);
        if key != self.open_key {
            self.open.clone_from(&self.block);
            let in_code = self.scan.in_top_fence();
            self.open
                .extend(tail_lines(&text[end..], in_code, width, theme));
            self.open_key = key;
        }
        // A definition rendered everything afresh as well: whoever took the frozen lines must
        // take them all again.
        kept && !fresh && !defines
    }

    fn freeze(&mut self, text: &str, at: usize, width: usize, theme: &Theme) {
        let first = self.frozen_codes + 1;
        let part = &text[self.frozen_len..at];
        let (block, codes) = blocks::render(part, width, theme, first, &mut self.resume);
        if !block.is_empty() {
            if self.frozen_any {
                self.frozen.push(Line::default());
            }
            self.frozen.extend(block);
            self.frozen_any = true;
        }
        self.frozen_codes += codes;
        self.frozen_len = at;
        let mut from = at.saturating_sub(CHECK_BYTES);
        while !text.is_char_boundary(from) {
            from -= 1;
        }
        self.frozen_tail = text[from..at].to_string();
        // The open rendering started at the old frozen end.
        self.block_key = (usize::MAX, 0, false);
        self.open_key = (usize::MAX, 0, 0, false);
    }

    /// Rendered lines of the finished blocks not taken yet (they never change while the text
    /// only grows).
    #[cfg(test)]
    pub fn frozen(&self) -> &[Line<'static>] {
        &self.frozen
    }

    /// Hands over the finished blocks' lines rendered since the last call: whoever shows the
    /// answer keeps them, so they are held once, not twice (a long answer's lines weigh
    /// megabytes). After an [`update`](Self::update) that returned `false`, everything is
    /// frozen afresh and handed over again.
    pub fn take_frozen(&mut self) -> Vec<Line<'static>> {
        std::mem::take(&mut self.frozen)
    }

    /// Forgets what was rendered, so the next [`update`](Self::update) renders the whole text
    /// again (and returns `false`).
    pub fn restart(&mut self) {
        *self = Self::default();
    }

    /// Rendered lines of the open block and the tail (re-rendered as they grow).
    pub fn open(&self) -> &[Line<'static>] {
        &self.open
    }
}

#[cfg(test)]
mod tests;
