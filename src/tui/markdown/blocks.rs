//! The block renderer: pulldown-cmark's events to final lines for one width. Paragraphs and
//! headings are wrapped here, list markers and quote bars stand in front of every line they
//! cover, code blocks are framed, tables fitted and display math centred, so nothing needs to
//! wrap the result again.

use std::ops::Range;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

mod tags;

use super::code::{self, Resume};
use super::inline::Inline;
use super::linebreak::{self, Row, row_width};
use super::math;
use super::table::Table;
use crate::tui::theme::Theme;

/// The markdown MiniClaw understands: CommonMark with GitHub's tables, task lists,
/// strikethrough, footnotes and alerts, and `$…$` / `$$…$$` math.
pub(crate) fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM
}

/// What a line's prefix is made of, outermost first.
#[derive(Debug)]
enum Container {
    /// A block quote: a bar on every line.
    Quote,
    /// A list item or footnote: its marker on the first line, as many spaces on the others.
    Item {
        marker: Row,
        indent: usize,
        used: bool,
    },
}

/// A code block being collected.
#[derive(Debug)]
struct CodeBlock {
    info: String,
    text: String,
    closed: bool,
}

/// Renders markdown events into lines; see [`render`].
struct Renderer<'a> {
    theme: &'a Theme,
    width: usize,
    out: Vec<Line<'static>>,
    containers: Vec<Container>,
    /// The open lists: the next number of an ordered one.
    lists: Vec<Option<u64>>,
    /// A block ended: the next one (in the same container) is set off by a blank line.
    pending_blank: bool,
    inline: Inline,
    /// A paragraph, heading or table cell is open (inline content outside one is a tight
    /// list item's text).
    in_block: bool,
    heading: Option<HeadingLevel>,
    code: Option<CodeBlock>,
    html: Option<String>,
    table: Option<Table>,
    /// Footnote definitions open (their text is muted).
    muted: usize,
    /// The number of the next code block.
    next_code: usize,
    resume: &'a mut Option<Resume>,
}

/// Renders `text` for `width` columns; code blocks are numbered from `first_code`. Returns the
/// lines and how many code blocks there were. `resume` carries the highlighting of a code block
/// that is still streaming from one call to the next.
pub(crate) fn render(
    text: &str,
    width: usize,
    theme: &Theme,
    first_code: usize,
    resume: &mut Option<Resume>,
) -> (Vec<Line<'static>>, usize) {
    let mut r = Renderer {
        theme,
        width: width.max(1),
        out: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        pending_blank: false,
        inline: Inline::default(),
        in_block: false,
        heading: None,
        code: None,
        html: None,
        table: None,
        muted: 0,
        next_code: first_code,
        resume,
    };
    for (event, range) in Parser::new_ext(text, options()).into_offset_iter() {
        r.event(event, range, text);
    }
    r.flush_inline();
    let codes = r.next_code - first_code;
    let mut out = r.out;
    if theme.monochrome {
        for line in &mut out {
            for span in &mut line.spans {
                span.style = clean(span.style);
            }
        }
    }
    (out, codes)
}

/// Without colour (NO_COLOR), emphasis may only come from bold, reverse and underline: colours
/// go, italic becomes underline.
fn clean(style: Style) -> Style {
    let mut out = Style {
        fg: None,
        bg: None,
        underline_color: None,
        ..style
    };
    if out.add_modifier.contains(Modifier::ITALIC) {
        out = out
            .remove_modifier(Modifier::ITALIC)
            .add_modifier(Modifier::UNDERLINED);
    }
    out
}

/// Whether the fenced code block whose source is `src` has its closing fence (a block still
/// streaming has not).
fn fence_closed(src: &str) -> bool {
    let mut lines = src.trim_end_matches(['\n', '\r']).lines();
    let Some(first) = lines.next() else {
        return false;
    };
    let first = first.trim_start();
    let Some(c) = first.chars().next() else {
        return false;
    };
    let n = first.chars().take_while(|&x| x == c).count();
    // The last line, without the quote markers and indentation of the containers.
    let Some(last) = lines.last() else {
        return false;
    };
    let last = last.trim_start_matches([' ', '>', '\t']).trim_end();
    last.chars().all(|x| x == c) && last.chars().count() >= n
}

