//! What run_command changed, shown and undone, through the real binary in a pseudo-terminal:
//! a command's created, changed and deleted files are listed for the model, shown as diffs
//! under the call, counted by /diff and put back by /undo; a folder `.gitignore` leaves out is
//! named as not kept; and a command that swaps a folder for a link outside cannot make /undo
//! write through it.

use serde_json::{Value, json};

use crate::pty::{CTRL_D, Launch};
use crate::support::{MockServer, SseBuilder};

/// The observation the model got for the first call of request `n`'s last tool message.
fn observation(server: &MockServer, n: usize) -> Value {
    let requests = server.requests();
    let messages = requests[n].json()["messages"].clone();
    let last = messages.as_array().unwrap().last().unwrap().clone();
    serde_json::from_str(last["content"].as_str().unwrap()).unwrap()
}

#[test]
fn a_commands_changes_are_listed_shown_as_diffs_and_undone() {
    let command = "sed -i 's/a - b/a + b/' calc.py && printf 'made\\n' > made.txt && rm old.txt \
                   && mkdir -p build && echo o > build/out.o && printf '\\377\\376' > blob.bin && echo done";
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls("e1", "run_command", json!({ "command": command })),
        SseBuilder::answer("edited-by-command."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("calc.py"), "def add(a, b):\n    return a - b\n").unwrap();
    std::fs::write(ws.join("old.txt"), "old\n").unwrap();
    std::fs::write(ws.join(".gitignore"), "build/\n").unwrap();
    let mut p = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    p.wait_for("deepseek-flash");
    p.submit("fix calc with sed");
    p.wait_for("edited-by-command.");
    p.wait_for("│ idle │");
    // Under the call: each file's change, and what cannot be undone.
    for shown in [
        "calc.py: +1 \u{2212}1",
        "made.txt: +1 \u{2212}0",
        "old.txt: +0 \u{2212}1",
        "blob.bin: created (not text",
        "not kept for /undo",
    ] {
        p.wait_for(shown);
    }
    let seen = observation(&server, 1);
    assert_eq!(
        seen["files_changed"]["created"],
        json!(["blob.bin", "made.txt"]),
        "{seen}"
    );
    assert_eq!(
        seen["files_changed"]["changed"],
        json!(["calc.py"]),
        "{seen}"
    );
    assert_eq!(
        seen["files_changed"]["deleted"],
        json!(["old.txt"]),
        "{seen}"
    );
    assert_eq!(
        seen["files_changed"]["not_kept"],
        json!(["build/"]),
        "{seen}"
    );

    p.submit("/diff");
    p.wait_for("+    return a + b");
    p.submit("/undo");
    p.wait_for("Undid the changes of");
    p.wait_for("not put back: build/");
    assert_eq!(
        std::fs::read_to_string(ws.join("calc.py")).unwrap(),
        "def add(a, b):\n    return a - b\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("old.txt")).unwrap(),
        "old\n"
    );
    assert!(
        !ws.join("made.txt").exists(),
        "a file the command made is removed"
    );
    assert!(
        ws.join("build/out.o").exists(),
        "a left-out folder is not touched"
    );
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn undo_never_writes_through_a_link_a_command_put_in_a_folders_place() {
    let dir = tempfile::tempdir().unwrap();
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    // The command deletes `docs/` (with a file /undo would restore) and puts a link to a
    // folder outside in its place: putting `docs/a.txt` back must not follow it.
    let command = format!("rm -rf docs && ln -s {} docs", outside.display());
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls("e1", "run_command", json!({ "command": command })),
        SseBuilder::answer("swapped."),
    ]);
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(ws.join("docs")).unwrap();
    std::fs::write(ws.join("docs/a.txt"), "kept text\n").unwrap();
    let mut p = Launch::ui(dir.path(), &server.url()).key("sk-x").start();
    p.wait_for("deepseek-flash");
    p.submit("swap the folder");
    p.wait_for("swapped.");
    p.wait_for("│ idle │");
    let seen = observation(&server, 1);
    assert_eq!(
        seen["files_changed"]["deleted"],
        json!(["docs/a.txt"]),
        "{seen}"
    );
    p.submit("/undo");
    p.wait_until("/undo's answer", |s| {
        s.contains("Undid") || s.contains("could not") || s.contains("link")
    });
    assert!(
        !outside.join("a.txt").exists(),
        "/undo wrote through the link: {}",
        p.screen()
    );
    assert!(
        std::fs::read_dir(&outside).unwrap().next().is_none(),
        "nothing is written outside"
    );
    assert!(!p.screen().contains("Undid"), "{}", p.screen());
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}

#[test]
fn the_fix_a_failing_test_loop_is_one_undo_away() {
    let test = json!({"command": "python3 -m unittest 2>&1"});
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls("t1", "run_command", test.clone()),
        SseBuilder::calls(
            "t2",
            "replace_text_in_file",
            // Another size: Python's cache tells a changed source by its size and second.
            json!({"relative_path": "calc.py", "old_text": "a - b", "new_text": "a + b  # fixed"}),
        ),
        SseBuilder::calls("t3", "run_command", test),
        SseBuilder::answer("fixed-and-passing."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    let broken = "def add(a, b):\n    return a - b\n";
    std::fs::write(ws.join("calc.py"), broken).unwrap();
    std::fs::write(
        ws.join("test_calc.py"),
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n",
    )
    .unwrap();
    let mut p = Launch::ui(dir.path(), &server.url())
        .key("sk-x")
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .start();
    p.wait_for("deepseek-flash");
    p.submit("fix the failing test");
    p.wait_for("fixed-and-passing.");
    p.wait_for("│ idle │");
    // The first run failed (marked), the second passed.
    p.wait_for("\u{2717} exit 1");
    p.wait_for("OK");
    p.submit("/undo");
    // Python's caches are named, not kept; the edit is put back whole.
    p.wait_for("__pycache__/ (never kept");
    assert!(p.screen().contains("Undid"), "{}", p.screen());
    assert_eq!(std::fs::read_to_string(ws.join("calc.py")).unwrap(), broken);
    p.send(CTRL_D);
    assert_eq!(p.wait_exit(), 0);
}
