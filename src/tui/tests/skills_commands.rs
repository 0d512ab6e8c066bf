//! `/skills`, `/skill NAME [TEXT]` and custom slash commands in the screen: listed with their
//! cleaned descriptions, offered by the `/` popup, and sent as one turn with the arguments put
//! in (shown as typed).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use crossterm::event::KeyCode;

use super::common::*;
use crate::agent::{AgentCommand, AgentEvent, ExpandedPrompt};
use crate::custom_commands::{CustomCommands, Source};
use crate::skills::{Origin, Skill, Skills};
use crate::tui::state::State;
use crate::tui::update::{self, Effect, key_context};

/// A state with two skills and the commands read from `files` (name, text) in a user folder.
fn state_with(files: &[(&str, &str)]) -> (tempfile::TempDir, State) {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in files {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    let (commands, warnings) = crate::custom_commands::load(
        &[Source {
            origin: crate::custom_commands::Origin::User,
            dir: dir.path().to_path_buf(),
        }],
        &|n| crate::tui::commands::find(n).is_some(),
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let skill = |name: &str, origin, description: &str| Skill {
        name: name.into(),
        description: description.into(),
        origin,
        dir: PathBuf::from(format!("/skills/{name}")),
        instructions: "Do it well.".into(),
    };
    // A description as a hostile SKILL.md would give it, cleaned as the loader cleans it.
    let planted = crate::front_matter::parse(
        "---\nname: x\ndescription: \"Fill forms \\e]52;c;aGk=\\u0007\\e[2Jnow\"\n---\n",
    )
    .unwrap();
    let mut options = options();
    options.skills = Arc::new(Skills::new(vec![
        skill(
            "pdf-processing",
            Origin::User,
            "Extract text and tables from PDF files.",
        ),
        skill(
            "forms",
            Origin::Project,
            &crate::skills::clean_description(planted.get("description").unwrap()),
        ),
    ]));
    options.custom_commands = Arc::new(commands);
    (dir, State::new(&options))
}

const REVIEW: &str = "---\nargument-hint: [pr-number] [priority] [assignee]\ndescription: Review pull request\n---\n\nReview PR #$1 with priority $2 and assign to $3.";

fn press(s: &mut State, code: KeyCode) -> Vec<Effect> {
    let action = crate::tui::keymap::map_key(&key_context(s, Instant::now()), k(code, NONE));
    update::apply(s, action, Instant::now())
}

fn typed(s: &mut State, text: &str) -> Vec<Effect> {
    text.chars()
        .flat_map(|c| press(s, KeyCode::Char(c)))
        .collect()
}

/// The expanded prompt among `effects`.
fn expanded(effects: &[Effect]) -> Option<ExpandedPrompt> {
    effects.iter().find_map(|e| match e {
        Effect::Command(AgentCommand::Expanded(p)) => Some(p.clone()),
        _ => None,
    })
}

#[test]
fn slash_skills_lists_name_origin_and_a_cleaned_description() {
    let (_dir, mut s) = state_with(&[]);
    send(&mut s, Instant::now(), "/skills");
    let screen = render(&mut s, 220, 20, Instant::now());
    assert!(screen.contains("Skills:"), "{screen}");
    assert!(
        screen.contains("pdf-processing [user] — Extract text and tables from PDF files."),
        "{screen}"
    );
    assert!(
        screen.contains("forms [project] — Fill forms now"),
        "{screen}"
    );
    let backend = render_backend(&mut s, 220, 20, Instant::now());
    let symbols: String = backend
        .buffer()
        .content
        .iter()
        .map(|c| c.symbol())
        .collect();
    assert!(
        !symbols.contains('\u{1b}') && !symbols.contains('\u{7}'),
        "no escape reaches the screen"
    );
}

#[test]
fn slash_skill_sends_a_turn_that_names_the_skill() {
    let (_dir, mut s) = state_with(&[]);
    let effects = send(
        &mut s,
        Instant::now(),
        "/skill pdf-processing fill in form.pdf",
    );
    let sent = expanded(&effects).expect("a turn");
    assert_eq!(sent.shown, "/skill pdf-processing fill in form.pdf");
    assert!(
        sent.content
            .starts_with("Use the skill `pdf-processing`: call use_skill"),
        "{}",
        sent.content
    );
    assert!(sent.content.ends_with("\n\nfill in form.pdf"));
    assert!(s.busy());
    // An unknown skill says which there are, and sends nothing.
    let (_dir, mut s) = state_with(&[]);
    let effects = send(&mut s, Instant::now(), "/skill nope");
    assert!(expanded(&effects).is_none());
    let screen = render(&mut s, 220, 20, Instant::now());
    assert!(
        screen.contains("There is no skill `nope`; the skills are: pdf-processing, forms."),
        "{screen}"
    );
}

#[test]
fn a_custom_command_is_offered_by_the_popup_and_sent_with_its_arguments() {
    let (_dir, mut s) = state_with(&[
        ("review-pr.md", REVIEW),
        ("standup.md", "Write my standup."),
    ]);
    typed(&mut s, "/rev");
    let screen = render(&mut s, 220, 24, Instant::now());
    assert!(screen.contains("/review-pr"), "{screen}");
    assert!(
        screen.contains("[pr-number] [priority] [assignee] · Review pull request (user)"),
        "{screen}"
    );
    // Enter completes a command with an argument hint, leaving room for the arguments.
    press(&mut s, KeyCode::Enter);
    assert_eq!(s.composer.input_text(), "/review-pr ");
    typed(&mut s, "456 high alice");
    let effects = press(&mut s, KeyCode::Enter);
    let sent = expanded(&effects).expect("a turn");
    assert_eq!(sent.shown, "/review-pr 456 high alice");
    assert_eq!(
        sent.content,
        "Review PR #456 with priority high and assign to alice."
    );
    assert_eq!(sent.preset, None);
    // The turn shows what was typed.
    feed(
        &mut s,
        Instant::now(),
        vec![AgentEvent::TurnStarted {
            prompt: sent.shown.clone(),
        }],
    );
    let screen = render(&mut s, 220, 24, Instant::now());
    assert!(screen.contains("/review-pr 456 high alice"), "{screen}");
    assert!(!screen.contains("Review PR #456"), "{screen}");
}

#[test]
fn a_custom_command_waits_for_a_running_turn_and_its_model_is_used() {
    let (_dir, mut s) = state_with(&[(
        "deep.md",
        "---\nmodel: deepseek-v4-pro\n---\nThink about $ARGUMENTS.",
    )]);
    send(&mut s, Instant::now(), "first");
    assert!(s.busy());
    let effects = send(&mut s, Instant::now(), "/deep caching");
    assert!(expanded(&effects).is_none(), "it waits");
    assert_eq!(s.composer.input_text(), "/deep caching");
    let (_dir, mut s) = state_with(&[(
        "deep.md",
        "---\nmodel: deepseek-v4-pro\n---\nThink about $ARGUMENTS.",
    )]);
    let sent = expanded(&send(&mut s, Instant::now(), "/deep caching")).unwrap();
    assert_eq!(sent.content, "Think about caching.");
    assert_eq!(sent.preset, Some(crate::llm::Preset::Pro));
    // A model MiniClaw does not know (Claude Code's `haiku`) is said and not used.
    let (_dir, mut s) = state_with(&[("quick.md", "---\nmodel: haiku\n---\nBe quick.")]);
    let sent = expanded(&send(&mut s, Instant::now(), "/quick")).unwrap();
    assert_eq!(sent.preset, None);
    let screen = render(&mut s, 220, 20, Instant::now());
    assert!(
        screen.contains("/quick: its model `haiku` is not used (it is not a preset"),
        "{screen}"
    );
}

#[test]
fn built_in_names_are_not_taken_by_custom_commands() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("model.md"), "shadow").unwrap();
    let (commands, warnings): (CustomCommands, _) = crate::custom_commands::load(
        &[Source {
            origin: crate::custom_commands::Origin::Project,
            dir: dir.path().to_path_buf(),
        }],
        &|n| crate::tui::commands::find(n).is_some(),
    );
    assert!(commands.is_empty());
    assert!(
        warnings[0].contains("/model is a built-in command"),
        "{warnings:?}"
    );
}
