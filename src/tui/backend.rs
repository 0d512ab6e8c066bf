//! The terminal backend the UI draws through: crossterm's for everything but a frame's changed
//! cells, which are encoded here straight into bytes.
//!
//! crossterm's backend formats every changed cell through `fmt` (a `write!` for the cursor move,
//! another for the colours, another for the symbol). A streamed answer scrolls the conversation,
//! so most of its ~3,500 cells change at every frame, and that formatting was about 5% of the
//! program's CPU samples while streaming. The escapes written here have the same effect: the cursor
//! moves only where the cells are not contiguous, attributes change only when a cell's differ
//! from the last one's (the same removals crossterm's backend makes), and colours are set as
//! crossterm sets them, or not at all when `NO_COLOR` is set (crossterm then left its colour
//! escapes empty: `ESC [ ; m`, which resets every attribute).

use std::io::{self, Write};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::{Color, Modifier};

/// The most room kept between frames for a frame's bytes.
const KEPT_BYTES: usize = 256 * 1024;

/// crossterm's backend with the cells' encoding done here.
pub struct CellWriter<W: Write> {
    inner: CrosstermBackend<W>,
    /// Whether colours are written (the theme has some: not under `NO_COLOR`).
    colors: bool,
    /// The frame's bytes, kept between frames so encoding one allocates nothing.
    bytes: Vec<u8>,
}

impl<W: Write> CellWriter<W> {
    /// A backend writing to `writer`, with colours or without.
    pub fn new(writer: W, colors: bool) -> Self {
        Self {
            inner: CrosstermBackend::new(writer),
            colors,
            bytes: Vec::new(),
        }
    }
}

impl<W: Write> Backend for CellWriter<W> {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.clear();
        encode(&mut bytes, content, self.colors);
        // crossterm's backend passes writes through to its writer.
        let written = self.inner.write_all(&bytes);
        // A whole screen redrawn in RGB on a large terminal can take a megabyte; that is not
        // kept for the frames after it, which are a few KB.
        if bytes.capacity() > KEPT_BYTES {
            bytes = Vec::new();
        }
        self.bytes = bytes;
        written
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        self.inner.get_cursor_position()
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        self.inner.set_cursor_position(position)
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }
}

/// Appends the escapes and symbols that show `content` (cells with their positions, in the
/// order a buffer's diff gives them), and at the end resets colours and attributes.
pub fn encode<'a>(
    out: &mut Vec<u8>,
    content: impl Iterator<Item = (u16, u16, &'a Cell)>,
    colors: bool,
) {
    let mut fg = Color::Reset;
    let mut bg = Color::Reset;
    let mut underline = Color::Reset;
    let mut modifier = Modifier::empty();
    let mut last: Option<(u16, u16)> = None;
    for (x, y, cell) in content {
        // The cursor is where the last symbol left it only after a narrow one on the same row.
        if !matches!(last, Some((lx, ly)) if ly == y && lx.checked_add(1) == Some(x)) {
            out.extend_from_slice(b"\x1b[");
            push_number(out, u32::from(y) + 1);
            out.push(b';');
            push_number(out, u32::from(x) + 1);
            out.push(b'H');
        }
        last = Some((x, y));
        if cell.modifier != modifier {
            let mut sgr = Sgr::new(out);
            modifier_change(&mut sgr, modifier, cell.modifier);
            sgr.end();
            modifier = cell.modifier;
        }
        if colors && (cell.fg != fg || cell.bg != bg) {
            let mut sgr = Sgr::new(out);
            sgr.color(Layer::Foreground, cell.fg);
            sgr.color(Layer::Background, cell.bg);
            sgr.end();
            fg = cell.fg;
            bg = cell.bg;
        }
        if colors && cell.underline_color != underline {
            let mut sgr = Sgr::new(out);
            sgr.color(Layer::Underline, cell.underline_color);
            sgr.end();
            underline = cell.underline_color;
        }
        out.extend_from_slice(cell.symbol().as_bytes());
    }
    if colors {
        out.extend_from_slice(b"\x1b[39m\x1b[49m\x1b[59m");
    }
    out.extend_from_slice(b"\x1b[0m");
}

