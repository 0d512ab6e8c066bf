//! The real binary in a pseudo-terminal, its screen read through a vt100 emulator, with a home
//! of its own (config, data) and none of the caller's keys or MiniClaw settings.

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use portable_pty::{Child, CommandBuilder, MasterPty, PtySize, native_pty_system};

/// Generous: the machine may be busy with other builds.
pub const WAIT: Duration = Duration::from_secs(15);
const ROWS: u16 = 40;
const COLS: u16 = 140;

/// Enter as a terminal sends it.
pub const ENTER: &str = "\r";
/// Esc.
pub const ESC: &str = "\x1b";
/// Ctrl+D.
pub const CTRL_D: &str = "\x04";

/// A command for `binary` with a clean environment: `HOME` and the XDG folders inside `home`,
/// no `DEEPSEEK_*`, `MINICLAW_*` or `SERPAPI*` variable, and `cwd` as the current folder.
pub fn command(binary: &str, home: &Path, cwd: &Path) -> CommandBuilder {
    let mut cmd = CommandBuilder::new(binary);
    cmd.cwd(cwd);
    for (k, _) in std::env::vars_os() {
        let k = k.to_string_lossy().to_string();
        if k.starts_with("DEEPSEEK_") || k.starts_with("MINICLAW_") || k.starts_with("SERPAPI") {
            cmd.env_remove(k);
        }
    }
    cmd.env("HOME", home);
    cmd.env("XDG_CONFIG_HOME", home.join(".config"));
    cmd.env("XDG_DATA_HOME", home.join(".local/share"));
    cmd.env("XDG_STATE_HOME", home.join(".local/state"));
    cmd.env("TERM", "xterm-256color");
    cmd
}

/// A program running in a pseudo-terminal, with everything it printed.
pub struct Pty {
    parser: Arc<Mutex<vt100::Parser>>,
    raw: Arc<Mutex<Vec<u8>>>,
    writer: Box<dyn Write + Send>,
    child: Box<dyn Child + Send + Sync>,
    reader: Option<JoinHandle<()>>,
    // Kept so the pty stays open while the child runs.
    _master: Box<dyn MasterPty + Send>,
}

impl Pty {
    /// Starts `cmd` in a 140×40 pseudo-terminal.
    pub fn start(cmd: CommandBuilder) -> Self {
        let pty = native_pty_system()
            .openpty(PtySize {
                rows: ROWS,
                cols: COLS,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let child = pty.slave.spawn_command(cmd).unwrap();
        // Only the child holds the slave now, so the reader sees the end when it exits.
        drop(pty.slave);
        let mut reader = pty.master.try_clone_reader().unwrap();
        let writer = pty.master.take_writer().unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let raw = Arc::new(Mutex::new(Vec::new()));
        let (p, r) = (parser.clone(), raw.clone());
        let reader = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => {
                        p.lock().unwrap().process(&buf[..n]);
                        r.lock().unwrap().extend_from_slice(&buf[..n]);
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
            _master: pty.master,
        }
    }

    /// The program's process id.
    pub fn pid(&self) -> Option<u32> {
        self.child.process_id()
    }

    /// The screen as text, one line per row.
    pub fn screen(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    /// Everything the program wrote to the terminal.
    pub fn raw(&self) -> Vec<u8> {
        self.raw.lock().unwrap().clone()
    }

    /// Sends bytes as if typed.
    pub fn send(&mut self, keys: &str) {
        self.writer.write_all(keys.as_bytes()).unwrap();
        self.writer.flush().unwrap();
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
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if pred(&screen) {
                return;
            }
            if start.elapsed() > WAIT {
                panic!("timed out waiting for {what}; the screen was:\n{screen}");
            }
            std::thread::sleep(Duration::from_millis(30));
        }
    }

    /// Waits for the process to exit and for its output to end; returns the exit code.
    pub fn wait_exit(&mut self) -> u32 {
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if start.elapsed() > WAIT {
                let _ = self.child.kill();
                panic!(
                    "the program did not exit; the screen was:\n{}",
                    self.screen()
                );
            }
            std::thread::sleep(Duration::from_millis(30));
        };
        if let Some(reader) = self.reader.take() {
            let start = Instant::now();
            while !reader.is_finished() {
                assert!(start.elapsed() < WAIT, "the pty output never ended");
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = reader.join();
        }
        status.exit_code()
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
