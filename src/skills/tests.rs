use std::path::Path;

use super::*;

const PDF_SKILL: &str = "---\nname: pdf-processing\ndescription: Extract text and tables from PDF files, fill forms, merge documents. Use when working with PDF files or when the user mentions PDFs, forms, or document extraction.\n---\n\n# PDF Processing\n\n## Quick start\n\nUse pdfplumber to extract text from PDFs. For advanced form filling, see [FORMS.md](FORMS.md).\n";

fn skill(root: &Path, folder: &str, text: &str) {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("SKILL.md"), text).unwrap();
}

fn source(origin: Origin, dir: &Path) -> Source {
    Source {
        origin,
        dir: dir.to_path_buf(),
    }
}

#[test]
fn the_docs_example_loads_with_its_files_and_joins_the_prompt() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "pdf", PDF_SKILL);
    std::fs::write(root.path().join("pdf/FORMS.md"), "forms").unwrap();
    std::fs::create_dir_all(root.path().join("pdf/scripts")).unwrap();
    std::fs::write(root.path().join("pdf/scripts/fill.py"), "print()").unwrap();
    std::fs::write(root.path().join("pdf/.env"), "KEY=1").unwrap();
    let (skills, warnings) = load(&[source(Origin::User, root.path())]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let pdf = skills.get("pdf-processing").unwrap();
    assert!(pdf.instructions.starts_with("# PDF Processing"));
    assert_eq!(pdf.origin, Origin::User);
    let (files, cut) = Skills::files(pdf);
    assert_eq!(files, ["FORMS.md", "scripts/fill.py"]);
    assert!(!cut);
    let section = skills.prompt_section();
    assert!(section.contains("# Skills"), "{section}");
    assert!(
        section.contains("\n- pdf-processing: Extract text and tables from PDF files"),
        "{section}"
    );
    // The same skills make the same section: it stays in the cacheable prefix.
    assert_eq!(
        section,
        load(&[source(Origin::User, root.path())])
            .0
            .prompt_section()
    );
    assert_eq!(Skills::default().prompt_section(), "");
}

#[test]
fn broken_missing_and_repeated_skills_are_reported_and_skipped() {
    let user = tempfile::tempdir().unwrap();
    let shared = tempfile::tempdir().unwrap();
    skill(
        user.path(),
        "a",
        "---\nname: review\ndescription: first\n---\nA",
    );
    skill(
        shared.path(),
        "b",
        "---\nname: review\ndescription: second\n---\nB",
    );
    skill(shared.path(), "broken", "---\nname: broken\n");
    skill(shared.path(), "bare", "no front matter");
    skill(shared.path(), "nodesc", "---\nname: nodesc\n---\n");
    skill(
        shared.path(),
        "caps",
        "---\nname: Big Name\ndescription: x\n---\n",
    );
    std::fs::create_dir_all(shared.path().join("empty")).unwrap();
    let (skills, warnings) = load(&[
        source(Origin::User, user.path()),
        source(Origin::Shared, shared.path()),
    ]);
    let names: Vec<&str> = skills.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["review"]);
    assert_eq!(skills.get("review").unwrap().description, "first");
    assert_eq!(warnings.len(), 5, "{warnings:?}");
    let all = warnings.join("\n");
    assert!(
        all.contains("b/SKILL.md skipped: the user skill of that name"),
        "{all}"
    );
    assert!(
        all.contains("broken/SKILL.md skipped: the front matter"),
        "{all}"
    );
    assert!(
        all.contains("bare/SKILL.md skipped: it has no front matter"),
        "{all}"
    );
    assert!(all.contains("nodesc/SKILL.md skipped: its front matter has no `description`"));
    assert!(all.contains("`Big Name` is not lower-case"), "{all}");
}

#[test]
fn descriptions_are_one_clean_capped_line() {
    let root = tempfile::tempdir().unwrap();
    let long = "word ".repeat(200);
    skill(
        root.path(),
        "esc",
        "---\nname: esc\ndescription: \"Red \\e[31mtext\\e]52;c;aGk=\\u0007 and\\nnew line\"\n---\n",
    );
    skill(
        root.path(),
        "long",
        &format!("---\nname: long\ndescription: {long}\n---\n"),
    );
    let (skills, warnings) = load(&[source(Origin::User, root.path())]);
    assert!(warnings.is_empty(), "{warnings:?}");
    let esc = &skills.get("esc").unwrap().description;
    assert!(!esc.contains('\u{1b}') && !esc.contains('\u{7}'), "{esc:?}");
    assert_eq!(esc, "Red text and new line");
    let long = &skills.get("long").unwrap().description;
    assert_eq!(long.chars().count(), MAX_DESCRIPTION_CHARS);
    assert!(long.ends_with('…'));
}