impl Renderer<'_> {
    fn event(&mut self, event: Event<'_>, range: Range<usize>, src: &str) {
        match event {
            Event::Start(tag) => self.start(tag, range, src),
            Event::End(tag) => self.end(tag),
            Event::Text(t) => {
                if let Some(code) = &mut self.code {
                    code.text.push_str(&t);
                } else if let Some(html) = &mut self.html {
                    html.push_str(&t);
                } else {
                    self.text(&t, None);
                }
            }
            Event::Code(t) => {
                let style = self.style().patch(self.theme.selection);
                self.text(&t, Some(style));
            }
            Event::InlineMath(t) => {
                let style = self.style().patch(self.math_style());
                self.text(&math::to_unicode(&t), Some(style));
            }
            Event::DisplayMath(t) => self.display_math(&t),
            Event::Html(t) => {
                if let Some(html) = &mut self.html {
                    html.push_str(&t);
                } else {
                    self.text(&t, Some(self.theme.muted));
                }
            }
            Event::InlineHtml(t) => self.text(&t, Some(self.theme.muted)),
            Event::FootnoteReference(label) => {
                self.text(&format!("[{label}]"), Some(self.theme.muted));
            }
            Event::SoftBreak => {
                let style = self.style();
                self.inline.soft_break(style);
            }
            Event::HardBreak => self.inline.hard_break(),
            Event::Rule => {
                self.block_start();
                let width = self.avail();
                let rule = vec![Span::styled("─".repeat(width), self.theme.border)];
                self.emit(rule);
                self.pending_blank = true;
            }
            Event::TaskListMarker(done) => self.task_marker(done),
        }
    }

    /// The style text starts from here: a heading's, muted in footnotes, else the theme's text.
    fn base(&self) -> Style {
        let theme = self.theme;
        match self.heading {
            Some(HeadingLevel::H1) => theme
                .accent
                .add_modifier(Modifier::BOLD | Modifier::UNDERLINED),
            Some(HeadingLevel::H2) => theme.accent.add_modifier(Modifier::BOLD),
            Some(_) => theme.text.add_modifier(Modifier::BOLD),
            None if self.muted > 0 => theme.muted,
            None => theme.text,
        }
    }

    /// The style of inline text at this point (base and open spans).
    fn style(&self) -> Style {
        self.inline.style(self.base())
    }

    /// Math in the accent colour, without the accent's boldness.
    fn math_style(&self) -> Style {
        match self.theme.accent.fg {
            Some(fg) => Style::new().fg(fg),
            None => Style::new(),
        }
    }

    /// List bullets and numbers.
    fn marker_style(&self) -> Style {
        match self.theme.accent.fg {
            Some(fg) => Style::new().fg(fg),
            None => Style::new(),
        }
    }

    /// Adds inline text, in the current style unless `style` is given.
    fn text(&mut self, text: &str, style: Option<Style>) {
        if !self.in_block && self.inline.is_blank() {
            // A tight list item's text: it follows its item's marker directly.
            self.pending_blank = false;
        }
        let style = style.unwrap_or_else(|| self.style());
        self.inline.push(text, style);
    }

    /// Marks the innermost list item as a task: ☐ or ☑ instead of its bullet (after its
    /// number in an ordered list).
    fn task_marker(&mut self, done: bool) {
        let (mark, style) = if done {
            ("☑ ", self.theme.success)
        } else {
            ("☐ ", self.theme.muted)
        };
        let ordered = matches!(self.lists.last(), Some(Some(_)));
        if let Some(Container::Item { marker, indent, .. }) = self
            .containers
            .iter_mut()
            .rev()
            .find(|c| matches!(c, Container::Item { .. }))
        {
            if !ordered {
                marker.clear();
            }
            marker.push(Span::styled(mark, style));
            *indent = row_width(marker);
        }
    }

    /// Columns left for content inside the open containers.
    fn avail(&self) -> usize {
        let used: usize = self
            .containers
            .iter()
            .map(|c| match c {
                Container::Quote => 2,
                Container::Item { indent, .. } => *indent,
            })
            .sum();
        self.width.saturating_sub(used).max(1)
    }

    /// The containers' prefix for the next line: markers not shown yet are shown (and so
    /// used), unless the line is blank.
    fn prefix(&mut self, blank: bool) -> Row {
        let bar = self.theme.muted;
        let mut row: Row = Vec::new();
        for c in &mut self.containers {
            match c {
                Container::Quote => row.push(Span::styled("│ ", bar)),
                Container::Item {
                    marker,
                    indent,
                    used,
                } => {
                    if blank || *used {
                        row.push(Span::raw(" ".repeat(*indent)));
                    } else {
                        *used = true;
                        row.extend(marker.iter().cloned());
                    }
                }
            }
        }
        row
    }

    /// Adds a line, dropping trailing spaces (a blank line inside a quote is just its bars).
    fn push_line(&mut self, mut row: Row) {
        while let Some(last) = row.last_mut() {
            let trimmed = last.content.trim_end_matches(' ');
            if trimmed.is_empty() {
                row.pop();
            } else {
                if trimmed.len() != last.content.len() {
                    last.content = trimmed.to_string().into();
                }
                break;
            }
        }
        self.out.push(Line::from(row));
    }

    /// Adds `content` behind the containers' prefix.
    fn emit(&mut self, content: Row) {
        let mut line = self.prefix(false);
        line.extend(content);
        self.push_line(line);
    }

    /// Wraps `runs` to the room inside the containers and adds the lines.
    fn emit_wrapped(&mut self, runs: &[Span<'static>]) {
        for row in linebreak::wrap(runs, self.avail()) {
            self.emit(row);
        }
    }

    /// A blank line between blocks (with the quote bars around it).
    fn blank_line(&mut self) {
        let line = self.prefix(true);
        self.push_line(line);
    }

    /// A block begins: text of a tight list item before it is written out, and a blank line
    /// sets it off from the block before.
    fn block_start(&mut self) {
        self.flush_inline();
        if self.pending_blank {
            self.blank_line();
        }
        self.pending_blank = false;
    }

    /// Writes out the inline content collected so far, wrapped.
    fn flush_inline(&mut self) {
        if self.inline.is_blank() {
            self.inline.take();
            return;
        }
        for segment in self.inline.take() {
            self.emit_wrapped(&segment);
        }
    }

    /// Display math: on its own line, centred in the room there is.
    fn display_math(&mut self, tex: &str) {
        self.flush_inline();
        let text = math::to_unicode(tex);
        let avail = self.avail();
        let style = self.math_style();
        let width = text.width();
        if width <= avail {
            let pad = " ".repeat((avail - width) / 2);
            self.emit(vec![Span::raw(pad), Span::styled(text, style)]);
        } else {
            self.emit_wrapped(&[Span::styled(text, style)]);
        }
    }

    /// A finished (or still streaming) code block: highlighted and framed.
    fn code_block(&mut self, block: CodeBlock) {
        let rows = code::highlight(
            &block.text,
            &block.info,
            self.theme,
            self.resume,
            !block.closed,
        );
        let width = self.avail();
        let framed = code::frame(
            &rows,
            &block.info,
            self.next_code,
            block.closed,
            width,
            self.theme,
        );
        self.next_code += 1;
        for row in framed {
            self.emit(row);
        }
    }
}

/// The code of every code block (fenced or indented) in `markdown`, in order: the N-th is the
/// block whose header shows N.
pub(crate) fn code_blocks(markdown: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for event in Parser::new_ext(markdown, options()) {
        match event {
            Event::Start(Tag::CodeBlock(_)) => current = Some(String::new()),
            Event::Text(t) => {
                if let Some(code) = &mut current {
                    code.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => out.extend(current.take()),
            _ => {}
        }
    }
    out
}
