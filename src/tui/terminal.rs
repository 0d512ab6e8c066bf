//! Entering and leaving full-screen mode: raw mode, alternate screen, bracketed paste, mouse
//! capture and keyboard enhancement, restored on every way out (return, error, panic, signal).

use std::io::{BufWriter, Stdout, Write, stdout};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use crossterm::event::{
    DisableBracketedPaste, DisableFocusChange, DisableMouseCapture, EnableBracketedPaste,
    EnableFocusChange, EnableMouseCapture, KeyboardEnhancementFlags, PopKeyboardEnhancementFlags,
    PushKeyboardEnhancementFlags,
};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::layout::Rect;
use ratatui::{Terminal, TerminalOptions, Viewport};

use super::backend::CellWriter;

/// The terminal the UI draws on, written through a buffer as large as a frame usually is
/// (std's 1 KB stdout buffer would send one frame in several writes to the pty).
pub type Tui = Terminal<CellWriter<BufWriter<Stdout>>>;

static ACTIVE: AtomicBool = AtomicBool::new(false);
static MOUSE: AtomicBool = AtomicBool::new(false);
/// Whether the kitty keyboard flags were pushed (and so must be popped).
static KEYBOARD: AtomicBool = AtomicBool::new(false);
/// Whether focus reports were turned on (and so must be turned off).
static FOCUS: AtomicBool = AtomicBool::new(false);
/// Whether the window title was set (and so must be given back).
static TITLE: AtomicBool = AtomicBool::new(false);
static PANICKED: AtomicBool = AtomicBool::new(false);
static HOOK: Once = Once::new();

/// Restores the terminal when dropped.
pub struct TerminalGuard;

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore();
    }
}

/// Enters full-screen mode and installs the panic hook (which leaves tool calls' panics to the
/// tool registry); the guard restores the terminal. Colours are written only when `colors` (a
/// monochrome theme, as under `NO_COLOR`, has none to write).
pub fn init(mouse: bool, colors: bool) -> std::io::Result<(Tui, TerminalGuard)> {
    install_panic_hook();
    enable_raw_mode()?;
    ACTIVE.store(true, Ordering::SeqCst);
    let guard = TerminalGuard;
    let mut out = stdout();
    execute!(out, EnterAlternateScreen, EnableBracketedPaste)?;
    // Only a terminal that says it speaks the kitty keyboard protocol gets the flags: it then
    // tells Shift+Enter from Enter (and Esc from Alt), and the help and the input's title say
    // so. An error (no answer to the query) counts as no.
    if crossterm::terminal::supports_keyboard_enhancement().unwrap_or(false)
        && execute!(
            out,
            PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
        )
        .is_ok()
    {
        KEYBOARD.store(true, Ordering::SeqCst);
    }
    // Terminals that report focus say when the person looked away (`notify`); the others
    // ignore this.
    if execute!(out, EnableFocusChange).is_ok() {
        FOCUS.store(true, Ordering::SeqCst);
    }
    if mouse {
        execute!(out, EnableMouseCapture)?;
        MOUSE.store(true, Ordering::SeqCst);
    }
    // No `clear()`: it asks the terminal for the cursor position, which some (and test
    // emulators) never answer; the alternate screen starts empty anyway. The viewport is fixed
    // to the terminal's size, which the event loop follows on each resize event: a full-screen
    // viewport asked the terminal for its size before every frame (opening /dev/tty each time).
    let (cols, rows) = crossterm::terminal::size()?;
    let terminal = Terminal::with_options(
        CellWriter::new(BufWriter::with_capacity(64 * 1024, stdout()), colors),
        TerminalOptions {
            viewport: Viewport::Fixed(Rect::new(0, 0, cols, rows)),
        },
    )?;
    Ok((terminal, guard))
}

/// Leaves full-screen mode; safe to call more than once and from any thread.
pub fn restore() {
    if !ACTIVE.swap(false, Ordering::SeqCst) {
        return;
    }
    let mut out = stdout();
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    if KEYBOARD.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, PopKeyboardEnhancementFlags);
    }
    if FOCUS.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableFocusChange);
    }
    if TITLE.swap(false, Ordering::SeqCst) {
        // The title stack's top is what the terminal showed before (xterm's XTWINOPS pop);
        // terminals without the stack ignore it, so a plain title goes first.
        let _ = out.write_all(b"\x1b]2;\x07\x1b[23;2t");
    }
    let _ = execute!(
        out,
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
    let _ = disable_raw_mode();
    let _ = out.flush();
}

