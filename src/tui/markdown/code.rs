//! Code blocks: highlighted by language with syntect (bat's syntaxes and themes, from two-face)
//! and drawn in a frame that shows the language and the block's number. Colours are RGB on a
//! truecolor terminal, otherwise the nearest of xterm's 256.

use std::cell::{Cell, RefCell};
use std::fmt;
use std::sync::OnceLock;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Span;
use syntect::highlighting::{
    FontStyle, HighlightIterator, HighlightState, Highlighter, Theme as CodeTheme,
};
use syntect::parsing::{ParseState, ScopeStack, SyntaxReference, SyntaxSet};
use two_face::re_exports::syntect;
use two_face::theme::EmbeddedThemeName;
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use super::linebreak::Row;
use crate::tui::theme::{ColorDepth, Theme};

/// bat's syntax set, loaded on the first code block rather than at start-up.
fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(two_face::syntax::extra_newlines)
}

/// The code themes matching MiniClaw's dark and light themes (both are One Half).
fn code_theme(light: bool) -> &'static CodeTheme {
    static THEMES: OnceLock<(CodeTheme, CodeTheme)> = OnceLock::new();
    let (dark, light_theme) = THEMES.get_or_init(|| {
        let set = two_face::theme::extra();
        (
            set.get(EmbeddedThemeName::OneHalfDark).clone(),
            set.get(EmbeddedThemeName::OneHalfLight).clone(),
        )
    });
    if light { light_theme } else { dark }
}

/// The highlighter for each code theme, made once: making one reads the whole theme.
fn highlighter(light: bool) -> &'static Highlighter<'static> {
    static HIGHLIGHTERS: OnceLock<(Highlighter<'static>, Highlighter<'static>)> = OnceLock::new();
    let (dark, light_one) = HIGHLIGHTERS.get_or_init(|| {
        (
            Highlighter::new(code_theme(false)),
            Highlighter::new(code_theme(true)),
        )
    });
    if light { light_one } else { dark }
}

thread_local! {
    /// Code lines highlighted on this thread (tests read it to prove each line is done once).
    static HIGHLIGHTED: Cell<usize> = const { Cell::new(0) };
    /// The language token looked up last and the syntax found for it.
    static LAST_SYNTAX: RefCell<Option<(String, Option<&'static SyntaxReference>)>> =
        const { RefCell::new(None) };
}

#[cfg(test)]
/// How many code lines this thread has highlighted so far.
pub(crate) fn highlighted_lines() -> usize {
    HIGHLIGHTED.with(Cell::get)
}

/// The syntax for a fence's info string (`rust`, `ts`, `Dockerfile`, `toml {.class}`), if known.
fn syntax_for(info: &str) -> Option<&'static SyntaxReference> {
    let token = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("")
        .trim();
    if token.is_empty() {
        return None;
    }
    // Found by a scan of every syntax's names and extensions; a growing block asks again
    // for each new line, so the last answer is kept.
    LAST_SYNTAX.with(|last| {
        let mut last = last.borrow_mut();
        if let Some((held, syntax)) = last.as_ref()
            && held == token
        {
            return *syntax;
        }
        let set = syntaxes();
        let syntax = set
            .find_syntax_by_token(token)
            .or_else(|| set.find_syntax_by_name(token))
            .filter(|s| s.name != "Plain Text");
        *last = Some((token.to_string(), syntax));
        syntax
    })
}

/// The highlighting of a code block that is still growing: the rows of its finished lines and
/// syntect's state after the last of them, so the next line continues from there.
#[derive(Clone, Default)]
pub(crate) struct Resume {
    /// The syntax, the theme's lightness and the colour depth the rows were made for.
    key: (String, bool, ColorDepth),
    /// The finished lines highlighted so far (each ends in a newline).
    src: String,
    rows: Vec<Row>,
    state: Option<(HighlightState, ParseState)>,
}

impl fmt::Debug for Resume {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Resume")
            .field("key", &self.key)
            .field("bytes", &self.src.len())
            .finish()
    }
}

