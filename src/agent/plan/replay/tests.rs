use super::*;
use crate::agent::replay::replay;

fn item(run: &str, index: usize, items: &[&str]) -> Message {
    let mut m = Message::user(format!("Carry out item {}", index + 1));
    m.plan = Some(PlanMark::Item {
        model: "deepseek-v4-flash".into(),
        run: run.into(),
        index,
        items: items.iter().map(|s| s.to_string()).collect(),
    });
    m
}

fn plan_events(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Plan(p) => Some(format!("{p:?}")),
            AgentEvent::TurnStarted { prompt } => Some(format!("turn {prompt}")),
            _ => None,
        })
        .collect()
}

#[test]
fn a_saved_plan_run_is_told_again_with_its_items_and_their_states() {
    let items = ["Read notes", "Write summary", "Check"];
    let mut s = Session::new();
    let mut request = Message::user("Summarise");
    request.plan = Some(PlanMark::Request {
        model: "deepseek-v4-pro".into(),
    });
    s.push(request);
    s.push(Message::assistant(
        "1. Read notes\n2. Write summary\n3. Check",
        None,
        vec![],
    ));
    s.push(item("r1", 0, &items));
    s.push(Message::assistant("Read it.", None, vec![]));
    s.push(item("r1", 1, &items));
    s.push(Message::assistant(
        "No.\nITEM FAILED: disk full",
        None,
        vec![],
    ));
    s.push(Message::user("thanks"));
    s.push(Message::assistant("You're welcome.", None, vec![]));
    let events = replay(&s, 6);
    assert_eq!(
        plan_events(&events),
        [
            r#"Planning { task: "Summarise", model: "deepseek-v4-pro" }"#,
            "turn Summarise",
            r#"Proposed { items: ["Read notes", "Write summary", "Check"], replayed: true }"#,
            r#"Executing { items: ["Read notes", "Write summary", "Check"], model: "deepseek-v4-flash" }"#,
            "ItemStarted { index: 0 }",
            "turn Read notes",
            "ItemFinished { index: 0, state: Done, reason: None }",
            "ItemStarted { index: 1 }",
            "turn Write summary",
            r#"ItemFinished { index: 1, state: Failed, reason: Some("disk full") }"#,
            r#"Finished(PlanSummary { done: 1, total: 3, stopped: Some((1, Failed, Some("disk full"))) })"#,
            "turn thanks",
        ]
    );
    // Each plan event sits right after the turn it follows.
    let i = events
        .iter()
        .position(|e| {
            matches!(
                e,
                AgentEvent::Plan(PlanEvent::ItemFinished { index: 0, .. })
            )
        })
        .unwrap();
    assert!(matches!(events[i - 1], AgentEvent::TurnFinished { .. }));
}

#[test]
fn a_run_cut_short_ends_where_its_history_ends_and_two_runs_stay_apart() {
    let items = ["A", "B"];
    let mut s = Session::new();
    s.push(item("r1", 0, &items));
    s.push(Message::assistant("A done.", None, vec![]));
    s.push(item("r2", 0, &items));
    let mut cut = Message::assistant("Half", None, vec![]);
    cut.incomplete = Some(crate::agent::session::Incomplete::Interrupted);
    s.push(cut);
    let events = add_plan_events(&s, replay_without_plans(&s));
    let finished: Vec<&PlanSummary> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Plan(PlanEvent::Finished(summary)) => Some(summary),
            _ => None,
        })
        .collect();
    assert_eq!(finished.len(), 2);
    assert_eq!((finished[0].done, finished[0].stopped.clone()), (1, None));
    assert!(
        !finished[0].completed(),
        "the first run stopped after one of two items"
    );
    assert_eq!(finished[1].stopped, Some((0, ItemState::Interrupted, None)));
}

#[test]
fn a_session_without_plans_is_left_as_it_is() {
    let mut s = Session::new();
    s.push(Message::user("hi"));
    s.push(Message::assistant("hello", None, vec![]));
    let events = replay(&s, 6);
    assert!(!events.iter().any(|e| matches!(e, AgentEvent::Plan(_))));
}

/// The replay as it is before the plan events are added.
fn replay_without_plans(s: &Session) -> Vec<AgentEvent> {
    replay(s, 6)
        .into_iter()
        .filter(|e| !matches!(e, AgentEvent::Plan(_)))
        .collect()
}
