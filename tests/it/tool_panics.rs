//! A panic inside a tool (its future, or its blocking work) is that call's error observation; the
//! registry, the agent turn and the next calls go on.

use crate::support;

use std::sync::Arc;

use futures::FutureExt;
use miniclaw::agent::TurnOutcome;
use miniclaw::llm::{Preset, ToolSchema};
use miniclaw::tools::panic_guard::{self, in_tool_call};
use miniclaw::tools::{Sandbox, Tool, ToolContext, ToolFuture, ToolRegistry};
use serde_json::{Map, Value, json};
use support::SseBuilder;
use support::rig::{Probe, observations, rig_with, run};

/// A tool that panics where its `where` argument says: "future" or "blocking".
struct Panicky;

impl Tool for Panicky {
    fn schema(&self) -> ToolSchema {
        ToolSchema {
            name: "panicky".into(),
            description: "panics on purpose".into(),
            parameters: json!({"type": "object", "properties": {"where": {"type": "string"}}}),
        }
    }

    fn read_only(&self) -> bool {
        true
    }

    fn call<'a>(&'a self, args: Map<String, Value>, _ctx: &'a ToolContext) -> ToolFuture<'a> {
        async move {
            let place = args.get("where").and_then(Value::as_str).unwrap_or("");
            match place {
                "future" => panic!("panicky broke in its future"),
                "blocking" => {
                    panic_guard::spawn_blocking(|| -> () { panic!("panicky broke on a worker") })
                        .await?;
                }
                _ => {}
            }
            Ok(Map::new())
        }
        .boxed()
    }
}

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    r.register(Panicky);
    r.register(Probe::new("probe", true));
    r
}

#[tokio::test]
async fn a_panic_in_a_tool_future_or_its_blocking_work_is_the_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::standalone(Arc::new(Sandbox::new(dir.path()).unwrap()));
    let r = registry();
    for (place, message) in [
        ("future", "panicky broke in its future"),
        ("blocking", "panicky broke on a worker"),
    ] {
        let args = json!({ "where": place }).to_string();
        let obs = r.execute("panicky", &args, &ctx).await;
        assert_eq!(obs["ok"], false, "{obs}");
        assert_eq!(
            obs["error"],
            format!("the tool failed unexpectedly (a bug): {message}"),
            "{obs}"
        );
        assert!(!in_tool_call(), "the scope ends with the call");
        // The registry and the tools still work.
        let next = r.execute("probe", r#"{"x": "after"}"#, &ctx).await;
        assert_eq!(next["ok"], true, "{next}");
        let again = r.execute("panicky", r#"{"where": "nowhere"}"#, &ctx).await;
        assert_eq!(again["ok"], true, "{again}");
    }
}

#[tokio::test]
async fn a_turn_goes_on_after_a_tool_panics() {
    let script = vec![
        SseBuilder::new()
            .role()
            .tool_call(0, "call_1", "panicky", &json!({"where": "future"}), 2)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .role()
            .tool_call(0, "call_2", "panicky", &json!({"where": "blocking"}), 2)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::new()
            .role()
            .tool_call(0, "call_3", "probe", &json!({"x": "still here"}), 2)
            .finish("tool_calls")
            .done()
            .build(),
        SseBuilder::answer("Recovered."),
    ];
    let mut r = rig_with(script, registry(), Preset::Flash, 6, |c| c).await;
    let (outcome, events) = run(&mut r.agent, "break things").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs.len(), 3, "{obs:?}");
    for o in &obs[..2] {
        assert_eq!(o["ok"], false, "{o}");
        assert!(
            o["error"]
                .as_str()
                .unwrap()
                .starts_with("the tool failed unexpectedly (a bug): panicky broke"),
            "{o}"
        );
    }
    assert_eq!(obs[2]["ok"], true, "{}", obs[2]);
    // The model saw the error as the call's result.
    let reqs = r.server.requests();
    let second = reqs[1].json();
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(tool_msg["role"], "tool");
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("failed unexpectedly"),
        "{tool_msg}"
    );
}