/// The attribute changes from `from` to `to`, as crossterm's backend makes them: removals
/// first (bold and dim share one reset, after which the one kept is set again), then additions.
fn modifier_change(sgr: &mut Sgr<'_>, from: Modifier, to: Modifier) {
    let removed = from - to;
    if removed.contains(Modifier::REVERSED) {
        sgr.param(27);
    }
    let reset_intensity = removed.intersects(Modifier::BOLD | Modifier::DIM);
    if reset_intensity {
        sgr.param(22);
        if to.contains(Modifier::DIM) {
            sgr.param(2);
        }
        if to.contains(Modifier::BOLD) {
            sgr.param(1);
        }
    }
    for (flag, code) in [
        (Modifier::ITALIC, 23),
        (Modifier::UNDERLINED, 24),
        (Modifier::CROSSED_OUT, 29),
        (Modifier::HIDDEN, 28),
    ] {
        if removed.contains(flag) {
            sgr.param(code);
        }
    }
    if removed.intersects(Modifier::SLOW_BLINK | Modifier::RAPID_BLINK) {
        sgr.param(25);
    }
    let added = to - from;
    // After the intensity reset, bold and dim were set again above.
    let set_again = if reset_intensity {
        Modifier::BOLD | Modifier::DIM
    } else {
        Modifier::empty()
    };
    for (flag, code) in [
        (Modifier::REVERSED, 7),
        (Modifier::BOLD, 1),
        (Modifier::ITALIC, 3),
        (Modifier::UNDERLINED, 4),
        (Modifier::DIM, 2),
        (Modifier::CROSSED_OUT, 9),
        (Modifier::HIDDEN, 8),
        (Modifier::SLOW_BLINK, 5),
        (Modifier::RAPID_BLINK, 6),
    ] {
        if added.contains(flag) && !set_again.contains(flag) {
            sgr.param(code);
        }
    }
}

/// Which colour an SGR sets.
#[derive(Clone, Copy)]
enum Layer {
    Foreground,
    Background,
    Underline,
}

/// One SGR escape (`ESC [ p ; p ... m`) being written; nothing is written if it gets no
/// parameter.
struct Sgr<'a> {
    out: &'a mut Vec<u8>,
    start: usize,
}

impl<'a> Sgr<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        let start = out.len();
        Self { out, start }
    }

    fn param(&mut self, n: u32) {
        self.out.extend_from_slice(if self.out.len() == self.start {
            b"\x1b["
        } else {
            b";"
        });
        push_number(self.out, n);
    }

    /// A colour as crossterm writes it: the 16 named ones and indexed ones from the 256-colour
    /// palette, the others as RGB.
    fn color(&mut self, layer: Layer, color: Color) {
        let base = match layer {
            Layer::Foreground => 30,
            Layer::Background => 40,
            Layer::Underline => 50,
        };
        let index = match color {
            Color::Reset => return self.param(base + 9),
            Color::Black => 0,
            Color::Red => 1,
            Color::Green => 2,
            Color::Yellow => 3,
            Color::Blue => 4,
            Color::Magenta => 5,
            Color::Cyan => 6,
            Color::Gray => 7,
            Color::DarkGray => 8,
            Color::LightRed => 9,
            Color::LightGreen => 10,
            Color::LightYellow => 11,
            Color::LightBlue => 12,
            Color::LightMagenta => 13,
            Color::LightCyan => 14,
            Color::White => 15,
            Color::Indexed(i) => i,
            Color::Rgb(r, g, b) => {
                self.param(base + 8);
                self.param(2);
                for c in [r, g, b] {
                    self.param(u32::from(c));
                }
                return;
            }
        };
        self.param(base + 8);
        self.param(5);
        self.param(u32::from(index));
    }

    fn end(self) {
        if self.out.len() != self.start {
            self.out.push(b'm');
        }
    }
}

/// Appends `n` in decimal.
fn push_number(out: &mut Vec<u8>, n: u32) {
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut n = n;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

#[cfg(test)]
mod tests;