#[test]
fn oversized_special_and_linked_project_files_are_not_read() {
    let root = tempfile::tempdir().unwrap();
    skill(
        root.path(),
        "big",
        &format!(
            "---\nname: big\ndescription: d\n---\n{}",
            "x".repeat(MAX_SKILL_BYTES as usize)
        ),
    );
    std::fs::create_dir_all(root.path().join("fifo")).unwrap();
    let fifo = root.path().join("fifo/SKILL.md");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(
        elsewhere.path().join("real.md"),
        "---\nname: linked\ndescription: d\n---\n",
    )
    .unwrap();
    std::fs::create_dir_all(root.path().join("linked")).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("real.md"),
        root.path().join("linked/SKILL.md"),
    )
    .unwrap();
    let (skills, warnings) = load(&[source(Origin::Project, root.path())]);
    assert!(skills.is_empty(), "{skills:?}");
    let all = warnings.join("\n");
    assert!(all.contains("over the 65536 bytes"), "{all}");
    assert!(all.contains("not a regular file"), "{all}");
    assert!(all.contains("is a symbolic link"), "{all}");
    // The person's own skill may be a link (into a dotfiles repository).
    let (skills, _) = load(&[source(Origin::User, root.path())]);
    assert!(skills.get("linked").is_some());
}

#[test]
fn only_files_inside_a_skills_folder_resolve() {
    let root = tempfile::tempdir().unwrap();
    skill(root.path(), "pdf", PDF_SKILL);
    std::fs::write(root.path().join("pdf/FORMS.md"), "forms").unwrap();
    std::fs::write(root.path().join("pdf/.env"), "KEY=1").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "s").unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("secret"),
        root.path().join("pdf/out.md"),
    )
    .unwrap();
    let (skills, _) = load(&[source(Origin::User, root.path())]);
    let dir = skills.get("pdf-processing").unwrap().dir.clone();
    let (found, real) = skills.resolve_file(&dir.join("FORMS.md")).unwrap();
    assert_eq!(found.name, "pdf-processing");
    assert_eq!(real, dir.join("FORMS.md"));
    assert_eq!(
        skills.resolve_file(&dir.join("out.md")).unwrap_err(),
        FileRefused::LeadsOut
    );
    assert_eq!(
        skills.resolve_file(&dir.join(".env")).unwrap_err(),
        FileRefused::Hidden
    );
    assert_eq!(
        skills
            .resolve_file(&dir.join("../pdf/FORMS.md"))
            .unwrap_err(),
        FileRefused::Parent
    );
    assert_eq!(
        skills
            .resolve_file(&outside.path().join("secret"))
            .unwrap_err(),
        FileRefused::NotInSkill
    );
    assert_eq!(
        skills.resolve_file(&dir.join("nope.md")).unwrap_err(),
        FileRefused::Missing
    );
}

#[test]
fn the_project_folder_counts_only_once_trusted() {
    let project = Path::new("/p");
    let untrusted = default_sources(false, Some(project));
    assert!(untrusted.iter().all(|s| s.origin != Origin::Project));
    let trusted = default_sources(true, Some(project));
    let last = trusted.last().unwrap();
    assert_eq!(last.origin, Origin::Project);
    assert_eq!(last.dir, Path::new("/p/.agents/skills"));
}

#[test]
fn a_project_skill_folder_linked_out_of_the_project_is_skipped() {
    let project = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    skill(
        outside.path(),
        "home",
        "---\nname: home\ndescription: d\n---\n",
    );
    std::os::unix::fs::symlink(outside.path().join("home"), project.path().join("home")).unwrap();
    let (skills, warnings) = load(&[source(Origin::Project, project.path())]);
    assert!(skills.is_empty());
    assert!(warnings[0].contains("leads out of"), "{warnings:?}");
    // The person's own may link a skill in from anywhere.
    let (skills, _) = load(&[source(Origin::User, project.path())]);
    assert!(skills.get("home").is_some());
}
