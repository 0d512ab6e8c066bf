//! `/undo` and `/diff` through the real agent loop: each turn's file changes are kept before
//! they are made, undone turn by turn (a created file removed), never over a change made since
//! without a yes, and the model is told in the next request.

use crate::support;

use miniclaw::agent::undo::UndoOutcome;
use miniclaw::llm::Preset;
use serde_json::json;
use support::rig::{rig_with, run};
use support::{Reply, SseBuilder};

fn call(tool: &str, args: serde_json::Value) -> Reply {
    SseBuilder::new()
        .role()
        .tool_call(0, "call_0", tool, &args, 20)
        .finish("tool_calls")
        .done()
        .build()
}

#[tokio::test]
async fn undo_walks_back_turn_by_turn_and_the_model_is_told() {
    let script = vec![
        call(
            "write_text_file",
            json!({"relative_path": "a.txt", "content": "v2\n"}),
        ),
        call(
            "write_text_file",
            json!({"relative_path": "new/b.txt", "content": "made\n"}),
        ),
        SseBuilder::answer("turn one done"),
        call(
            "replace_text_in_file",
            json!({"relative_path": "a.txt", "old_text": "v2", "new_text": "v3"}),
        ),
        SseBuilder::answer("turn two done"),
        SseBuilder::answer("heard it"),
    ];
    let mut rig = rig_with(
        script,
        miniclaw::tools::builtin_registry(),
        Preset::Flash,
        6,
        |c| c,
    )
    .await;
    let ws = rig.dir.path().to_path_buf();
    std::fs::write(ws.join("a.txt"), "v1\n").unwrap();
    run(&mut rig.agent, "first turn").await;
    run(&mut rig.agent, "second turn").await;
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "v3\n");

    let diff = rig.agent.session_diff().await;
    assert!(
        diff.contains("--- a/a.txt\n+++ b/a.txt") && diff.contains("-v1\n+v3\n"),
        "{diff}"
    );
    assert!(
        diff.contains("--- /dev/null\n+++ b/new/b.txt") && diff.contains("+made"),
        "{diff}"
    );

    let undone = rig.agent.undo(false).await.unwrap();
    assert_eq!(
        undone,
        UndoOutcome::Undone("Undid the changes of “second turn”: a.txt restored.".into())
    );
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "v2\n");
    let undone = rig.agent.undo(false).await.unwrap();
    assert!(
        matches!(&undone, UndoOutcome::Undone(s) if s.contains("new/b.txt removed")),
        "{undone:?}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("a.txt")).unwrap(), "v1\n");
    assert!(!ws.join("new/b.txt").exists());
    assert_eq!(rig.agent.undo(false).await.unwrap(), UndoOutcome::Nothing);
    assert_eq!(rig.agent.session_diff().await, "", "every change undone");

    run(&mut rig.agent, "what now?").await;
    let last = rig.server.requests().last().unwrap().json();
    let prompt = last["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        prompt.starts_with("[Note from MiniClaw: the user undid"),
        "{prompt}"
    );
    assert!(prompt.ends_with("what now?"), "{prompt}");
    let kept = rig
        .agent
        .session()
        .messages
        .iter()
        .rev()
        .find(|m| m.note.is_some())
        .unwrap();
    assert_eq!(
        kept.content, "what now?",
        "the note is kept apart from the person's words"
    );
}

#[tokio::test]
async fn a_file_changed_since_the_turn_is_not_overwritten_without_a_yes() {
    let script = vec![
        call(
            "write_text_file",
            json!({"relative_path": "a.txt", "content": "model\n"}),
        ),
        SseBuilder::answer("done"),
    ];
    let mut rig = rig_with(
        script,
        miniclaw::tools::builtin_registry(),
        Preset::Flash,
        6,
        |c| c,
    )
    .await;
    let file = rig.dir.path().join("a.txt");
    std::fs::write(&file, "mine\n").unwrap();
    run(&mut rig.agent, "write a").await;
    std::fs::write(&file, "edited by hand\n").unwrap();
    let outcome = rig.agent.undo(false).await.unwrap();
    let UndoOutcome::Conflict(diff) = outcome else {
        panic!("{outcome:?}");
    };
    assert!(diff.contains("-edited by hand\n+mine\n"), "{diff}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "edited by hand\n");
    assert!(matches!(
        rig.agent.undo(true).await.unwrap(),
        UndoOutcome::Undone(_)
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    // The checkpoints sit where no tool can see them.
    assert!(rig.dir.path().join(".miniclaw/checkpoints").is_dir());
}

/// A person who says yes to every question, counting them.
#[tokio::test]
async fn undo_puts_agents_md_back_only_with_a_yes_and_the_write_asked_in_auto() {
    let script = vec![
        call(
            "write_text_file",
            json!({"relative_path": "AGENTS.md", "content": "theirs\n"}),
        ),
        SseBuilder::answer("written"),
    ];
    let rig = rig_with(
        script,
        miniclaw::tools::builtin_registry(),
        Preset::Flash,
        6,
        |c| c,
    )
    .await;
    let yes = std::sync::Arc::new(support::rig::Yes::default());
    let support::rig::Rig { server, agent, dir } = rig;
    let mut agent = agent.with_approvals(miniclaw::approval::ApprovalMode::Auto, Some(yes.clone()));
    let ws = dir.path().to_path_buf();
    std::fs::write(ws.join("AGENTS.md"), "mine\n").unwrap();
    run(&mut agent, "write it").await;
    assert_eq!(
        yes.0.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "asked in auto"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "theirs\n"
    );

    // Unchanged since the turn, still configuration: the diff comes back first.
    let UndoOutcome::Conflict(diff) = agent.undo(false).await.unwrap() else {
        panic!("AGENTS.md was put back without a yes");
    };
    assert!(diff.contains("AGENTS.md is configuration"), "{diff}");
    assert!(diff.contains("-theirs\n+mine\n"), "{diff}");
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "theirs\n"
    );
    assert!(matches!(
        agent.undo(true).await.unwrap(),
        UndoOutcome::Undone(_)
    ));
    assert_eq!(
        std::fs::read_to_string(ws.join("AGENTS.md")).unwrap(),
        "mine\n"
    );
    drop(server);
}
