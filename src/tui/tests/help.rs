//! The help overlay (F1): the rows of the tables, wrapped to the overlay's width.

use std::time::Instant;

use super::common::*;
use crate::tui::commands::COMMANDS;
use crate::tui::keymap::Action;
use crate::tui::keymap::bindings::KEYS;
use crate::tui::update;

/// The help drawn in a `width` × `height` terminal: the inside of the overlay, row by row.
fn help_rows(width: u16, height: u16) -> Vec<String> {
    let mut s = state();
    update::apply(&mut s, Action::ShowHelp, Instant::now());
    let backend = render_backend(&mut s, width, height, Instant::now());
    let buffer = backend.buffer();
    let area = buffer.area;
    let rows: Vec<String> = (area.top()..area.bottom())
        .map(|y| {
            (area.left()..area.right())
                .map(|x| buffer[(x, y)].symbol())
                .collect::<String>()
        })
        .collect();
    // Inside the double border.
    rows.iter()
        .filter_map(|row| {
            let start = row.find('║')? + '║'.len_utf8();
            let end = row.rfind('║')?;
            (end > start).then(|| row[start..end].to_string())
        })
        .collect()
}

/// The words of `text`, spaces collapsed.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn the_help_wraps_long_text_in_a_narrow_terminal_instead_of_cutting_it() {
    for width in [40, 60, 100] {
        let rows = help_rows(width, 400);
        // The column where the text starts, from a row whose text is short.
        let f1 = rows
            .iter()
            .find(|r| r.trim_start().starts_with("F1 "))
            .unwrap_or_else(|| panic!("no F1 row at {width}: {rows:#?}"));
        let column = f1.find("this help").unwrap();
        let (keys, texts): (Vec<String>, Vec<String>) = rows
            .iter()
            .map(|r| {
                let cut = r.char_indices().nth(column).map_or(r.len(), |(i, _)| i);
                (r[..cut].to_string(), r[cut..].to_string())
            })
            .unzip();
        let keys = words(&keys.join(" "));
        let texts = words(&texts.join(" "));
        // Every row's keys and text are there whole, in the order of the tables.
        let mut at = 0;
        for row in KEYS {
            // The help's terminal does not tell Shift+Enter apart (the test backend says so).
            let label = words(&row.label_for(false));
            let found = keys[at..].find(&label);
            assert!(found.is_some(), "`{label}` at {width} columns, in: {keys}");
            at += found.unwrap_or(0) + label.len();
        }
        let mut at = 0;
        let abouts = KEYS
            .iter()
            .map(|b| b.about)
            .chain(COMMANDS.iter().map(|c| c.about));
        for about in abouts {
            let about = words(about);
            let found = texts[at..].find(&about);
            assert!(found.is_some(), "`{about}` at {width} columns, in: {texts}");
            at += found.unwrap_or(0) + about.len();
        }
        for c in COMMANDS {
            assert!(
                keys.contains(&words(&c.usage())),
                "{} at {width}",
                c.usage()
            );
        }
        assert!(texts.contains("(also /exit)"), "{texts}");
        assert!(
            rows.iter()
                .any(|r| r.contains("Esc, F1 or q closes this help"))
        );
    }
}
