//! The one table of keys (`keymap/bindings.rs`) and the one of slash commands (`commands.rs`)
//! against what the keymap, the dispatcher, the help and the README do and say.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind};

use super::common::*;
use crate::tui::commands::{Argument, COMMANDS, find};
use crate::tui::keymap::bindings::{Binding, KEYS, Key, Keys, Layer, Rule};
use crate::tui::keymap::{Action, KeyContext, layers, map_key, map_mouse};
use crate::tui::state::{EntryKind, Focus, OverlayKind as Overlay, State};
use crate::tui::update::key_context;

/// Contexts enough to reach every layer under every condition: each overlay with its flags,
/// and with none open each focus with every combination of the flags the rules read.
fn contexts() -> Vec<KeyContext> {
    let mut out = Vec::new();
    for overlay in [
        Overlay::None,
        Overlay::Help,
        Overlay::ConfirmClear,
        Overlay::ConfirmUndo,
        Overlay::Picker,
        Overlay::Approval,
        Overlay::Key,
    ] {
        let focuses: &[Focus] = if overlay == Overlay::None {
            &Focus::ORDER
        } else {
            &[Focus::Input]
        };
        for &focus in focuses {
            for bits in 0..(1u32 << 14) {
                let b = |i: u32| bits & (1 << i) != 0;
                out.push(KeyContext {
                    focus,
                    overlay,
                    busy: b(0),
                    queued: b(1),
                    quit_armed: b(2),
                    input_empty: b(3),
                    on_first_line: b(4),
                    on_last_line: b(5),
                    plan_draft: b(6),
                    popup: b(7),
                    picker_confirming: b(8),
                    typing_reason: b(9),
                    answer_fresh: b(10),
                    searching: b(11),
                    finding: b(12),
                    editing_prefix: b(13),
                });
            }
        }
    }
    out
}

/// Every key the tests press: the codes the keymap knows of and letters, each alone and with
/// one modifier.
fn keys() -> Vec<KeyEvent> {
    let mut codes = vec![
        KeyCode::Enter,
        KeyCode::Esc,
        KeyCode::Tab,
        KeyCode::BackTab,
        KeyCode::Backspace,
        KeyCode::Delete,
        KeyCode::Insert,
        KeyCode::Up,
        KeyCode::Down,
        KeyCode::Left,
        KeyCode::Right,
        KeyCode::Home,
        KeyCode::End,
        KeyCode::PageUp,
        KeyCode::PageDown,
    ];
    codes.extend((1..=12).map(KeyCode::F));
    codes.extend(
        ('a'..='z')
            .chain('A'..='Z')
            .chain([' ', '@', '/', '1'])
            .map(KeyCode::Char),
    );
    let mods = [NONE, CTRL, ALT, SHIFT, CTRL | SHIFT];
    codes
        .iter()
        .flat_map(|&code| mods.iter().map(move |&m| k(code, m)))
        .collect()
}

/// An event for a rule's key: the code with the modifiers it needs.
fn press_for(key: &Key) -> KeyEvent {
    k(key.code, key.held)
}

/// Whether `action` is what an overlay or a pane does with a key it has no rule for: nothing,
/// the key typed into what is being typed, or the dialog's "any other key".
fn typing_or_nothing(action: &Action, key: KeyEvent) -> bool {
    match action {
        Action::None | Action::ConfirmNo | Action::PickerConfirmDelete(false) => true,
        Action::Edit(k) | Action::KeyDialog(k) | Action::PrefixEdit(k) => *k == key,
        Action::PickerType(c)
        | Action::ReasonType(c)
        | Action::SearchType(c)
        | Action::FindType(c) => key.code == KeyCode::Char(*c),
        _ => false,
    }
}

fn rules_with_rows() -> impl Iterator<Item = (&'static Binding, &'static Rule)> {
    KEYS.iter()
        .flat_map(|b| b.rules().iter().map(move |r| (b, r)))
}

#[test]
fn every_rule_of_the_table_is_what_map_key_does_somewhere() {
    let contexts = contexts();
    for (row, rule) in rules_with_rows() {
        let key = press_for(&rule.key);
        assert!(rule.key.matches(&key), "{rule:?}");
        let fires = contexts.iter().any(|ctx| {
            layers(ctx).contains(&row.layer)
                && rule.when.holds(ctx)
                && map_key(ctx, key) == rule.action
        });
        assert!(
            fires,
            "`{}` ({:?}): {:?} never gets {:?}",
            row.label(),
            row.layer,
            rule.key,
            rule.action
        );
    }
}

#[test]
fn every_key_map_key_handles_is_in_the_table() {
    for ctx in contexts().into_iter().step_by(7) {
        let active = layers(&ctx);
        for key in keys() {
            let got = map_key(&ctx, key);
            if typing_or_nothing(&got, key) {
                continue;
            }
            let listed = rules_with_rows().any(|(row, rule)| {
                active.contains(&row.layer)
                    && rule.key.matches(&key)
                    && rule.when.holds(&ctx)
                    && rule.action == got
            });
            assert!(listed, "{key:?} → {got:?} in {ctx:?} is in no row of KEYS");
        }
    }
}

