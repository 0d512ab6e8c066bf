//! The block renderer's handling of each tag's start and end: paragraphs, headings, quotes, code,
//! lists, footnotes, tables, and the inline styles links and images open.

use std::ops::Range;

use pulldown_cmark::{BlockQuoteKind, CodeBlockKind, Tag, TagEnd};
use ratatui::style::{Modifier, Style};
use ratatui::text::Span;
use unicode_width::UnicodeWidthStr;

use super::{CodeBlock, Container, Renderer, fence_closed};
use crate::tui::markdown::linebreak::Row;
use crate::tui::markdown::table::{self, Table};

impl Renderer<'_> {
    pub(super) fn start(&mut self, tag: Tag<'_>, range: Range<usize>, src: &str) {
        match tag {
            Tag::Paragraph => {
                self.block_start();
                self.in_block = true;
            }
            Tag::Heading { level, .. } => {
                self.block_start();
                self.in_block = true;
                self.heading = Some(level);
            }
            Tag::BlockQuote(kind) => self.start_quote(kind),
            Tag::CodeBlock(kind) => self.start_code(kind, range, src),
            Tag::HtmlBlock => {
                self.block_start();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.block_start();
                self.lists.push(start);
            }
            Tag::Item => self.start_item(),
            Tag::FootnoteDefinition(label) => {
                self.block_start();
                let text = format!("[{label}] ");
                let indent = text.width();
                self.containers.push(Container::Item {
                    marker: vec![Span::styled(text, self.theme.muted)],
                    indent,
                    used: false,
                });
                self.muted += 1;
            }
            Tag::Table(aligns) => {
                self.block_start();
                self.table = Some(Table {
                    aligns,
                    ..Table::default()
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.rows.push(Vec::new());
                }
            }
            Tag::TableCell => {
                self.in_block = true;
            }
            Tag::Emphasis
            | Tag::Strong
            | Tag::Strikethrough
            | Tag::Superscript
            | Tag::Subscript
            | Tag::Link { .. }
            | Tag::Image { .. } => self.start_inline(tag),
            Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.block_start(),
        }
    }

    pub(super) fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.in_block = false;
                self.pending_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.in_block = false;
                self.heading = None;
                self.pending_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
                self.pending_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some(block) = self.code.take() {
                    self.code_block(block);
                }
                self.pending_blank = true;
            }
            TagEnd::HtmlBlock => self.end_html(),
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                self.pending_blank = true;
            }
            TagEnd::Item => self.end_item(),
            TagEnd::FootnoteDefinition => {
                self.flush_inline();
                self.containers.pop();
                self.muted = self.muted.saturating_sub(1);
                self.pending_blank = true;
            }
            TagEnd::Table => self.end_table(),
            TagEnd::TableHead => {
                if let Some(t) = &mut self.table {
                    t.head = t.rows.len();
                }
            }
            TagEnd::TableRow => {}
            TagEnd::TableCell => {
                let cell: Row = self.inline.take().into_iter().flatten().collect();
                if let Some(row) = self.table.as_mut().and_then(|t| t.rows.last_mut()) {
                    row.push(cell);
                }
                self.in_block = false;
            }
            TagEnd::Emphasis
            | TagEnd::Strong
            | TagEnd::Strikethrough
            | TagEnd::Superscript
            | TagEnd::Subscript => self.inline.close(),
            TagEnd::Link => self.end_link(),
            TagEnd::Image => self.end_image(),
            TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.pending_blank = true;
            }
        }
    }

    /// A quote: one more bar, and a GitHub alert's label.
    fn start_quote(&mut self, kind: Option<BlockQuoteKind>) {
        self.block_start();
        self.containers.push(Container::Quote);
        if let Some(kind) = kind {
            let label = match kind {
                BlockQuoteKind::Note => "Note",
                BlockQuoteKind::Tip => "Tip",
                BlockQuoteKind::Important => "Important",
                BlockQuoteKind::Warning => "Warning",
                BlockQuoteKind::Caution => "Caution",
            };
            self.emit(vec![Span::styled(label, self.theme.accent)]);
        }
    }

    /// A code block: collected whole, drawn framed when it ends.
    fn start_code(&mut self, kind: CodeBlockKind<'_>, range: Range<usize>, src: &str) {
        self.block_start();
        let (info, closed) = match kind {
            CodeBlockKind::Fenced(info) => (info.to_string(), fence_closed(&src[range.clone()])),
            CodeBlockKind::Indented => (String::new(), true),
        };
        self.code = Some(CodeBlock {
            info,
            text: String::new(),
            closed,
        });
    }

    /// A list item: its marker (numbered or a bullet by depth) and indent.
    fn start_item(&mut self) {
        self.flush_inline();
        let depth = self.lists.len().saturating_sub(1);
        let text = match self.lists.last_mut() {
            Some(Some(n)) => {
                let marker = format!("{n}. ");
                *n += 1;
                marker
            }
            _ => ["• ", "◦ ", "▪ "][depth % 3].to_string(),
        };
        let indent = text.width();
        let marker = vec![Span::styled(text, self.marker_style())];
        self.containers.push(Container::Item {
            marker,
            indent,
            used: false,
        });
    }

    /// Emphasis, strong, strikethrough, links and images open an inline style.
    fn start_inline(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Emphasis => self
                .inline
                .open(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.inline.open(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self
                .inline
                .open(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.inline.open(Style::new()),
            Tag::Link { dest_url, .. } => {
                let mut style = Style::new().add_modifier(Modifier::UNDERLINED);
                if let Some(fg) = self.theme.accent.fg {
                    style = style.fg(fg);
                }
                self.inline.open_link(&dest_url, style);
            }
            Tag::Image { dest_url, .. } => {
                self.text("[image: ", Some(self.theme.muted));
                self.inline.open_link(&dest_url, self.theme.muted);
            }
            _ => {}
        }
    }

    fn end_html(&mut self) {
        if let Some(html) = self.html.take() {
            for line in html.trim_end_matches('\n').split('\n') {
                let span = Span::styled(line.to_string(), self.theme.muted);
                self.emit_wrapped(&[span]);
            }
        }
        self.pending_blank = true;
    }

    fn end_item(&mut self) {
        self.flush_inline();
        // An empty item still shows its marker.
        if let Some(Container::Item {
            marker,
            used: false,
            ..
        }) = self.containers.last()
        {
            let marker = marker.clone();
            self.containers.pop();
            let mut line = self.prefix(false);
            line.extend(marker);
            self.push_line(line);
        } else {
            self.containers.pop();
        }
    }

    fn end_table(&mut self) {
        if let Some(t) = self.table.take() {
            let width = self.avail();
            for row in table::render(&t, width, self.theme) {
                self.emit(row);
            }
        }
        self.pending_blank = true;
    }

    fn end_link(&mut self) {
        if let Some(url) = self.inline.close_link() {
            self.text(&format!(" ({url})"), Some(self.theme.muted));
        }
    }

    fn end_image(&mut self) {
        let url = self.inline.close_link();
        self.text("]", Some(self.theme.muted));
        if let Some(url) = url {
            self.text(&format!(" ({url})"), Some(self.theme.muted));
        }
    }
}