/// The lines of `code` without the newline that ends the last one.
fn source_lines(code: &str) -> Vec<&str> {
    // An empty block has no lines (not one empty line).
    if code.is_empty() {
        return Vec::new();
    }
    code.strip_suffix('\n')
        .unwrap_or(code)
        .split('\n')
        .collect()
}

/// The source lines of `code`, highlighted as `info`'s language: one row each. Finished lines
/// that `resume` already holds (same language, a prefix of `code`) are not highlighted again;
/// when `growing` (an unfinished block) or resumed, `resume` is left holding this block.
pub(crate) fn highlight(
    code: &str,
    info: &str,
    theme: &Theme,
    resume: &mut Option<Resume>,
    growing: bool,
) -> Vec<Row> {
    let syntax = if theme.monochrome {
        None
    } else {
        syntax_for(info)
    };
    let Some(syntax) = syntax else {
        return source_lines(code)
            .into_iter()
            .map(|l| vec![Span::styled(l.replace('\t', "    "), theme.text)])
            .collect();
    };
    let key = (syntax.name.clone(), theme.light, theme.color_depth);
    let held = resume
        .take()
        .filter(|r| r.key == key && code.starts_with(&r.src));
    let resumed = held.is_some();
    let mut r = held.unwrap_or_else(|| Resume {
        key,
        ..Resume::default()
    });
    let highlighter = highlighter(theme.light);
    let (mut hs, mut ps) = r.state.clone().unwrap_or_else(|| {
        (
            HighlightState::new(highlighter, ScopeStack::new()),
            ParseState::new(syntax),
        )
    });
    let mut partial: Option<Row> = None;
    for line in code[r.src.len()..].split_inclusive('\n') {
        HIGHLIGHTED.with(|n| n.set(n.get() + 1));
        if line.ends_with('\n') {
            r.rows
                .push(highlight_line(line, &mut hs, &mut ps, highlighter, theme));
            r.src.push_str(line);
        } else {
            // The unfinished last line is highlighted from a copy of the state: the state
            // kept is the one at its start, where the whole line will be read from again.
            let (mut hs, mut ps) = (hs.clone(), ps.clone());
            partial = Some(highlight_line(line, &mut hs, &mut ps, highlighter, theme));
        }
    }
    r.state = Some((hs, ps));
    let mut rows = r.rows.clone();
    rows.extend(partial);
    if growing || resumed {
        *resume = Some(r);
    }
    rows
}

/// One source line highlighted from `hs` and `ps`, which are left at its end.
fn highlight_line(
    line: &str,
    hs: &mut HighlightState,
    ps: &mut ParseState,
    highlighter: &Highlighter<'_>,
    theme: &Theme,
) -> Row {
    match ps.parse_line(line, syntaxes()) {
        Ok(ops) => HighlightIterator::new(hs, &ops, line, highlighter)
            .map(|(style, text)| span(text, style, theme.color_depth))
            .filter(|s| !s.content.is_empty())
            .collect(),
        // A syntax that fails on a line shows it plainly rather than not at all.
        Err(_) => vec![Span::styled(
            line.trim_end_matches('\n').to_string(),
            theme.text,
        )],
    }
}

/// A highlighted piece as a span (newline and tabs made terminal-safe).
fn span(text: &str, style: syntect::highlighting::Style, depth: ColorDepth) -> Span<'static> {
    let mut out = Style::new();
    if let Some(c) = color(style.foreground, depth) {
        out = out.fg(c);
    }
    if style.font_style.contains(FontStyle::BOLD) {
        out = out.add_modifier(Modifier::BOLD);
    }
    if style.font_style.contains(FontStyle::ITALIC) {
        out = out.add_modifier(Modifier::ITALIC);
    }
    if style.font_style.contains(FontStyle::UNDERLINE) {
        out = out.add_modifier(Modifier::UNDERLINED);
    }
    let text = text.trim_end_matches(['\n', '\r']).replace('\t', "    ");
    Span::styled(text, out)
}

