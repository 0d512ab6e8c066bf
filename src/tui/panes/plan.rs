//! How plans look: a plan's block in the conversation, and the group lines of the timeline
//! (each executor turn under its plan item's header, with the item's state). Reads state only.

use std::hash::{DefaultHasher, Hash, Hasher};

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::events::ItemState;
use crate::transcript::{Group, PlanItem};
use crate::tui::state::{ItemView, PlanPhase, PlanView, State};
use crate::tui::theme::Theme;
use crate::tui::wrap;

/// An item state's mark, word and style.
pub fn mark(state: ItemState, theme: &Theme) -> (&'static str, &'static str, Style) {
    match state {
        ItemState::Pending => ("○", "pending", theme.muted),
        ItemState::Running => ("◐", "running", theme.warning),
        ItemState::Done => ("✓", "done", theme.success),
        ItemState::Failed => ("✗", "failed", theme.error),
        ItemState::Interrupted => ("⏸", "interrupted", theme.warning),
    }
}

/// `✓ 2. text`, wrapped under its text, and the reason it failed under it.
fn item_lines(
    n: usize,
    item: ItemLine<'_>,
    indent: &str,
    width: usize,
    theme: &Theme,
) -> Vec<Line<'static>> {
    let (sign, word, style) = mark(item.state, theme);
    let head = format!("{indent}{sign} {n}. ");
    // Lines under the first keep the indent (a block's border) and align with the text.
    let pad = format!(
        "{indent}{}",
        " ".repeat(wrap::width(&head) - wrap::width(indent))
    );
    let mut out = Vec::new();
    let text = format!("{}  {word}", item.text);
    let room = width.saturating_sub(wrap::width(&head)).max(8);
    for (i, line) in wrap::wrap_text(&text, theme.text, room)
        .into_iter()
        .enumerate()
    {
        let lead = if i == 0 { head.clone() } else { pad.clone() };
        let mut spans = vec![Span::styled(lead, style)];
        spans.extend(line.spans);
        out.push(Line::from(spans));
    }
    if let Some(reason) = item.reason {
        let why = Line::styled(format!("{pad}{reason}"), theme.error);
        out.extend(wrap::wrap_line(&why, width));
    }
    out
}

/// What an item's line shows.
struct ItemLine<'a> {
    text: &'a str,
    state: ItemState,
    reason: Option<&'a str>,
}

impl<'a> From<&'a ItemView> for ItemLine<'a> {
    fn from(i: &'a ItemView) -> Self {
        Self {
            text: &i.text,
            state: i.state,
            reason: i.reason.as_deref(),
        }
    }
}

impl<'a> From<&'a PlanItem> for ItemLine<'a> {
    fn from(i: &'a PlanItem) -> Self {
        Self {
            text: &i.text,
            state: i.state,
            reason: i.reason.as_deref(),
        }
    }
}

/// What a plan's block says under its items.
fn phase_text(plan: &PlanView) -> String {
    let done = plan
        .items
        .iter()
        .filter(|i| i.state == ItemState::Done)
        .count();
    let total = plan.items.len();
    let executor = plan.executor.as_deref().unwrap_or("the executor");
    match plan.phase {
        PlanPhase::Draft => "edit it in the input below · Enter runs it · Esc sets it aside".into(),
        PlanPhase::NotRun => "not run".into(),
        PlanPhase::Running => format!("running with {executor} · {done} of {total} done"),
        PlanPhase::Done => format!("done · {total} of {total} items"),
        PlanPhase::Stopped => format!("stopped · {done} of {total} done"),
    }
}

/// A plan's block in the conversation: a title rule, its items with their states, and where
/// it stands.
pub fn block_lines(plan: &PlanView, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut title = format!("╭─ Plan · {} items ", plan.items.len());
    if !plan.planner.is_empty() {
        title.push_str(&format!("· {} ", plan.planner));
    }
    let rule = "─".repeat(width.min(60).saturating_sub(wrap::width(&title)));
    let mut out = vec![Line::styled(
        wrap::truncate(&format!("{title}{rule}"), width),
        theme.accent,
    )];
    if !plan.task.is_empty() {
        let task = Line::styled(format!("│ {}", plan.task), theme.muted);
        out.extend(wrap::wrap_line(&task, width));
    }
    for (i, item) in plan.items.iter().enumerate() {
        out.extend(item_lines(i + 1, item.into(), "│ ", width, theme));
    }
    let foot = Line::styled(format!("╰─ {}", phase_text(plan)), theme.accent);
    out.extend(wrap::wrap_line(&foot, width));
    out
}

