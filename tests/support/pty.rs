//! The one pseudo-terminal harness: the real binary in a pseudo-terminal, its screen read through
//! a vt100 emulator, with a home of its own (config, data) and none of the caller's keys or
//! MiniClaw settings. Every wait is on something seen (the screen, the log, the process), with
//! a deadline. (Test-only, beside `support/mod.rs`: the examples include that one, and only
//! tests know where the binary is.)

#![allow(dead_code)]

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

use crate::support::wait;
pub use crate::support::wait::WAIT;

/// Enter as a terminal sends it.
pub const ENTER: &str = "\r";
/// Esc.
pub const ESC: &str = "\x1b";
/// Ctrl+D.
pub const CTRL_D: &str = "\x04";

/// What MiniClaw logs (at `debug`, the level these runs log at) for a key the approval dialog
/// holds back because the dialog has only just appeared.
const KEY_HELD_BACK: &str = "not taken as its answer";

/// `miniclaw-tui` to be started in a pseudo-terminal: a clean environment (no `DEEPSEEK_*`,
/// `MINICLAW_*` or `SERPAPI*` variable of the caller), `HOME` and the XDG folders in a home of
/// its own, the log at `debug`, and a 140×40 terminal unless `size` says otherwise.
pub struct Launch {
    cmd: CommandBuilder,
    data_home: PathBuf,
    rows: u16,
    cols: u16,
    kitty: bool,
}

impl Launch {
    /// The binary in `cwd`, with `HOME` and the XDG folders inside `home`.
    pub fn new(home: &Path, cwd: &Path) -> Self {
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_miniclaw-tui"));
        cmd.cwd(cwd);
        for (k, _) in std::env::vars_os() {
            let k = k.to_string_lossy().to_string();
            if k.starts_with("DEEPSEEK_") || k.starts_with("MINICLAW_") || k.starts_with("SERPAPI")
            {
                cmd.env_remove(k);
            }
        }
        let data_home = home.join(".local/share");
        cmd.env("HOME", home);
        cmd.env("XDG_CONFIG_HOME", home.join(".config"));
        cmd.env("XDG_DATA_HOME", &data_home);
        cmd.env("XDG_STATE_HOME", home.join(".local/state"));
        cmd.env("TERM", "xterm-256color");
        cmd.env("MINICLAW_LOG", "debug");
        Self {
            cmd,
            data_home,
            rows: 40,
            cols: 140,
            kitty: false,
        }
    }

    /// The terminal answers the kitty keyboard protocol's query (as kitty, WezTerm or foot
    /// do); without this it answers only the device attributes query, as a terminal without
    /// the protocol does.
    pub fn kitty_keyboard(mut self) -> Self {
        self.kitty = true;
        self
    }

    /// The full-screen UI as most tests run it: in `dir`, its home in `dir/home` (made here),
    /// on the workspace `dir/ws`, without mouse capture, talking to the model server at
    /// `base_url` (with no key: add one with `key`).
    pub fn ui(dir: &Path, base_url: &str) -> Self {
        let home = dir.join("home");
        std::fs::create_dir_all(&home).unwrap();
        Self::new(&home, dir)
            .args(["--no-mouse", "--workspace"])
            .arg(dir.join("ws"))
            .env("DEEPSEEK_BASE_URL", base_url)
    }

    /// `DEEPSEEK_API_KEY`.
    pub fn key(self, key: &str) -> Self {
        self.env("DEEPSEEK_API_KEY", key)
    }

    /// One more argument.
    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.cmd.arg(arg);
        self
    }

    /// More arguments.
    pub fn args<S: AsRef<std::ffi::OsStr>>(mut self, args: impl IntoIterator<Item = S>) -> Self {
        self.cmd.args(args);
        self
    }

    /// An environment variable (this one wins over what `new` set).
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        if key == "XDG_DATA_HOME" {
            self.data_home = PathBuf::from(value.as_ref());
        }
        self.cmd.env(key, value);
        self
    }

    /// No such environment variable.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// The terminal's size.
    pub fn size(mut self, rows: u16, cols: u16) -> Self {
        self.rows = rows;
        self.cols = cols;
        self
    }

    /// Starts it.
    pub fn start(self) -> Pty {
        Pty::start(self)
    }
}

/// A program running in a pseudo-terminal, with everything it printed.
pub struct Pty {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    // Shared with the reader, which answers the terminal queries a real terminal answers.
    writer: Arc<Mutex<Box<dyn Write + Send>>>,
    child: Box<dyn Child + Send + Sync>,
    reader: Option<JoinHandle<()>>,
    log: PathBuf,
    // Kept so the pty stays open while the child runs (and to resize it).
    master: Box<dyn MasterPty + Send>,
}

