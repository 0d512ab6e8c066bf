//! End to end: the real `miniclaw-tui` binary in a pseudo-terminal, talking to the local scripted
//! model server, its screen read through a vt100 emulator.

use crate::pty::{Launch, Pty, WAIT};
use crate::support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Gate, MockServer, RecordedRequest, SseBuilder};

const ENTER: &str = "\r";
const F2: &str = "\x1bOQ";
const CTRL_L: &str = "\x0c";
const CTRL_D: &str = "\x04";

/// The binary running in a pseudo-terminal (`crate::pty`), with the temp folder holding its
/// home, config, data and workspace.
struct Session {
    pty: Pty,
    dir: tempfile::TempDir,
}

impl std::ops::Deref for Session {
    type Target = Pty;
    fn deref(&self) -> &Pty {
        &self.pty
    }
}

impl std::ops::DerefMut for Session {
    fn deref_mut(&mut self) -> &mut Pty {
        &mut self.pty
    }
}

impl Session {
    /// Starts the binary against `base_url` with a fresh home and workspace, plus `args`.
    fn start(base_url: &str, args: &[&str]) -> Self {
        Self::start_with_env(base_url, args, &[])
    }

    /// Like `start`, with extra environment variables.
    fn start_with_env(base_url: &str, args: &[&str], env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("ws");
        let mut all = vec!["--workspace", ws.to_str().unwrap()];
        all.extend_from_slice(args);
        let cwd = dir.path().to_path_buf();
        let mut env = env.to_vec();
        env.insert(0, ("DEEPSEEK_API_KEY", "sk-e2e"));
        Self::spawn(dir, &cwd, base_url, &all, &env)
    }

    /// Starts the binary in `cwd` (inside `dir`, which holds home, config and data) with
    /// exactly `args` and `env` over a clean environment.
    fn spawn(
        dir: tempfile::TempDir,
        cwd: &Path,
        base_url: &str,
        args: &[&str],
        env: &[(&str, &str)],
    ) -> Self {
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let mut launch = Launch::new(&home, cwd)
            .args(args)
            .env("DEEPSEEK_BASE_URL", base_url);
        for (k, v) in env {
            launch = launch.env(k, v);
        }
        Self {
            pty: launch.start(),
            dir,
        }
    }

    fn workspace(&self) -> PathBuf {
        self.dir.path().join("ws")
    }
}

