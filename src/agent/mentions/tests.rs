use super::*;

fn written(prompt: &str) -> Vec<String> {
    find(prompt).into_iter().map(|m| m.written).collect()
}

#[test]
fn mentions_start_a_word_and_code_blocks_hold_none() {
    assert_eq!(written("@a.txt and @b/c.rs"), ["a.txt", "b/c.rs"]);
    assert_eq!(
        written("(see @notes.md) twice @notes.md"),
        ["notes.md)", "notes.md"]
    );
    assert_eq!(
        written("mail me@example.com or `@code`"),
        Vec::<String>::new()
    );
    assert_eq!(
        written("@\"my notes.txt\" and @\"open"),
        ["\"my notes.txt\""]
    );
    assert_eq!(written("a lone @ sign"), Vec::<String>::new());
    assert_eq!(
        written("look:\n```py\n@property\ndef x(): ...\n```\nthen @after.txt"),
        ["after.txt"]
    );
    let quoted = find("@\"my notes.txt\"");
    assert_eq!(quoted[0].path, "my notes.txt");
    assert_eq!(
        written("@a@b.txt"),
        ["a@b.txt"],
        "an @ inside a mention starts none"
    );
}

/// A workspace with a text file, a long one, a key file, a binary file and a link out.
fn workspace() -> (tempfile::TempDir, Sandbox) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("notes.md"), "# Notes\nremember the milk\n").unwrap();
    std::fs::write(root.join("my notes.txt"), "spaced out").unwrap();
    std::fs::write(root.join("src/big.log"), "x".repeat(100_000)).unwrap();
    std::fs::write(root.join(".env"), "DEEPSEEK_API_KEY=sk-secret-canary\n").unwrap();
    std::fs::write(root.join("image.bin"), [0u8, 159, 146, 150]).unwrap();
    std::fs::write(dir.path().join("outside.txt"), "outside-canary").unwrap();
    std::os::unix::fs::symlink(dir.path().join("outside.txt"), root.join("out.txt")).unwrap();
    let sandbox = Sandbox::new(&root).unwrap();
    (dir, sandbox)
}

#[test]
fn a_prompt_without_mentions_is_sent_as_it_is() {
    let (_dir, sandbox) = workspace();
    let e = expand(&sandbox, "just a question, me@example.com");
    assert_eq!(e.content, "just a question, me@example.com");
    assert_eq!(e.attached, None);
    assert!(e.notes.is_empty());
}

#[test]
fn text_files_are_attached_and_the_rest_is_noted_not_read() {
    let (_dir, sandbox) = workspace();
    let prompt = "Compare @notes.md, @\"my notes.txt\" and @src/big.log with @.env @image.bin \
                  @out.txt @missing.txt @../outside.txt";
    let e = expand(&sandbox, prompt);
    assert!(e.content.starts_with(prompt), "the prompt comes first");
    // The end of the block, for failure messages (the long file is left out).
    let tail = &e.content[e.content.rfind("</file>").unwrap_or(0)..];
    assert!(
        e.content
            .contains("<file path=\"notes.md\" bytes=\"26\">\n# Notes\nremember the milk\n</file>"),
        "{tail}"
    );
    assert!(
        e.content
            .contains("<file path=\"my notes.txt\" bytes=\"10\">\nspaced out\n</file>")
    );
    assert!(e.content.contains(
        "[cut: only the first 65,536 of 100,000 bytes are attached; read_text_file reads more]"
    ));
    assert_eq!(
        e.attached.as_ref().unwrap().mentions,
        ["notes.md", "\"my notes.txt\"", "src/big.log"],
        "the first `notes.md,` is found without its comma"
    );
    assert_eq!(e.attached.as_ref().unwrap().typed, prompt);
    for secret in ["sk-secret-canary", "outside-canary"] {
        assert!(!e.content.contains(secret), "{secret} leaked: {tail}");
    }
    for mention in [
        "@.env",
        "@image.bin",
        "@out.txt",
        "@missing.txt",
        "@../outside.txt",
    ] {
        assert!(
            e.content
                .contains(&format!("<not_attached mention=\"{mention}\">")),
            "{mention}: {tail}"
        );
        assert!(
            e.notes
                .iter()
                .any(|n| n.starts_with(&format!("{mention} was not attached: "))),
            "{mention}: {:?}",
            e.notes
        );
    }
    let note = |m: &str| e.notes.iter().find(|n| n.starts_with(m)).unwrap().clone();
    assert!(note("@.env").contains("may hold keys"), "{}", note("@.env"));
    assert!(
        note("@image.bin").contains("binary"),
        "{}",
        note("@image.bin")
    );
    assert!(
        note("@out.txt").contains("outside the workspace"),
        "{}",
        note("@out.txt")
    );
    assert!(
        note("@missing.txt").contains("does not exist"),
        "{}",
        note("@missing.txt")
    );
    assert!(note("@src/big.log").contains("only the first 65,536 of 100,000 bytes"));
}

#[test]
fn the_attachments_of_one_prompt_are_capped_together() {
    let dir = tempfile::tempdir().unwrap();
    let names: Vec<String> = (0..4).map(|i| format!("f{i}.txt")).collect();
    for name in &names {
        std::fs::write(dir.path().join(name), "y".repeat(MAX_FILE_BYTES)).unwrap();
    }
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let prompt = names
        .iter()
        .map(|n| format!("@{n}"))
        .collect::<Vec<_>>()
        .join(" ");
    let e = expand(&sandbox, &prompt);
    let attached = &e.attached.unwrap().mentions;
    assert_eq!(
        attached,
        &names[..3],
        "the third is cut to what is left, the fourth refused"
    );
    assert!(
        e.content
            .contains("only the first 32,768 of 65,536 bytes are attached")
    );
    assert!(
        e.content
            .contains("<not_attached mention=\"@f3.txt\">the attachments reached their 160 KB")
    );
    assert!(e.content.len() < MAX_TOTAL_BYTES + 2_000);
}
