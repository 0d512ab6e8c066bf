//! A plan as text: its numbered items read from what a model (or the person, editing it)
//! wrote, written back as a numbered list, and an executor's report of a failed item.

/// The items of a plan written as a list: `1. …`, `1) …`, `- [ ] …`, `* …` or `Step 1: …`
/// lines, each item's continuation lines joined to it. Text before the first item (an
/// introduction) and after a blank line that ends the list is left out; so are code blocks.
pub fn parse_items(text: &str) -> Vec<String> {
    let mut items: Vec<String> = Vec::new();
    let mut in_code = false;
    let mut open = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_code = !in_code;
            open = false;
            continue;
        }
        if in_code {
            continue;
        }
        if let Some(item) = item_text(trimmed) {
            if !item.is_empty() {
                items.push(item.to_string());
                open = true;
            }
        } else if trimmed.is_empty() {
            open = false;
        } else if open && line.starts_with([' ', '\t']) {
            // An indented continuation of the item above.
            if let Some(last) = items.last_mut() {
                last.push(' ');
                last.push_str(trimmed);
            }
        } else {
            open = false;
        }
    }
    items
}

/// The text of a list item line without its marker, `None` for any other line.
fn item_text(line: &str) -> Option<&str> {
    let line = line.trim_start_matches(['#', '>', ' ']);
    let rest = numbered(line).or_else(|| bulleted(line))?;
    let rest = rest.trim();
    // A checkbox after the marker (`- [ ] …`, `1. [x] …`).
    let rest = ["[ ]", "[x]", "[X]"]
        .iter()
        .find_map(|b| rest.strip_prefix(b))
        .unwrap_or(rest);
    Some(strip_emphasis(rest.trim()))
}

/// `1. text`, `1) text`, `(1) text`, `Step 1: text`, `**1.** text`.
fn numbered(line: &str) -> Option<&str> {
    let line = line.trim_start_matches('*');
    let line = strip_word(line, "step").unwrap_or(line);
    let line = line.strip_prefix('(').unwrap_or(line);
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = &line[digits..];
    let rest = rest.strip_prefix(['.', ')', ':'])?;
    let rest = rest.trim_start_matches('*');
    (rest.is_empty() || rest.starts_with([' ', '\t'])).then_some(rest)
}

/// `- text`, `* text`, `+ text`.
fn bulleted(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(['-', '*', '+'])?;
    rest.starts_with([' ', '\t']).then_some(rest)
}

/// `line` after `word` (any letter case) and a space, if it starts so.
fn strip_word<'a>(line: &'a str, word: &str) -> Option<&'a str> {
    let head = line.get(..word.len())?;
    head.eq_ignore_ascii_case(word)
        .then(|| line[word.len()..].trim_start())
}

/// An item wholly in bold or italics, without its stars.
fn strip_emphasis(text: &str) -> &str {
    let bare = text.trim_matches('*').trim_matches('_').trim();
    if bare.is_empty() { text } else { bare }
}

/// The items as a numbered list, one a line: what the person edits before the plan runs.
pub fn format_items(items: &[String]) -> String {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| format!("{}. {item}", i + 1))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The marker an executor ends its answer with when it could not carry out its item.
pub const FAILED_MARKER: &str = "ITEM FAILED";

/// Why the executor said its item failed: the text after an `ITEM FAILED:` line (any letter
/// case, markdown emphasis around it allowed), or `None` when it said no such thing.
pub fn failure_reason(answer: &str) -> Option<String> {
    answer.lines().find_map(|line| {
        let bare = line.trim().trim_matches(['*', '_', '`', ' ']);
        let head = bare.get(..FAILED_MARKER.len())?;
        if !head.eq_ignore_ascii_case(FAILED_MARKER) {
            return None;
        }
        let reason = bare[FAILED_MARKER.len()..]
            .trim_start_matches([':', ' ', '*', '_', '-', '—'])
            .trim();
        Some(if reason.is_empty() {
            "the executor said it could not do it".to_string()
        } else {
            reason.to_string()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbered_bulleted_and_checkbox_items_are_read_in_order() {
        let text = "Here is the plan:\n\n1. Read `notes.md`\n2) Write the summary\n   to summary.md\n(3) Check it\n\nThat is all.";
        assert_eq!(
            parse_items(text),
            [
                "Read `notes.md`",
                "Write the summary to summary.md",
                "Check it"
            ]
        );
        assert_eq!(
            parse_items("- [ ] one\n- [x] two\n* three\n+ four"),
            ["one", "two", "three", "four"]
        );
        assert_eq!(
            parse_items("**1.** Look\nStep 2: Act\n### 3. **Report**"),
            ["Look", "Act", "Report"]
        );
    }

    #[test]
    fn code_numbers_and_prose_are_not_items() {
        let text = "```\n1. not an item\n```\n2024 was a year.\n1.5 litres\nv1. no\n1. yes";
        assert_eq!(parse_items(text), ["yes"]);
        assert!(parse_items("Nothing to do here.").is_empty());
        assert!(parse_items("1.\n2. ").is_empty());
    }

    #[test]
    fn items_round_trip_through_the_numbered_list() {
        let items = vec!["Read it".to_string(), "Write 2. things".to_string()];
        assert_eq!(format_items(&items), "1. Read it\n2. Write 2. things");
        assert_eq!(parse_items(&format_items(&items)), items);
    }

    #[test]
    fn a_failed_item_is_reported_by_its_marker_line() {
        assert_eq!(
            failure_reason("I tried.\nITEM FAILED: no such file").as_deref(),
            Some("no such file")
        );
        assert_eq!(
            failure_reason("**Item failed** — denied").as_deref(),
            Some("denied")
        );
        assert!(failure_reason("ITEM FAILED").is_some());
        assert_eq!(
            failure_reason("Done: the item failed to surprise me."),
            None
        );
        assert_eq!(failure_reason("All good."), None);
    }
}