impl Pty {
    fn start(launch: Launch) -> Self {
        let Launch {
            cmd,
            data_home,
            rows,
            cols,
            kitty,
        } = launch;
        let pty = native_pty_system()
            .openpty(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let child = pty.slave.spawn_command(cmd).unwrap();
        // Only the child holds the slave now, so the reader sees the end when it exits.
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer: Arc<Mutex<Box<dyn Write + Send>>> =
            Arc::new(Mutex::new(pty.master.take_writer().unwrap()));
        let parser = Arc::new(Mutex::new(vt100::Parser::new(rows, cols, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (p, r, w) = (parser.clone(), raw.clone(), writer.clone());
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            // The end of the output so far, so a query split across two reads is still seen.
            let mut tail: Vec<u8> = Vec::new();
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        p.lock().unwrap().process(&buf[..n]);
                        r.lock().unwrap().extend_from_slice(&buf[..n]);
                        tail.extend_from_slice(&buf[..n]);
                        answer_queries(&mut tail, kitty, &w);
                    }
                }
            }
        });
        Self {
            parser,
            raw,
            writer,
            child,
            reader: Some(reader),
            log: data_home.join("miniclaw/miniclaw.log"),
            master: pty.master,
        }
    }

    /// Resizes the terminal, as a person dragging its window does (the program gets SIGWINCH),
    /// and the screen the tests read with it.
    pub fn resize(&self, rows: u16, cols: u16) {
        self.parser
            .lock()
            .unwrap()
            .screen_mut()
            .set_size(rows, cols);
        self.master
            .resize(PtySize {
                rows,
                cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
    }

    /// The program's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// The screen as text, one line per row.
    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// The characters drawn in reverse video, row by row (a row's runs joined, rows by `|`):
    /// what a highlight marks.
    pub fn reversed(&self) -> String {
        let parser = self.parser.lock().unwrap();
        let screen = parser.screen();
        let (rows, cols) = screen.size();
        let mut out = Vec::new();
        for row in 0..rows {
            let text: String = (0..cols)
                .filter_map(|col| screen.cell(row, col))
                .filter(|c| c.inverse())
                .map(|c| c.contents().to_string())
                .collect();
            if !text.is_empty() {
                out.push(text);
            }
        }
        out.join("|")
    }

    /// Everything the program wrote to the terminal.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// What the program logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Sends bytes as if typed.
    pub fn send(&mut self, keys: &str) {
        let mut writer = self.writer.lock().unwrap();
        writer.write_all(keys.as_bytes()).unwrap();
        writer.flush().unwrap();
    }

    /// Types `text` then Enter (separately, so Enter is not taken as part of a paste).
    pub fn submit(&mut self, text: &str) {
        self.send(text);
        self.wait_for(text);
        self.send(ENTER);
    }

    /// Waits until `text` is on the screen; fails with the screen shown.
    pub fn wait_for(&self, text: &str) {
        self.wait_until(&format!("{text:?} on the screen"), |s| s.contains(text));
    }

    /// Waits until `pred` holds for the screen text.
    pub fn wait_until(&self, what: &str, pred: impl Fn(&str) -> bool) {
        self.wait_on(what, || pred(&self.screen()).then_some(()));
    }

    /// Waits until `ready` gives a value (anything the test can look at: a file, the requests
    /// a server saw); fails naming `what`, with the screen shown.
    pub fn wait_on<T>(&self, what: &str, ready: impl FnMut() -> Option<T>) -> T {
        wait::poll(what, WAIT, ready, || {
            format!("the screen:\n{}", self.screen())
        })
    }

    /// Answers the approval dialog on the screen with `key` once the dialog takes answers (it
    /// holds back keys for a moment after it appears, so a key typed for something else does
    /// not answer it), until `taken` holds for the screen. Each press is followed to its end:
    /// the screen shows it taken, or the log says it was held back and it is pressed again.
    pub fn answer(&mut self, key: &str, what: &str, taken: impl Fn(&str) -> bool) {
        let held_back = |log: &str| log.matches(KEY_HELD_BACK).count();
        let deadline = std::time::Instant::now() + WAIT;
        loop {
            let before = held_back(&self.log());
            self.send(key);
            let was_taken = self.wait_on(
                &format!("{key:?} to be taken ({what}) or held back"),
                || {
                    if taken(&self.screen()) {
                        Some(true)
                    } else {
                        (held_back(&self.log()) > before).then_some(false)
                    }
                },
            );
            if was_taken {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the approval dialog held back {key:?} for {WAIT:?}; the screen:\n{}",
                self.screen()
            );
        }
    }

    /// Whether the process has exited (without waiting for its output to end).
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }

    /// Waits for the process to exit and for its output to end; returns the exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let parser = self.parser.clone();
        let child = &mut self.child;
        let status = wait::poll(
            "the program to exit",
            WAIT,
            || child.try_wait().unwrap(),
            || {
                format!(
                    "the screen:\n{}",
                    parser.lock().unwrap().screen().contents()
                )
            },
        );
        if let Some(reader) = self.reader.take() {
            wait::until("the pty output to end", || reader.is_finished());
            let _ = reader.join();
        }
        status.exit_code()
    }
}

/// Answers what a terminal answers, as vt100 does not: the primary device attributes query
/// (`ESC [ c`, which crossterm sends after the kitty keyboard query and waits two seconds for),
/// and with `kitty` the keyboard query (`ESC [ ? u`) too. Keeps what may be the start of a
/// query in `tail`.
fn answer_queries(tail: &mut Vec<u8>, kitty: bool, writer: &Mutex<Box<dyn Write + Send>>) {
    const KITTY: &[u8] = b"\x1b[?u";
    const ATTRIBUTES: &[u8] = b"\x1b[c";
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let mut answer = Vec::new();
    if let (true, Some(at)) = (kitty, find(tail, KITTY)) {
        answer.extend_from_slice(b"\x1b[?0u");
        tail.drain(..at + KITTY.len());
    }
    if let Some(at) = find(tail, ATTRIBUTES) {
        answer.extend_from_slice(b"\x1b[?62;22c");
        tail.drain(..at + ATTRIBUTES.len());
    }
    let keep = tail.len().saturating_sub(8);
    tail.drain(..keep);
    if !answer.is_empty() {
        let mut w = writer.lock().unwrap();
        let _ = w.write_all(&answer);
        let _ = w.flush();
    }
}

impl Drop for Pty {
    fn drop(&mut self) {
        // A failed test must not leave the program running.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
