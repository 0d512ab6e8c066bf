//! What the planner and the executor are told.

use super::parse::FAILED_MARKER;

/// Added to the system prompt of the planner's requests (never saved): plan, do not act.
pub const PLANNER_ADDITION: &str = "You are the planner now. Do not carry out the task: look at \
the workspace with the read-only tools you have when that helps, then answer with a numbered plan \
for it, one line per item (`1. …`, `2. …`), at most 10 items. Each item is one concrete action \
another assistant can carry out with the tools and check on its own; name the files it concerns. \
Answer with the plan alone: no introduction, no code blocks, nothing after the list.";

/// The prompt of the executor's turn for item `index` (0-based) of `items`, for `task`.
pub fn item_prompt(task: Option<&str>, items: &[String], index: usize) -> String {
    let mut text = format!(
        "Carry out item {} of {} of this plan, and only that item.\n",
        index + 1,
        items.len()
    );
    if let Some(task) = task.filter(|t| !t.trim().is_empty()) {
        text.push_str(&format!("\nThe task: {}\n", task.trim()));
    }
    text.push_str("\nThe plan:\n");
    for (i, item) in items.iter().enumerate() {
        let state = match i.cmp(&index) {
            std::cmp::Ordering::Less => "done",
            std::cmp::Ordering::Equal => "now",
            std::cmp::Ordering::Greater => "later",
        };
        text.push_str(&format!("{}. [{state}] {item}\n", i + 1));
    }
    text.push_str(&format!(
        "\nUse your tools to do it. When it is done, answer in one or two sentences with what you \
         did. If it cannot be done, stop and end your answer with a line \
         `{FAILED_MARKER}: <why>`."
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_item_prompt_shows_the_plan_and_where_the_run_is() {
        let items = vec!["Read".to_string(), "Write".to_string(), "Check".to_string()];
        let text = item_prompt(Some("Summarise notes"), &items, 1);
        assert!(text.starts_with("Carry out item 2 of 3"), "{text}");
        assert!(text.contains("The task: Summarise notes"));
        assert!(text.contains("1. [done] Read\n2. [now] Write\n3. [later] Check\n"));
        assert!(text.contains("ITEM FAILED: <why>"));
        assert!(!item_prompt(None, &items, 0).contains("The task"));
    }
}
