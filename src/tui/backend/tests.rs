use proptest::prelude::*;
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::{CellWriter, encode};

/// A writer whose bytes the test reads after the backend wrote them.
#[derive(Clone, Default)]
struct Shared(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for Shared {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

const W: u16 = 12;
const H: u16 = 4;

/// The screen a terminal shows after `bytes`, as vt100 keeps it (symbols and attributes).
fn shown(bytes: &[u8]) -> Vec<u8> {
    let mut parser = vt100::Parser::new(H, W, 0);
    parser.process(bytes);
    parser.screen().contents_formatted()
}

/// Each cell a terminal shows after `bytes`: its text (a blank never written counts as a
/// space) and attributes.
fn cells(bytes: &[u8]) -> Vec<String> {
    let mut parser = vt100::Parser::new(H, W, 0);
    parser.process(bytes);
    let screen = parser.screen();
    let mut out = Vec::new();
    for row in 0..H {
        for col in 0..W {
            let cell = screen.cell(row, col).expect("inside the screen");
            let text = match cell.contents() {
                "" => " ",
                text => text,
            };
            out.push(format!(
                "{row},{col} {text:?} {:?} {:?} b{} d{} i{} u{} r{}",
                cell.fgcolor(),
                cell.bgcolor(),
                cell.bold(),
                cell.dim(),
                cell.italic(),
                cell.underline(),
                cell.inverse()
            ));
        }
    }
    out
}

/// What crossterm's own backend writes for the changes from `prev` to `next`.
fn crossterm_bytes(prev: &Buffer, next: &Buffer) -> Vec<u8> {
    let out = Shared::default();
    let mut backend = CrosstermBackend::new(out.clone());
    backend
        .draw(prev.diff(next).into_iter())
        .expect("writing to memory cannot fail");
    out.0.take()
}

/// What [`CellWriter`] writes for the same changes.
fn our_bytes(prev: &Buffer, next: &Buffer, colors: bool) -> Vec<u8> {
    let out = Shared::default();
    let mut backend = CellWriter::new(out.clone(), colors);
    backend
        .draw(prev.diff(next).into_iter())
        .expect("writing to memory cannot fail");
    out.0.take()
}

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![
        (0..17usize).prop_map(|i| [
            Color::Reset,
            Color::Black,
            Color::Red,
            Color::Green,
            Color::Yellow,
            Color::Blue,
            Color::Magenta,
            Color::Cyan,
            Color::Gray,
            Color::DarkGray,
            Color::LightRed,
            Color::LightGreen,
            Color::LightYellow,
            Color::LightBlue,
            Color::LightMagenta,
            Color::LightCyan,
            Color::White,
        ][i]),
        any::<u8>().prop_map(Color::Indexed),
        any::<(u8, u8, u8)>().prop_map(|(r, g, b)| Color::Rgb(r, g, b)),
    ]
}

fn style() -> impl Strategy<Value = Style> {
    (color(), color(), color(), any::<u16>()).prop_map(|(fg, bg, underline, bits)| {
        Style::new()
            .fg(fg)
            .bg(bg)
            .underline_color(underline)
            .add_modifier(Modifier::from_bits_truncate(bits))
    })
}

/// `buf` with every colour taken out: what a terminal without colour should show.
fn colourless(buf: &Buffer) -> Buffer {
    let mut out = buf.clone();
    for cell in &mut out.content {
        cell.fg = Color::Reset;
        cell.bg = Color::Reset;
        cell.underline_color = Color::Reset;
    }
    out
}

/// A buffer written by a few strings: narrow, wide (CJK), box drawing and accented text.
fn buffer() -> impl Strategy<Value = Buffer> {
    let piece = prop_oneof![
        Just("ab"),
        Just("─│╭"),
        Just("漢字"),
        Just("é x"),
        Just("  "),
        Just("z"),
    ];
    prop::collection::vec((0..W, 0..H, piece, style()), 0..12).prop_map(|writes| {
        let mut buf = Buffer::empty(Rect::new(0, 0, W, H));
        for (x, y, text, style) in writes {
            buf.set_stringn(x, y, text, usize::from(W - x), style);
        }
        buf
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// A terminal shows the same screen whether a frame's changes were written by crossterm's
    /// backend or by this one, from the same screen before.
    #[test]
    fn the_terminal_shows_what_crossterms_backend_would_show(prev in buffer(), next in buffer()) {
        let blank = Buffer::empty(prev.area);
        let mut theirs = crossterm_bytes(&blank, &prev);
        let mut ours = theirs.clone();
        theirs.extend(crossterm_bytes(&prev, &next));
        ours.extend(our_bytes(&prev, &next, true));
        prop_assert_eq!(shown(&ours), shown(&theirs));
        // And the same cells as drawing the next frame whole, where vt100 can tell (it keeps
        // one intensity, the last set, and it does not know underline colours, reading their
        // numbers as attributes).
        let readable = |b: &Buffer| {
            b.content.iter().all(|c| {
                !c.modifier.contains(Modifier::BOLD | Modifier::DIM)
                    && c.underline_color == Color::Reset
            })
        };
        if readable(&prev) && readable(&next) {
            prop_assert_eq!(cells(&ours), cells(&our_bytes(&blank, &next, true)));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Without colour, the screen is what crossterm's backend shows for the same frames with
    /// every colour taken out: the symbols and attributes, and no colour escape.
    #[test]
    fn without_colour_the_screen_keeps_its_symbols_and_attributes(
        prev in buffer(),
        next in buffer(),
    ) {
        let blank = Buffer::empty(prev.area);
        let ours = [our_bytes(&blank, &prev, false), our_bytes(&prev, &next, false)].concat();
        let (plain_prev, plain_next) = (colourless(&prev), colourless(&next));
        let theirs = [
            crossterm_bytes(&blank, &plain_prev),
            crossterm_bytes(&plain_prev, &plain_next),
        ]
        .concat();
        // The cells, not the cursor: cells whose colour alone changed are written here again,
        // so the cursor may end elsewhere. (vt100 keeps one intensity, the last set: a cell
        // both bold and dim may differ by the order the two paths set them in.)
        let plain = |b: &Buffer| {
            b.content
                .iter()
                .all(|c| !c.modifier.contains(Modifier::BOLD | Modifier::DIM))
        };
        if plain(&prev) && plain(&next) {
            prop_assert_eq!(cells(&ours), cells(&theirs));
        }
        let text = String::from_utf8_lossy(&ours);
        for colour in ["[38;", "[48;", "[58;", ";38;", ";48;", ";58;"] {
            prop_assert!(!text.contains(colour), "{colour} in {text:?}");
        }
    }
}

#[test]
fn escapes_are_as_short_as_the_changes_allow() {
    let area = Rect::new(0, 0, 6, 2);
    let prev = Buffer::empty(area);
    let mut next = Buffer::empty(area);
    next.set_string(1, 0, "ab", Style::new().fg(Color::Red).bold());
    next.set_string(0, 1, "c", Style::new().bg(Color::Rgb(1, 2, 3)));
    let mut bytes = Vec::new();
    encode(&mut bytes, prev.diff(&next).into_iter(), true);
    assert_eq!(
        String::from_utf8(bytes).expect("ASCII"),
        // One move for the contiguous pair, one for the next row; bold dropped with one reset.
        "\x1b[1;2H\x1b[1m\x1b[38;5;1;49mab\x1b[2;1H\x1b[22m\x1b[39;48;2;1;2;3mc\
         \x1b[39m\x1b[49m\x1b[59m\x1b[0m"
    );
}

#[test]
fn without_colour_only_attributes_and_symbols_are_written() {
    let area = Rect::new(0, 0, 4, 1);
    let mut next = Buffer::empty(area);
    next.set_string(
        0,
        0,
        "hi",
        Style::new()
            .fg(Color::Red)
            .bg(Color::Blue)
            .underline_color(Color::Green)
            .add_modifier(Modifier::REVERSED),
    );
    let bytes = our_bytes(&Buffer::empty(area), &next, false);
    assert_eq!(
        String::from_utf8(bytes).expect("ASCII"),
        "\x1b[1;1H\x1b[7mhi\x1b[0m"
    );
}

#[test]
fn dropping_bold_keeps_dim_and_dropping_dim_keeps_bold() {
    let area = Rect::new(0, 0, 3, 1);
    let mut next = Buffer::empty(area);
    next.set_string(
        0,
        0,
        "a",
        Style::new().add_modifier(Modifier::BOLD | Modifier::DIM),
    );
    next.set_string(1, 0, "b", Style::new().add_modifier(Modifier::DIM));
    next.set_string(2, 0, "c", Style::new().add_modifier(Modifier::BOLD));
    let bytes = our_bytes(&Buffer::empty(area), &next, true);
    let text = String::from_utf8(bytes).expect("ASCII");
    assert!(
        text.starts_with("\x1b[1;1H\x1b[1;2ma\x1b[22;2mb\x1b[22;1mc"),
        "{text:?}"
    );
}