/// What step `i`'s turn belongs to.
fn group(state: &State, i: usize) -> Group {
    let t = &state.view.transcript;
    t.steps
        .get(i)
        .and_then(|s| t.turns.get(s.turn))
        .map_or(Group::Turn, |turn| turn.group)
}

/// Whether step `i` belongs to a plan's item (its group lines are the plan's, not a turn
/// label).
pub fn in_plan(state: &State, i: usize) -> bool {
    group(state, i).item_of().is_some()
}

/// What turn `turn` cost so far, as its label says it (` · $0.0012`; nothing when no response
/// of it was priced, `+` when some were not).
fn turn_cost(state: &State, turn: usize) -> String {
    let Some(spend) = state.view.transcript.turns.get(turn).map(|t| t.cost) else {
        return String::new();
    };
    match spend.shown() {
        Some(shown) if spend.unpriced() > 0 => format!(" · {shown}+"),
        Some(shown) => format!(" · {shown}"),
        None => String::new(),
    }
}

/// What the timeline shows around step `i`, as a key: 0 for a plain turn label, else a hash
/// of everything its plan lines show (so they are built again only when that changes).
pub fn group_key(state: &State, i: usize, separator: bool) -> u64 {
    let step = &state.view.transcript.steps[i];
    let this = group(state, i);
    let last_of_plan = this.item_of().is_some()
        && (i + 1 >= state.view.transcript.steps.len()
            || group(state, i + 1).item_of() != this.item_of());
    if !separator && !last_of_plan {
        return 0;
    }
    let mut h = DefaultHasher::new();
    // The turn's cost as it is, not as its label spells it: this runs for every turn at every
    // frame, and the same spend always reads the same.
    (
        separator,
        last_of_plan,
        step.turn,
        matches!(this, Group::Planner { .. }),
        state.view.transcript.turns.get(step.turn).map(|t| t.cost),
    )
        .hash(&mut h);
    if let Group::Item { plan, item } = this
        && let Some(p) = state.view.transcript.plans.get(plan)
    {
        (plan, item, p.items.len()).hash(&mut h);
        for it in &p.items[item.min(p.items.len())..] {
            (
                it.state as u8,
                it.text.len(),
                it.reason.as_ref().map(String::len),
            )
                .hash(&mut h);
        }
    }
    h.finish() | 1
}

/// The lines before step `i` (its turn's label, or its plan item's header) and after it (the
/// items of its plan still to come, when it is the plan's last step).
pub fn group_lines(
    state: &State,
    i: usize,
    separator: bool,
    width: usize,
) -> (Vec<Line<'static>>, Vec<Line<'static>>) {
    let steps = &state.view.transcript.steps;
    let step = &steps[i];
    let this = group(state, i);
    let theme = &state.theme;
    let rule = |label: String| {
        let fill = "─".repeat(width.min(40).saturating_sub(wrap::width(&label)));
        Line::styled(
            wrap::truncate(&format!("{label}{fill}"), width),
            theme.border,
        )
    };
    let (mut head, mut tail) = (Vec::new(), Vec::new());
    let Group::Item { plan, item } = this else {
        if separator {
            let what = if matches!(this, Group::Planner { .. }) {
                " · planner"
            } else {
                ""
            };
            let cost = turn_cost(state, step.turn);
            head.push(rule(format!("── turn {}{what}{cost} ", step.turn + 1)));
        }
        return (head, tail);
    };
    let Some(p) = state.view.transcript.plans.get(plan) else {
        return (head, tail);
    };
    let first_of_plan = i == 0 || group(state, i - 1).item_of() != Some(plan);
    if separator && first_of_plan {
        head.push(rule(format!(
            "── turn {} · plan of {} items{} ",
            step.turn + 1,
            p.items.len(),
            turn_cost(state, step.turn)
        )));
    }
    if separator && let Some(it) = p.items.get(item) {
        head.extend(item_lines(item + 1, it.into(), "", width, theme));
    }
    let last_of_plan = i + 1 >= steps.len() || group(state, i + 1).item_of() != Some(plan);
    if last_of_plan {
        for (k, it) in p.items.iter().enumerate().skip(item + 1) {
            tail.extend(item_lines(k + 1, it.into(), "", width, theme));
        }
    }
    (head, tail)
}
