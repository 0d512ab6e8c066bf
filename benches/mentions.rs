//! The `@` popup on a 20,000-file workspace: the time from typing `@` to the popup's first
//! rows (the walk `search_files` uses, handing out batches, matched as they come), the time to
//! every match of a typed query, and one keystroke matched over the whole list.
#![allow(clippy::unwrap_used, clippy::expect_used)] // A benchmark stops at any surprise.

use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use miniclaw::llm::Preset;
use miniclaw::tools::Sandbox;
use miniclaw::tui::files::walk;
use miniclaw::tui::{Screen, Theme, TuiOptions};
use tokio_util::sync::CancellationToken;

const FILES: usize = 20_000;

/// 20,000 files in 400 folders two levels deep, and a `target/` the `.gitignore` leaves out.
fn make_tree(root: &Path) {
    for d in 0..200 {
        for half in ["src", "tests"] {
            let dir = root.join(format!("pkg{d:03}/{half}"));
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..FILES / 400 {
                std::fs::write(dir.join(format!("file{f:02}_{d}.rs")), "fn f() {}\n").unwrap();
            }
        }
    }
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    for f in 0..1_000 {
        std::fs::write(root.join(format!("target/debug/out{f}.o")), "x").unwrap();
    }
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
}

fn key(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn screen() -> Screen {
    Screen::new(&TuiOptions {
        workspace: "ws".into(),
        preset: Preset::Flash,
        max_steps: 6,
        mouse: false,
        theme: Theme::dark(),
        notices: vec![],
        tools: vec![],
        recent_models: vec![],
        resume_picker: false,
        approval: miniclaw::approval::ApprovalMode::Auto,
        approval_source: miniclaw::approval::ApprovalSource::Default,
        run_command: Ok(()),
        skills: Default::default(),
        custom_commands: Default::default(),
    })
}

/// Types `text` (starting with `@`), then walks the workspace feeding the popup until `enough`
/// says its rows will do (the walk is stopped there); returns the rows.
fn popup_after_walk(
    sandbox: &Sandbox,
    text: &str,
    enough: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    let now = Instant::now();
    let mut s = screen();
    for c in text.chars() {
        s.key(key(c), now);
    }
    let generation = s.listing().expect("typing @ starts a listing");
    let cancel = CancellationToken::new();
    walk(sandbox, generation, &cancel, &mut |batch| {
        if cancel.is_cancelled() {
            return;
        }
        s.files(batch, now);
        if enough(&s.popup_rows()) {
            cancel.cancel();
        }
    });
    s.popup_rows()
}

fn popup(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path());
    let sandbox = Sandbox::new(dir.path()).unwrap();
    let all = popup_after_walk(&sandbox, "@", |_| false);
    assert_eq!(all.len(), 20, "a full popup");
    let matched = popup_after_walk(&sandbox, "@file07_199", |_| false);
    assert_eq!(matched[0], "pkg199/src/file07_199.rs", "{matched:?}");

    let mut g = c.benchmark_group("mention_popup_20000_files");
    g.sample_size(20).measurement_time(Duration::from_secs(6));
    // Typing `@`: until the popup shows its first rows.
    g.bench_function("first_rows", |b| {
        b.iter(|| popup_after_walk(&sandbox, "@", |rows| !rows.is_empty()))
    });
    // A query typed before the list came: until every match is in (the whole walk).
    g.bench_function("all_matches_of_a_query", |b| {
        b.iter(|| popup_after_walk(&sandbox, "@file07_199", |_| false))
    });
    // One more letter over the whole list, as typing does (no earlier matches to narrow): `s`
    // is in every path, so all 20,000 are scored and sorted.
    let mut s = screen();
    s.key(key('@'), Instant::now());
    let generation = s.listing().unwrap();
    walk(
        &sandbox,
        generation,
        &CancellationToken::new(),
        &mut |batch| s.files(batch, Instant::now()),
    );
    s.key(key('s'), Instant::now());
    assert_eq!(s.popup_rows().len(), 20, "every path matches `s`");
    let backspace = KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE);
    s.key(backspace, Instant::now());
    g.bench_function("keystroke_over_the_whole_list", |b| {
        b.iter(|| {
            s.key(key('s'), Instant::now());
            s.key(backspace, Instant::now());
        })
    });
    g.finish();
}

criterion_group!(benches, popup);
criterion_main!(benches);