/// A syntect colour for the terminal's depth (a transparent one is no colour).
fn color(c: syntect::highlighting::Color, depth: ColorDepth) -> Option<Color> {
    if c.a == 0 {
        return None;
    }
    Some(match depth {
        ColorDepth::TrueColor => Color::Rgb(c.r, c.g, c.b),
        ColorDepth::Indexed256 => Color::Indexed(nearest_256(c.r, c.g, c.b)),
    })
}

/// The xterm 256-colour index nearest to an RGB colour: from the 6×6×6 cube or the grey ramp
/// (the 16 system colours are left out, terminals set them differently).
pub(crate) fn nearest_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let level = |v: u8| {
        (0..6)
            .min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs())
            .unwrap_or(0)
    };
    let dist = |(r2, g2, b2): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(r, r2) + d(g, g2) + d(b, b2)
    };
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let cube_index = 16 + 36 * ri + 6 * gi + bi;
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let grey_step = (avg.saturating_sub(3) / 10).min(23) as usize;
    let grey_level = (8 + 10 * grey_step) as u8;
    let grey = (grey_level, grey_level, grey_level);
    if dist(grey) < dist(cube) {
        (232 + grey_step) as u8
    } else {
        cube_index as u8
    }
}

/// Cuts a row into pieces, anywhere (code is not prose): the first at most `first` columns,
/// the others at most `rest`.
fn hard_wrap(row: &Row, first: usize, rest_width: usize) -> Vec<Row> {
    let mut width = first.max(1);
    let mut out: Vec<Row> = vec![Vec::new()];
    let mut used = 0;
    for span in row {
        // Printable ASCII (most code) is cut by bytes, one cell each: this runs for every line
        // of a growing block at every frame.
        if span.content.bytes().all(|b| (0x20..0x7f).contains(&b)) {
            let mut rest: &str = &span.content;
            while !rest.is_empty() {
                if used >= width && used > 0 {
                    out.push(Vec::new());
                    used = 0;
                    width = rest_width.max(1);
                }
                let take = (width - used).min(rest.len());
                if let Some(last) = out.last_mut() {
                    last.push(Span::styled(rest[..take].to_string(), span.style));
                }
                used += take;
                rest = &rest[take..];
            }
            continue;
        }
        let mut piece = String::new();
        for g in span.content.graphemes(true) {
            let w = g.width();
            if used + w > width && used > 0 {
                if !piece.is_empty()
                    && let Some(last) = out.last_mut()
                {
                    last.push(Span::styled(std::mem::take(&mut piece), span.style));
                }
                out.push(Vec::new());
                used = 0;
                width = rest_width.max(1);
            }
            used += w;
            piece.push_str(g);
        }
        if !piece.is_empty()
            && let Some(last) = out.last_mut()
        {
            last.push(Span::styled(piece, span.style));
        }
    }
    out
}

/// One source row in the frame, `width` columns wide: `│ code  │`, closed on the right. A line
/// longer than the frame goes on in the rows below, right after the bar (`│rest │`): no space
/// is added to the code, and the missing one tells a continuation from a line of its own.
fn framed_rows(row: &Row, width: usize, border: Style) -> Vec<Row> {
    // "│ " before, " │" after; a continuation has one column more.
    let inner = width.saturating_sub(4).max(1);
    let mut out = Vec::new();
    for (i, piece) in hard_wrap(row, inner, inner + 1).into_iter().enumerate() {
        let room = if i == 0 { inner } else { inner + 1 };
        let used: usize = piece.iter().map(|s| s.content.width()).sum();
        let mut line: Row = Vec::with_capacity(piece.len() + 3);
        line.push(Span::styled(if i == 0 { "│ " } else { "│" }, border));
        line.extend(piece);
        line.push(Span::raw(" ".repeat(room.saturating_sub(used))));
        line.push(Span::styled(" │", border));
        out.push(line);
    }
    out
}