/// Waits until the server has seen `n` requests; returns them all.
fn wait_requests(
    server: &MockServer,
    n: usize,
    screen: impl Fn() -> String,
) -> Vec<RecordedRequest> {
    let start = Instant::now();
    loop {
        let requests = server.requests();
        if requests.len() >= n {
            return requests;
        }
        if start.elapsed() > WAIT {
            panic!(
                "the server saw {} requests, not {n}; the screen was:\n{}",
                requests.len(),
                screen()
            );
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// Waits until `path` no longer exists.
fn wait_gone(path: &Path, screen: impl Fn() -> String) {
    let start = Instant::now();
    while path.exists() {
        if start.elapsed() > WAIT {
            panic!(
                "{} still exists; the screen was:\n{}",
                path.display(),
                screen()
            );
        }
        std::thread::sleep(Duration::from_millis(30));
    }
}

/// The roles and contents of a request's messages.
fn messages(request: &RecordedRequest) -> Vec<(String, String)> {
    request.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[test]
fn a_turn_then_f2_then_clear_then_quit() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .content(&["I will write the file."])
            .tool_call(
                0,
                "call_1",
                "write_text_file",
                &json!({"relative_path": "hello.txt", "content": "hello\n"}),
                9,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("Wrote **hello.txt** for you: first-answer-done."),
        SseBuilder::new()
            .role()
            .reasoning(&["Thinking ", "hard about it."])
            .content(&["The pro preset answers: second-answer-done."])
            .finish("stop")
            .done()
            .build(),
        SseBuilder::answer("A fresh start: third-answer-done."),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");

    // A turn: the timeline shows the tool step, the conversation shows the answer.
    s.submit("please write hello.txt");
    s.wait_for("first-answer-done");
    s.wait_until("the step line with its check mark", |screen| {
        screen
            .lines()
            .any(|l| l.contains("write_text_file(hello.txt)") && l.contains('✓'))
    });
    // The conversation keeps the thought and the call's own line, so hiding the side panes
    // (F3) hides nothing. (F3 itself is not sent: an escape sequence split by a loaded pty
    // would arrive as Esc and typed letters.)
    s.wait_until(
        "the thought and the call line in the conversation",
        |screen| {
            screen.contains("◇ I will write the file.")
                && screen
                    .lines()
                    .any(|l| l.contains("⚙ write_text_file(hello.txt) ✓") && l.contains("ms"))
        },
    );
    // In `auto` too, the write shows what it changed, as a diff under its call line.
    s.wait_for("│ hello.txt: +1 \u{2212}0");
    s.wait_for("│ + hello");
    assert_eq!(
        std::fs::read_to_string(s.workspace().join("hello.txt")).unwrap(),
        "hello\n"
    );
    let requests = wait_requests(&server, 2, || s.screen());
    let first = requests[0].json();
    assert_eq!(first["model"], "deepseek-flash");
    assert_eq!(first["thinking"], json!({"type": "disabled"}));
    assert!(first.get("reasoning_effort").is_none_or(Value::is_null));
    assert!(s.workspace().join("history.json").exists());

    // F2: the next request uses the pro preset.
    s.send(F2);
    s.wait_for("deepseek-v4-pro");
    s.submit("think harder");
    s.wait_for("second-answer-done");
    let requests = wait_requests(&server, 3, || s.screen());
    let third = requests[2].json();
    assert_eq!(third["model"], "deepseek-v4-pro");
    assert_eq!(third["thinking"], json!({"type": "enabled"}));
    assert_eq!(third["reasoning_effort"], "high");
    // The conversation so far went along: system, 2 prompts, the tool call and its result, 2 answers.
    assert!(
        messages(&requests[2]).len() >= 6,
        "{:?}",
        messages(&requests[2])
    );

    // Ctrl+L and y: the history file goes, and the next request carries no earlier turn.
    // (Once the turn has ended: the answer shows while its last save is still being synced.)
    s.wait_for("│ idle │");
    s.send(CTRL_L);
    s.wait_for("Clear this conversation?");
    s.send("y");
    wait_gone(&s.workspace().join("history.json"), || s.screen());
    s.wait_until("the conversation cleared", |screen| {
        !screen.contains("second-answer-done")
    });
    s.submit("start over");
    s.wait_for("third-answer-done");
    let requests = wait_requests(&server, 4, || s.screen());
    let fourth = &requests[3];
    let msgs = messages(fourth);
    assert_eq!(
        msgs.len(),
        2,
        "only the system prompt and the new prompt: {msgs:?}"
    );
    assert_eq!(msgs[0].0, "system");
    assert_eq!(msgs[1], ("user".to_string(), "start over".to_string()));
    assert_eq!(
        fourth.json()["model"],
        "deepseek-v4-pro",
        "the preset outlives a clear"
    );

    // Ctrl+D with an empty input quits with status 0.
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    assert_eq!(server.requests().len(), 4);
}

/// The tail of the output, printable for a failure message.
fn tail(raw: &[u8]) -> String {
    let from = raw.len().saturating_sub(300);
    format!("{:?}", String::from_utf8_lossy(&raw[from..]))
}

/// Asserts the output leaves the alternate screen last, then shows the cursor, and turns off what it
/// turned on.
fn assert_restored(raw: &[u8]) {
    let text = String::from_utf8_lossy(raw);
    let entered = text
        .rfind("\x1b[?1049h")
        .expect("the alternate screen was entered");
    let left = text
        .rfind("\x1b[?1049l")
        .unwrap_or_else(|| panic!("the alternate screen was never left: {}", tail(raw)));
    assert!(left > entered, "left before the last enter: {}", tail(raw));
    let shown = text
        .rfind("\x1b[?25h")
        .unwrap_or_else(|| panic!("the cursor was never shown: {}", tail(raw)));
    assert!(
        shown > left,
        "the cursor must be shown after leaving: {}",
        tail(raw)
    );
    let after = &text[left..];
    assert!(
        !after.contains("\x1b[?1049h") && !after.contains("\x1b[?25l"),
        "nothing hides the cursor or re-enters afterwards: {}",
        tail(raw)
    );
    // Bracketed paste went off before leaving.
    let paste_off = text
        .rfind("\x1b[?2004l")
        .expect("bracketed paste turned off");
    assert!(paste_off > entered);
}

#[test]
fn quitting_restores_the_terminal() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    // With the mouse captured (the default), so turning it off is checked too.
    let mut s = Session::start(&server.url(), &[]);
    s.wait_for("deepseek-flash");
    let lock = s.workspace().join("history.json.lock");
    assert!(lock.exists(), "held while running");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    assert!(!lock.exists(), "quitting removes the lock file");
    let raw = s.raw();
    assert_restored(&raw);
    let text = String::from_utf8_lossy(&raw);
    let mouse_on = text.rfind("\x1b[?1000h").expect("mouse capture was on");
    let mouse_off = text.rfind("\x1b[?1000l").expect("mouse capture turned off");
    assert!(mouse_off > mouse_on);
    assert!(server.requests().is_empty());
}

/// Starts a turn whose stream shows `partial` then stalls far longer than the test, sends
/// `signal` mid-stream, and returns the exited session and the last saved message.
fn signal_mid_turn(signal: &str, prompt: &str, partial: &str) -> (Session, Value) {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .content(&[partial])
            .pause(60_000)
            .content(&["never shown"])
            .finish("stop")
            .done()
            .build(),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");
    s.submit(prompt);
    s.wait_for(partial.trim());
    let pid = s.pid().expect("the child's pid");
    let status = std::process::Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(s.wait_exit(), 0, "the program must not wait for the stream");
    assert!(
        !s.workspace().join("history.json.lock").exists(),
        "a signal is a clean exit too: the lock file is removed"
    );
    let history = std::fs::read_to_string(s.workspace().join("history.json")).unwrap();
    assert!(history.contains(prompt), "{history}");
    let saved: Value = serde_json::from_str(&history).unwrap();
    let last = saved["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    (s, last)
}

#[test]
fn sigterm_during_a_turn_exits_cleanly() {
    let (s, last) = signal_mid_turn("-TERM", "a slow one", "streaming-has-begun ");
    assert_restored(&s.raw());
    // What arrived was saved: the partial answer, marked.
    assert_eq!(last["content"], "streaming-has-begun ", "{last}");
    assert_eq!(last["incomplete"], "interrupted", "{last}");
}

#[test]
fn closing_the_terminal_mid_turn_saves_the_partial_answer_and_exits_quietly() {
    // SIGHUP is what a terminal sends when its window closes.
    let (_s, last) = signal_mid_turn("-HUP", "before the window closes", "half of it ");
    assert_eq!(last["content"], "half of it ", "{last}");
}

#[test]
fn a_panic_in_the_agent_task_restores_the_terminal_names_the_log_and_exits_non_zero() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let mut s = Session::start_with_env(
        &server.url(),
        &[],
        &[
            ("MINICLAW_TEST_PANIC_IN_AGENT", "1"),
            ("RUST_BACKTRACE", "0"),
        ],
    );
    s.wait_for("deepseek-flash");
    s.submit("crash please");
    assert_eq!(s.wait_exit(), 101);
    let raw = s.raw();
    assert_restored(&raw);
    let text = String::from_utf8_lossy(&raw);
    let left = text.rfind("\x1b[?1049l").unwrap();
    let after = &text[left..];
    assert!(
        after.contains("test panic in the agent task"),
        "the message is printed on the normal screen: {}",
        tail(&raw)
    );
    assert!(after.contains("the log is at"), "{}", tail(&raw));
    assert!(after.contains("miniclaw.log"), "{}", tail(&raw));
    let log = std::fs::read_to_string(s.dir.path().join("home/.local/share/miniclaw/miniclaw.log"))
        .unwrap();
    assert!(
        log.contains("test panic in the agent task"),
        "the panic is in the log:\n{log}"
    );
}

#[test]
fn a_panic_in_a_tool_call_is_its_error_and_the_session_goes_on() {
    let call = |id: &str, name: &str, args: Value| {
        SseBuilder::new()
            .role()
            .tool_call(0, id, name, &args, 2)
            .finish("tool_calls")
            .done()
            .build()
    };
    let (server, _rt) = MockServer::start_blocking(vec![
        call("call_1", "get_current_time", json!({})),
        call("call_2", "list_files", json!({"relative_path": "."})),
        call(
            "call_3",
            "calculate_expression",
            json!({"expression": "6*7"}),
        ),
        SseBuilder::answer("Still alive: survived-the-panics."),
    ]);
    let mut s = Session::start_with_env(
        &server.url(),
        &["--no-mouse"],
        &[
            (
                "MINICLAW_TEST_PANIC_IN_TOOL",
                "get_current_time,list_files@blocking",
            ),
            ("RUST_BACKTRACE", "0"),
        ],
    );
    s.wait_for("deepseek-flash");
    s.submit("break two tools");
    s.wait_for("survived-the-panics");
    // Each panic went back to the model as that call's error; the third call worked.
    let requests = wait_requests(&server, 4, || s.screen());
    let results: Vec<String> = messages(&requests[3])
        .into_iter()
        .filter(|(role, _)| role == "tool")
        .map(|(_, content)| content)
        .collect();
    assert_eq!(results.len(), 3, "{results:?}");
    assert!(
        results[0].contains("the tool failed unexpectedly (a bug): test panic in the tool"),
        "{}",
        results[0]
    );
    assert!(
        results[1].contains("failed unexpectedly (a bug): test panic on a worker"),
        "{}",
        results[1]
    );
    assert!(results[2].contains("\"ok\":true"), "{}", results[2]);
    // The screen was never left, and the session quits normally.
    let raw = s.raw();
    assert!(
        !String::from_utf8_lossy(&raw).contains("\x1b[?1049l"),
        "the alternate screen was left: {}",
        tail(&raw)
    );
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    let log = std::fs::read_to_string(s.dir.path().join("home/.local/share/miniclaw/miniclaw.log"))
        .unwrap();
    assert!(log.contains("test panic in the tool"), "logged:\n{log}");
}

#[test]
fn after_browsing_turn_one_the_side_panes_follow_turn_two_live() {
    // Turn two holds after its reasoning until the test has looked at the panes.
    let gate = Gate::new();
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .reasoning(&["turn-one-reasoning"])
            .tool_call(0, "c1", "list_files", &json!({"relative_dir": "."}), 5)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("first-answer-done"),
        SseBuilder::new()
            .role()
            .reasoning(&["turn-two-reasoning"])
            .until(gate.until("the test to see turn two's reasoning"))
            .tool_call(
                0,
                "c2",
                "run_shell_command",
                &json!({"command": "pwd", "args": []}),
                5,
            )
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("second-answer-done"),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");
    s.submit("turn one");
    s.wait_for("first-answer-done");
    // Open step 1 of turn 1: Tab to the timeline, select upwards to the first step.
    s.send("\t\t");
    s.send("\x1b[A\x1b[A\x1b[A");
    s.wait_for("Reasoning · turn 1, step 1");
    s.wait_for("turn-one-reasoning");
    // Back to the input (Esc) and send turn 2: the panes follow it while it runs.
    // (Typed only once Esc is taken: right behind it, `t` would read as Alt+t.)
    s.send("\x1b");
    s.wait_until("the input focused again (its thick border)", |screen| {
        screen.contains("┏ Message")
    });
    s.submit("turn two");
    s.wait_for("turn-two-reasoning");
    s.wait_for("Reasoning · turn 2, step 1");
    assert!(
        !s.screen().contains("turn-one-reasoning"),
        "the reasoning pane still shows turn 1:\n{}",
        s.screen()
    );
    gate.open();
    s.wait_for("second-answer-done");
    s.wait_until("turn 2's call in the timeline", |screen| {
        screen
            .lines()
            .any(|l| l.contains("run_shell_command(pwd)") && l.contains('✓'))
    });
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn the_chosen_model_and_theme_are_remembered_across_restarts() {
    let (server, _rt) = MockServer::start_blocking(vec![]);
    let data = tempfile::tempdir().unwrap();
    let data_home = data.path().to_str().unwrap();
    let env = [("XDG_DATA_HOME", data_home)];
    let mut s = Session::start_with_env(&server.url(), &["--theme", "light"], &env);
    s.wait_for("deepseek-flash");
    s.send(F2);
    s.wait_for("deepseek-v4-pro");
    let choices = data.path().join("miniclaw/choices.json");
    let start = Instant::now();
    while !std::fs::read_to_string(&choices).is_ok_and(|t| t.contains("deepseek-v4-pro")) {
        assert!(start.elapsed() < WAIT, "the choice was not written");
        std::thread::sleep(Duration::from_millis(20));
    }
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    // Started again without --model or --theme: both as chosen last time.
    let mut again = Session::start_with_env(&server.url(), &[], &env);
    again.wait_for("deepseek-v4-pro");
    let kept: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&choices).unwrap()).unwrap();
    assert_eq!(kept["model"], "deepseek-v4-pro");
    assert_eq!(kept["theme"], "light");
    again.send(CTRL_D);
    assert_eq!(again.wait_exit(), 0);
}

#[test]
fn a_message_queued_during_a_slow_turn_is_sent_after_it() {
    // The first answer holds until the second question is queued.
    let gate = Gate::new();
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .content(&["Working on it… "])
            .until(gate.until("the second question to be queued"))
            .content(&["slow-answer-done."])
            .finish("stop")
            .done()
            .build(),
        SseBuilder::answer("queued-answer-done."),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");
    s.submit("first question");
    s.wait_for("Working on it");
    s.submit("second question");
    s.wait_for("1 queued: second question");
    gate.open();
    s.wait_for("slow-answer-done");
    s.wait_for("queued-answer-done");
    let requests = wait_requests(&server, 2, || s.screen());
    let sent = messages(&requests[1]);
    assert!(
        sent.iter()
            .any(|(role, text)| role == "user" && text == "second question"),
        "{sent:?}"
    );
    s.wait_for("│ idle │");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn new_then_resume_brings_the_first_session_back() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::answer("first-answer-here."),
        SseBuilder::answer("second-answer-here."),
        SseBuilder::answer("third-answer-here."),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");
    s.submit("first question");
    s.wait_for("first-answer-here.");
    s.wait_for("│ idle │");
    s.submit("/new");
    s.wait_for("A new session started");
    s.wait_until("the first session gone from the view", |screen| {
        !screen.contains("first-answer-here.")
    });
    s.submit("second question");
    s.wait_for("second-answer-here.");
    s.wait_for("│ idle │");
    s.submit("/resume");
    s.wait_for("Resume a session");
    s.send("first");
    s.wait_for("Filter: first");
    s.send(ENTER);
    s.wait_for("Reopened “first question” (1 turn)");
    s.wait_for("first-answer-here.");
    assert!(
        !s.screen().contains("second-answer-here."),
        "{}",
        s.screen()
    );
    s.wait_for("Conversation · first question");
    s.submit("third question");
    s.wait_for("third-answer-here.");
    let requests = wait_requests(&server, 3, || s.screen());
    let sent = messages(&requests[2]);
    let prompts: Vec<&str> = sent
        .iter()
        .filter(|(role, _)| role == "user")
        .map(|(_, text)| text.as_str())
        .collect();
    assert_eq!(prompts, ["first question", "third question"], "{sent:?}");
    // The second session waits in the archive, whole.
    let archived: Vec<_> = std::fs::read_dir(s.workspace().join(".miniclaw/sessions"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(archived.len(), 1, "{archived:?}");
    assert!(archived[0].contains("second-answer-here."));
    s.wait_for("│ idle │");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

#[test]
fn a_project_whose_dot_env_holds_the_key_is_a_workspace_the_key_never_leaves() {
    const CANARY: &str = "sk-CANARY-pty-7781";
    let shell = |command: &str, args: &[&str]| json!({"command": command, "args": args});
    let attempts = [
        ("read_text_file", json!({"relative_path": ".env"})),
        (
            "search_files",
            json!({"pattern": "CANARY", "include_ignored": true}),
        ),
        ("list_files", json!({"relative_dir": "."})),
        ("run_shell_command", shell("cat", &[".env"])),
        ("run_shell_command", shell("rg", &["-uuu", "DEEPSEEK", "."])),
    ];
    let mut first = SseBuilder::new().role().content(&["Looking for the key."]);
    for (i, (tool, args)) in attempts.iter().enumerate() {
        first = first.tool_call(i, &format!("call_{i}"), tool, args, 30);
    }
    let (server, _rt) = MockServer::start_blocking(vec![
        first.finish("tool_calls").done().build(),
        SseBuilder::answer("out-of-reach-answer."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(project.join(".env"), format!("DEEPSEEK_API_KEY={CANARY}\n")).unwrap();
    std::fs::write(project.join("notes.md"), "DEEPSEEK_API_KEY goes in .env\n").unwrap();
    let data = dir.path().join("home/.local/share");
    let env = [("MINICLAW_LOG", "trace")];
    let mut s = Session::spawn(
        dir,
        &project,
        &server.url(),
        &["-C", ".", "--no-mouse"],
        &env,
    );
    s.wait_for("MiniClaw keeps .env* files out of the tools' reach");
    s.submit("What is in .env?");
    s.wait_for("out-of-reach-answer.");
    s.wait_for("│ idle │");
    let screen = s.screen();
    assert_eq!(
        screen.matches("This workspace holds .env").count(),
        1,
        "said once: {screen}"
    );
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {CANARY}").as_str()),
        "the key from the project's .env is used, in the header only"
    );
    for request in &requests {
        assert!(!request.body.contains(CANARY), "{}", request.body);
    }
    let observations: Vec<String> = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(observations.len(), attempts.len());
    assert!(
        observations[0].contains("\"ok\":false"),
        "{}",
        observations[0]
    );
    assert!(
        observations[1].contains("\"match_count\":0"),
        "the search ran and found nothing: {}",
        observations[1]
    );
    assert!(
        observations[2].contains("notes.md") && !observations[2].contains("\".env\""),
        "{}",
        observations[2]
    );
    for (file, what) in [
        (project.join("history.json"), "the history"),
        (project.join("history.json.journal"), "the journal"),
        (data.join("miniclaw/miniclaw.log"), "the log"),
    ] {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(!text.contains(CANARY), "the key reached {what}");
    }
    let raw = String::from_utf8_lossy(&s.raw()).into_owned();
    assert!(!raw.contains(CANARY), "the key reached the screen");
    assert!(!project.join("history.json.lock").exists());
}

#[test]
fn an_at_mention_picked_in_the_popup_sends_the_file_with_the_prompt() {
    const CONTENT: &str = "- buy milk (pty-mention-canary-42)\n";
    let (server, _rt) =
        MockServer::start_blocking(vec![SseBuilder::answer("mention-answer-done.")]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    let ws = s.workspace();
    std::fs::create_dir_all(ws.join("notes")).unwrap();
    std::fs::write(ws.join("notes/todo.md"), CONTENT).unwrap();
    std::fs::write(ws.join("notes/done.md"), "nothing yet\n").unwrap();
    s.wait_for("deepseek-flash");
    // `@` opens the popup of workspace files; typing filters it; Tab inserts the path.
    s.send("Summarise @tod");
    s.wait_until("the file popup with its match", |screen| {
        screen.contains("Files · 2") && screen.contains("› notes/todo.md")
    });
    s.send("\t");
    s.wait_for("Summarise @notes/todo.md ");
    assert!(!s.screen().contains("Files ·"), "the popup closed");
    s.submit("please");
    s.wait_for("mention-answer-done.");
    s.wait_for("│ idle │");
    let screen = s.screen();
    assert!(
        screen.contains("Summarise @notes/todo.md please"),
        "{screen}"
    );
    assert!(
        !screen.contains("pty-mention-canary-42"),
        "the conversation shows the mention, not the file: {screen}"
    );
    let requests = wait_requests(&server, 1, || s.screen());
    let sent = messages(&requests[0]);
    let (role, text) = sent.last().unwrap();
    assert_eq!(role, "user");
    assert!(
        text.starts_with("Summarise @notes/todo.md please\n\n<attached_files>"),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "<file path=\"notes/todo.md\" bytes=\"35\">\n{CONTENT}</file>"
        )),
        "{text}"
    );
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}

/// Code in the model's answer is highlighted by a C regex engine (Oniguruma) over the fixed
/// syntaxes built in: a hostile answer (deep nesting, a 20 KB line of escaped quotes, an
/// unclosed comment, a clipboard escape inside a string) is drawn whole and cleaned, the
/// program stays responsive, and it exits cleanly.
#[test]
fn a_hostile_code_block_is_drawn_cleaned_and_the_program_stays_responsive() {
    let nesting = "([{".repeat(3_000);
    let quotes = "\\\"".repeat(10_000);
    let comment = format!("/* {}", "(".repeat(5_000));
    let answer = format!(
        "Here is the code:\n\n```rust\nfn main() {{ let s = \"\x1b]52;c;ZXZpbA==\x07\"; }}\n\
         {nesting}\nlet q = \"{quotes}\";\n{comment}\n```\n\n\
         ```bash\necho \"$(((({nesting}\n```\n\nafter-hostile-code-done."
    );
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::new()
            .role()
            .content_in_pieces(&answer, 64)
            .finish("stop")
            .done()
            .build(),
    ]);
    let mut s = Session::start(&server.url(), &["--no-mouse"]);
    s.wait_for("deepseek-flash");
    s.submit("show me hostile code");
    s.wait_for("after-hostile-code-done.");
    s.wait_for("│ idle │");
    // Typing still reaches the editor at once.
    s.send("still-responsive");
    s.wait_for("still-responsive");
    let raw = s.raw();
    let text = String::from_utf8_lossy(&raw);
    assert!(
        !text.contains("\x1b]52"),
        "the clipboard escape in the code never reaches the terminal"
    );
    s.send("\x15");
    s.wait_until("the input emptied", |screen| {
        !screen.contains("still-responsive")
    });
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    assert_restored(&s.raw());
}

/// The UI, the agent and the stream share one runtime thread, so whatever a call waits on (here
/// a `PreToolUse` hook that holds until the test lets it go) must not hold the screen: typing
/// shows while the call waits, and the turn ends once it is let go.
#[test]
fn the_screen_answers_keys_while_a_call_waits_on_its_hook() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls_all(&[("get_current_time", json!({"timezone": "UTC"}))]),
        SseBuilder::answer("after-the-hook-done."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let started = dir.path().join("hook-started");
    let release = dir.path().join("hook-release");
    let config = dir.path().join("home/.config/miniclaw");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        format!(
            "[[hooks.PreToolUse]]\nmatcher = \"get_current_time\"\nhooks = [{{ type = \"command\", \
             command = \"touch {0}; i=0; while [ ! -e {1} ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done\", \
             timeout = 30 }}]\n",
            started.display(),
            release.display()
        ),
    )
    .unwrap();
    let cwd = dir.path().to_path_buf();
    let ws_arg = ws.to_str().unwrap().to_string();
    let mut s = Session::spawn(
        dir,
        &cwd,
        &server.url(),
        &["--workspace", &ws_arg, "--no-mouse"],
        &[("DEEPSEEK_API_KEY", "sk-e2e")],
    );
    s.wait_for("deepseek-flash");
    s.submit("what time is it");
    let start = Instant::now();
    while !started.exists() {
        assert!(
            start.elapsed() < WAIT,
            "the hook never started; the screen was:\n{}",
            s.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    s.send("typed-while-the-hook-waits");
    s.wait_for("typed-while-the-hook-waits");
    assert!(
        !release.exists() && server.requests().len() == 1,
        "the key showed while the call still waited"
    );
    std::fs::write(&release, "").unwrap();
    s.wait_for("after-the-hook-done.");
    s.send("\x15");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
    assert_restored(&s.raw());
}