#[test]
fn no_two_rows_claim_one_key_in_one_place() {
    // Within a row the first rule that matches wins; across rows, order must not matter.
    let contexts = contexts();
    for key in keys() {
        let matching: Vec<_> = rules_with_rows()
            .filter(|(_, rule)| rule.key.matches(&key))
            .collect();
        for (i, (row, rule)) in matching.iter().enumerate() {
            for (other_row, other) in &matching[i + 1..] {
                if other_row.layer != row.layer || std::ptr::eq(*row, *other_row) {
                    continue;
                }
                let both = contexts
                    .iter()
                    .any(|ctx| rule.when.holds(ctx) && other.when.holds(ctx));
                assert!(
                    !both,
                    "{key:?}: `{}` and `{}` both claim it",
                    row.label(),
                    other_row.label()
                );
            }
        }
    }
}

#[test]
fn rows_without_rules_are_typed_characters_or_the_mouse() {
    let idle = key_context(&state(), Instant::now());
    for row in KEYS {
        let Keys::Other(name) = row.keys else {
            continue;
        };
        match row.layer {
            Layer::Input => {
                let mut chars = name.chars();
                let (Some(c), None) = (chars.next(), chars.next()) else {
                    panic!("`{name}` is not a character");
                };
                let key = k(KeyCode::Char(c), NONE);
                assert_eq!(map_key(&idle, key), Action::Edit(key), "`{name}`");
            }
            Layer::Panes => assert!(name.contains("Mouse") || name.contains("drag"), "{name}"),
            other => panic!("`{name}` in {other:?}"),
        }
    }
    let wheel = MouseEvent {
        kind: MouseEventKind::ScrollDown,
        column: 1,
        row: 1,
        modifiers: KeyModifiers::NONE,
    };
    assert!(matches!(map_mouse(&idle, wheel), Action::ScrollAt { .. }));
}

#[test]
fn every_row_and_command_has_its_own_label() {
    let mut labels: Vec<String> = KEYS.iter().map(Binding::label).collect();
    labels.extend(COMMANDS.iter().map(|c| c.usage()));
    let mut sorted = labels.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), labels.len(), "{labels:?}");
    let mut names: Vec<&str> = COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
        .collect();
    let all = names.len();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), all, "a name or alias twice");
    for (i, c) in COMMANDS.iter().enumerate() {
        assert!(
            COMMANDS[..i].iter().all(|d| d.id != c.id),
            "{:?} twice",
            c.id
        );
    }
}

/// The state after sending `/line`, fresh.
fn after(line: &str) -> State {
    let mut s = state();
    send(&mut s, Instant::now(), line);
    s
}

fn said_unknown(s: &State) -> bool {
    s.view
        .entries
        .iter()
        .any(|e| e.kind == EntryKind::Error && e.text.starts_with("Unknown command"))
}

#[test]
fn the_dispatcher_runs_every_command_of_the_table_and_nothing_else() {
    for c in COMMANDS {
        for name in std::iter::once(c.name).chain(c.aliases.iter().copied()) {
            let line = match c.argument {
                Argument::Required(_) => format!("/{name} something"),
                _ => format!("/{name}"),
            };
            assert!(!said_unknown(&after(&line)), "{line} is unknown");
        }
        // Near misses are not commands.
        for wrong in [
            format!("/{}x", c.name),
            format!("/{}", &c.name[..c.name.len() - 1]),
            format!("/{}", c.name.to_uppercase()),
        ] {
            if find(&wrong[1..]).is_none() {
                assert!(said_unknown(&after(&wrong)), "{wrong} ran");
            }
        }
    }
    let s = after("/theme dark");
    let text = &s.view.entries.last().unwrap().text;
    assert!(said_unknown(&s), "{text}");
    for c in COMMANDS {
        assert!(
            text.contains(&c.usage()),
            "{} missing from: {text}",
            c.usage()
        );
    }
}

#[test]
fn the_commands_that_wait_for_a_turn_are_the_ones_the_table_says() {
    for c in COMMANDS {
        let mut s = super::support::busy_state();
        let line = format!("/{} x", c.name);
        s.composer.set_input(&line);
        crate::tui::update::apply(&mut s, Action::Send, Instant::now());
        assert_eq!(
            s.composer.input_text() == line,
            c.waits,
            "{line} during a turn (waits: {})",
            c.waits
        );
    }
}

/// The first cells of the table under `heading` in README.md, without their backticks.
fn readme_table(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n{heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no `{heading}`"));
    let section = &readme[start + heading.len() + 2..];
    let end = section.find("\n#").unwrap_or(section.len());
    section[..end]
        .lines()
        .filter(|l| l.starts_with('|'))
        .skip(2) // The header and the |---| line.
        .map(|l| l.split('|').nth(1).unwrap_or("").trim().replace('`', ""))
        .collect()
}

#[test]
fn the_readme_lists_exactly_the_keys_and_commands_of_the_tables() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
    let readme = std::fs::read_to_string(path).unwrap();
    let keys: Vec<String> = KEYS.iter().map(Binding::label).collect();
    assert_eq!(
        readme_table(&readme, "### Keys (F1 shows them all)"),
        keys,
        "README.md's keys, in the order of KEYS"
    );
    let commands: Vec<String> = COMMANDS.iter().map(|c| c.usage()).collect();
    assert_eq!(
        readme_table(&readme, "### Slash commands"),
        commands,
        "README.md's commands, in the order of COMMANDS"
    );
}