/// A highlighted block in its frame, `width` columns wide and closed on every side: a header
/// with the language and `number` (for `/copy N`), each line between two bars, and a closing
/// line once the fence closed.
pub(crate) fn frame(
    rows: &[Row],
    info: &str,
    number: usize,
    closed: bool,
    width: usize,
    theme: &Theme,
) -> Vec<Row> {
    let width = width.max(8);
    let border = theme.border;
    let lang = info
        .split(|c: char| c.is_whitespace() || c == ',' || c == '{')
        .next()
        .unwrap_or("");
    let num = number.to_string();
    let mut out = Vec::with_capacity(rows.len() + 2);
    // ╭─ lang ───…─── N ─╮
    let fixed = 2 + num.width() + 4;
    let mut header: Row = vec![Span::styled("╭─", border)];
    let mut used = fixed;
    if !lang.is_empty() && fixed + lang.width() + 3 <= width {
        header.push(Span::styled(" ", border));
        header.push(Span::styled(lang.to_string(), theme.accent));
        header.push(Span::styled(" ", border));
        used += lang.width() + 2;
    }
    header.push(Span::styled("─".repeat(width.saturating_sub(used)), border));
    header.push(Span::styled(" ", border));
    header.push(Span::styled(num, theme.muted));
    header.push(Span::styled(" ─╮", border));
    out.push(header);
    for row in rows {
        out.extend(framed_rows(row, width, border));
    }
    if closed {
        out.push(vec![Span::styled(
            format!("╰{}╯", "─".repeat(width - 2)),
            border,
        )]);
    }
    out
}