/// Whether the terminal speaks the kitty keyboard protocol (the flags are pushed): Shift+Enter
/// then reaches MiniClaw as itself.
pub fn keyboard_enhanced() -> bool {
    KEYBOARD.load(Ordering::SeqCst)
}

/// Writes what the notifier asks for (a title, OSC 9, a bell) straight to the terminal; the
/// first title pushes the one the terminal showed, so leaving gives it back.
pub fn write_signal(bytes: &str) -> std::io::Result<()> {
    let mut out = stdout();
    if !ACTIVE.load(Ordering::SeqCst) {
        return Ok(());
    }
    if bytes.starts_with("\x1b]2;") && !TITLE.swap(true, Ordering::SeqCst) {
        out.write_all(b"\x1b[22;2t")?;
    }
    out.write_all(bytes.as_bytes())?;
    out.flush()
}

/// Resolves when the terminal hangs up (its window closed), even if no SIGHUP reaches the
/// process: a thread sleeps in `poll` on standard input, which reports the hang-up. Nothing
/// wakes while the terminal lives. (crossterm's reader would otherwise spin on a dead terminal.)
pub fn hangup() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    #[cfg(unix)]
    {
        let spawned = std::thread::Builder::new()
            .name("tty-hangup".into())
            .spawn(move || {
                loop {
                    let mut fd = libc::pollfd {
                        fd: libc::STDIN_FILENO,
                        events: 0,
                        revents: 0,
                    };
                    // SAFETY: one valid pollfd, and a count of one.
                    let n = unsafe { libc::poll(&mut fd, 1, -1) };
                    if n < 0 {
                        if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
                        {
                            continue;
                        }
                        return;
                    }
                    if fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                        let _ = tx.send(());
                        return;
                    }
                }
            });
        if spawned.is_err() {
            // Without the watcher, SIGHUP still ends the program.
        }
    }
    #[cfg(not(unix))]
    drop(tx);
    rx
}

/// Whether any thread panicked since start (the event loop then stops).
pub fn panicked() -> bool {
    PANICKED.load(Ordering::SeqCst)
}

fn install_panic_hook() {
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            // A tool call's panic is caught and becomes that call's error: the UI goes on, so
            // the screen stays and nothing is printed over it; the log keeps the details.
            if crate::tools::panic_guard::in_tool_call() {
                tracing::error!(panic = %info, "panic in a tool call; the call fails, the session goes on");
                return;
            }
            PANICKED.store(true, Ordering::SeqCst);
            // Restore first so the panic message lands on a normal screen.
            restore();
            previous(info);
        }));
    });
}

/// Copies `text` to the clipboard with OSC 52 (wrapped for tmux so it passes through).
pub fn copy_osc52(text: &str) -> std::io::Result<()> {
    let mut out = stdout();
    // The plain sequence works in terminals and in tmux with `set-clipboard on`; the wrapped one
    // reaches the outer terminal through tmux with `allow-passthrough on`.
    out.write_all(osc52_sequence(text, false).as_bytes())?;
    if std::env::var_os("TMUX").is_some() {
        out.write_all(osc52_sequence(text, true).as_bytes())?;
    }
    out.flush()
}

/// The OSC 52 escape sequence that sets the clipboard to `text`.
pub fn osc52_sequence(text: &str, tmux: bool) -> String {
    use base64::Engine;
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    let osc = format!("\x1b]52;c;{encoded}\x07");
    if tmux {
        // tmux passes a sequence through when wrapped in DCS with ESC doubled.
        format!("\x1bPtmux;{}\x1b\\", osc.replace('\x1b', "\x1b\x1b"))
    } else {
        osc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_encodes_base64_and_wraps_for_tmux() {
        assert_eq!(osc52_sequence("hi", false), "\x1b]52;c;aGk=\x07");
        let t = osc52_sequence("hi", true);
        assert!(t.starts_with("\x1bPtmux;\x1b\x1b]52;c;aGk=") && t.ends_with("\x1b\\"));
    }

    #[test]
    fn restore_without_init_does_nothing() {
        restore();
        assert!(!ACTIVE.load(Ordering::SeqCst));
    }
}