/// The open tail of a streaming code block (a line still arriving), drawn in the block's frame.
pub(crate) fn tail_rows(tail: &str, width: usize, theme: &Theme) -> Vec<Row> {
    let row = vec![Span::styled(tail.replace('\t', "    "), theme.text)];
    framed_rows(&row, width.max(8), theme.border)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of framed rows.
    fn text(rows: &[Row]) -> Vec<String> {
        rows.iter()
            .map(|r| r.iter().map(|s| s.content.as_ref()).collect())
            .collect()
    }

    #[test]
    fn a_frame_is_closed_on_the_right_and_a_long_line_goes_on_without_an_added_space() {
        let theme = Theme::monochrome();
        let rows = highlight("abcdefghijklmnopqrstu\nok\n", "", &theme, &mut None, false);
        let framed = text(&frame(&rows, "", 1, true, 16, &theme));
        assert_eq!(
            framed,
            [
                "╭────────── 1 ─╮",
                "│ abcdefghijkl │",
                "│mnopqrstu     │",
                "│ ok           │",
                "╰──────────────╯",
            ]
        );
        for line in &framed {
            assert_eq!(line.width(), 16, "{line:?}");
        }
    }

    #[test]
    fn nearest_256_picks_cube_and_grey_colours() {
        assert_eq!(nearest_256(0, 0, 0), 16);
        assert_eq!(nearest_256(255, 255, 255), 231);
        assert_eq!(nearest_256(255, 0, 0), 196);
        assert_eq!(nearest_256(0x80, 0x80, 0x80), 244);
        assert_eq!(nearest_256(0x61, 0xaf, 0xef), 75);
    }

    #[test]
    fn bats_syntaxes_cover_typescript_toml_and_dockerfile() {
        for lang in [
            "ts",
            "typescript",
            "toml",
            "Dockerfile",
            "rust",
            "python",
            "bash",
        ] {
            assert!(syntax_for(lang).is_some(), "{lang}");
        }
        assert!(syntax_for("no-such-language").is_none());
        assert!(syntax_for("").is_none());
    }

    #[test]
    fn light_and_dark_themes_get_their_own_code_colours() {
        let rows = |theme: &Theme| highlight("fn main() {}\n", "rust", theme, &mut None, false);
        let (dark, light) = (rows(&Theme::dark()), rows(&Theme::light()));
        assert_eq!(dark.len(), 1);
        assert_ne!(dark, light);
        // No colours at all without colour.
        let mono = rows(&Theme::monochrome());
        assert!(mono[0].iter().all(|s| s.style.fg.is_none()), "{mono:?}");
    }

    #[test]
    fn hostile_code_is_highlighted_with_every_character_kept() {
        // The model writes what oniguruma (C) matches: long lines, NULs, lone combining marks,
        // unclosed strings and comments, deep nesting, in every language it may name.
        let theme = Theme::dark();
        let long = "\"\\\"".repeat(20_000);
        let code = format!(
            "{long}\n\0\u{301}\u{202e}/* {open}\n{nest}\n'''\n\u{10ffff}x\n",
            open = "(".repeat(5_000),
            nest = "[{(".repeat(3_000),
        );
        let expected: Vec<&str> = code.trim_end_matches('\n').split('\n').collect();
        for lang in [
            "rust", "python", "bash", "ts", "toml", "json", "c", "html", "sql",
        ] {
            let rows = highlight(&code, lang, &theme, &mut None, false);
            assert_eq!(text(&rows), expected, "{lang}");
        }
    }

    #[test]
    fn a_growing_block_highlights_each_line_once() {
        let theme = Theme::dark();
        let mut resume = None;
        let before = highlighted_lines();
        let mut code = String::new();
        for i in 0..50 {
            code.push_str(&format!("let x{i} = {i};\n"));
            highlight(&code, "rust", &theme, &mut resume, true);
        }
        assert_eq!(highlighted_lines() - before, 50);
        let whole = highlight(&code, "rust", &theme, &mut None, false);
        assert_eq!(highlight(&code, "rust", &theme, &mut resume, false), whole);
    }

    #[test]
    fn a_line_seen_unfinished_is_highlighted_from_its_start_once_whole() {
        // The state kept after an unfinished line was the one at its end: the whole line was
        // then read from inside the string it opened, and so was the rest of the block.
        let theme = Theme::dark();
        let mut resume = None;
        let full = "let s = \"ab\";\nlet t = 1;\n";
        highlight("let s = \"a", "rust", &theme, &mut resume, true);
        let streamed = highlight(full, "rust", &theme, &mut resume, true);
        assert_eq!(streamed, highlight(full, "rust", &theme, &mut None, false));
    }

    /// [`hard_wrap`] as it was before plain ASCII was cut by bytes: every span by graphemes.
    fn hard_wrap_by_graphemes(row: &Row, first: usize, rest: usize) -> Vec<Row> {
        let mut width = first.max(1);
        let mut out: Vec<Row> = vec![Vec::new()];
        let mut used = 0;
        for span in row {
            let mut piece = String::new();
            for g in span.content.graphemes(true) {
                let w = g.width();
                if used + w > width && used > 0 {
                    if !piece.is_empty() {
                        out.last_mut()
                            .unwrap()
                            .push(Span::styled(std::mem::take(&mut piece), span.style));
                    }
                    out.push(Vec::new());
                    used = 0;
                    width = rest.max(1);
                }
                used += w;
                piece.push_str(g);
            }
            if !piece.is_empty() {
                out.last_mut()
                    .unwrap()
                    .push(Span::styled(piece, span.style));
            }
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn ascii_cut_by_bytes_is_cut_as_by_graphemes(
            spans in proptest::collection::vec(
                proptest::prop_oneof!["[ -~]{0,12}", "[a-z宽é🦀\u{301} ]{0,6}"],
                0..6,
            ),
            first in 0usize..12,
            rest in 0usize..12,
        ) {
            let row: Row = spans
                .into_iter()
                .enumerate()
                .map(|(i, t)| Span::styled(t, Style::new().fg(Color::Indexed(i as u8))))
                .collect();
            proptest::prop_assert_eq!(
                hard_wrap(&row, first, rest),
                hard_wrap_by_graphemes(&row, first, rest)
            );
        }
    }
}
