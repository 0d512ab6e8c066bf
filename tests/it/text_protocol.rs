//! The text-tag protocol end to end: the agent with a provider's model that calls tools as
//! `<tool_call>` tags, against the scripted model server speaking real SSE.

use crate::support;

use miniclaw::agent::{AgentEvent, TurnOutcome};
use miniclaw::approval::ApprovalMode;
use miniclaw::llm::{Preset, Role, ToolProtocol};
use serde_json::Value;
use support::rig::{Probe, assert_history_valid, observations, rig_local, run};
use support::{Reply, SseBuilder};

/// A reply whose content is `text`, one character per delta.
fn text_reply(text: &str) -> Reply {
    SseBuilder::new()
        .role()
        .content_in_pieces(text, 1)
        .finish("stop")
        .done()
        .build()
}

/// Everything the answer stream showed.
fn shown(events: &[AgentEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ContentDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn sent(r: &support::rig::Rig, n: usize) -> Value {
    r.server.requests()[n].json()
}

#[tokio::test]
async fn tags_split_at_every_byte_run_and_their_results_go_back_as_tool_responses() {
    let calls = "I'll look twice.\n<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"1 </tool_call> 一\"}}</tool_call>\n\
                 <tool_call>{\"name\":\"probe\",\"parameters\":{\"x\":\"2\"}}</tool_call>";
    // Every byte of the stream its own HTTP chunk, too: a read may end inside a tag.
    let bytewise = SseBuilder::new()
        .role()
        .content_in_pieces(calls, 1)
        .finish("stop")
        .done()
        .byte_by_byte()
        .build();
    let script = vec![bytewise, text_reply("Both said hello.")];
    let mut r = rig_local(
        script,
        vec![Probe::new("probe", true)],
        ToolProtocol::Text,
        6,
    )
    .await;
    let (outcome, events) = run(&mut r.agent, "look").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs.len(), 2);
    assert_eq!(obs[0]["echo"]["x"], "1 </tool_call> 一");
    assert_eq!(obs[1]["echo"]["x"], "2");
    // The tags never reach the answer: only the thought and the answer do.
    assert_eq!(shown(&events), "I'll look twice.\n\nBoth said hello.");

    let first = sent(&r, 0);
    assert!(first.get("tools").is_none(), "no tools field: {first}");
    assert_eq!(first["model"], "small");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("## probe\ntest probe\nArguments: {"),
        "{system}"
    );
    assert!(system.contains("<tool_call>{\"name\": \"TOOL_NAME\""));

    let second = sent(&r, 1);
    let messages = second["messages"].as_array().unwrap();
    let assistant = &messages[messages.len() - 2];
    assert_eq!(assistant["role"], "assistant");
    assert!(assistant.get("tool_calls").is_none());
    let said = assistant["content"].as_str().unwrap();
    assert!(
        said.starts_with("I'll look twice.\n<tool_call>{\"name\":\"probe\""),
        "{said}"
    );
    assert_eq!(said.matches("</tool_call>").count(), 3, "{said}");
    let results = messages.last().unwrap();
    assert_eq!(results["role"], "user");
    let blocks: Vec<&str> = results["content"].as_str().unwrap().split('\n').collect();
    assert_eq!(blocks.len(), 2, "{results}");
    for (block, x) in blocks.iter().zip(["1 </tool_call> 一", "2"]) {
        let json = block
            .strip_prefix("<tool_response>")
            .and_then(|b| b.strip_suffix("</tool_response>"))
            .unwrap();
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["echo"]["x"], x);
    }
    assert!(messages.iter().all(|m| m["role"] != "tool"));

    // The history keeps the calls in the one shape every protocol shares.
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    let call_message = session
        .messages
        .iter()
        .find(|m| !m.tool_calls.is_empty())
        .unwrap();
    assert_eq!(call_message.content, "I'll look twice.\n\n");
    assert_eq!(
        call_message.tool_calls[1].function.arguments,
        r#"{"x":"2"}"#
    );
}

#[tokio::test]
async fn broken_json_and_an_unclosed_tag_become_error_observations_and_the_loop_goes_on() {
    let broken = "Let me try.<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": }</tool_call>";
    let unclosed = "Again.\n<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"3\"}}";
    let script = vec![
        text_reply(broken),
        text_reply(unclosed),
        text_reply("I could not call it."),
    ];
    let mut r = rig_local(
        script,
        vec![Probe::new("probe", true)],
        ToolProtocol::Text,
        6,
    )
    .await;
    let (outcome, events) = run(&mut r.agent, "try").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let obs = observations(&events);
    assert_eq!(obs.len(), 2, "{obs:?}");
    assert_eq!(obs[0]["ok"], false);
    let first = obs[0]["error"].as_str().unwrap();
    assert!(first.contains("not valid JSON"), "{first}");
    let second = obs[1]["error"].as_str().unwrap();
    assert!(second.contains("not closed with </tool_call>"), "{second}");
    assert!(obs.iter().all(|o| o.get("echo").is_none()), "nothing ran");
    let text = shown(&events);
    assert_eq!(text, "Let me try.Again.\nI could not call it.");

    // The model reads what was wrong, and its own tag as it wrote it.
    let messages = sent(&r, 1)["messages"].as_array().unwrap().clone();
    let assistant = &messages[messages.len() - 2];
    let tag = &broken[broken.find('<').unwrap()..];
    assert_eq!(assistant["content"], format!("Let me try.\n{tag}"));
    let results = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(
        results.starts_with("<tool_response>{\"ok\":false"),
        "{results}"
    );
    assert!(results.contains("not valid JSON"), "{results}");
    let messages = sent(&r, 2)["messages"].as_array().unwrap().clone();
    assert_eq!(messages[messages.len() - 2]["content"], unclosed);
    assert_history_valid(&r.dir.path().join("history.json"));
}

#[tokio::test]
async fn a_tag_in_a_code_fence_or_in_the_reasoning_is_not_a_call() {
    let fenced = "Call it like this:\n```\n<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"f\"}}</tool_call>\n```\n";
    let reply = SseBuilder::new()
        .role()
        .reasoning(&[
            "maybe <tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"r\"}}</tool_call>",
        ])
        .content_in_pieces(fenced, 3)
        .content_in_pieces("<think>not at the start</think>", 2)
        .finish("stop")
        .done()
        .build();
    let mut r = rig_local(
        vec![reply],
        vec![Probe::new("probe", true)],
        ToolProtocol::Text,
        6,
    )
    .await;
    let (outcome, events) = run(&mut r.agent, "how?").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    assert!(observations(&events).is_empty());
    assert_eq!(r.server.requests().len(), 1);
    assert_eq!(
        shown(&events),
        format!("{fenced}<think>not at the start</think>")
    );
}

#[tokio::test]
async fn a_think_block_in_the_content_is_reasoning() {
    let reply = text_reply("<think>The probe, <tool_call>not this</tool_call>.</think>Fine.");
    let mut r = rig_local(vec![reply], vec![], ToolProtocol::Text, 6).await;
    let (outcome, events) = run(&mut r.agent, "think").await;
    assert_eq!(outcome, TurnOutcome::Answered);
    let reasoning: String = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ReasoningDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(reasoning, "The probe, <tool_call>not this</tool_call>.");
    assert_eq!(shown(&events), "Fine.");
}

#[tokio::test]
async fn the_guard_the_step_limit_and_approvals_act_as_with_native_calls() {
    let same = "<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"a\"}}</tool_call>";
    let change = "<tool_call>{\"name\": \"change\", \"arguments\": {\"x\": \"b\"}}</tool_call>";
    let script = vec![
        text_reply(same),
        text_reply(&format!("{same}{change}")),
        text_reply(same),
    ];
    let tools = vec![Probe::new("probe", true), Probe::new("change", false)];
    let mut r = rig_local(script, tools, ToolProtocol::Text, 3).await;
    r.agent = r.agent.with_approvals(ApprovalMode::ReadOnly, None);
    let (outcome, events) = run(&mut r.agent, "loop").await;
    assert_eq!(outcome, TurnOutcome::StepLimit);
    let obs = observations(&events);
    assert_eq!(obs.len(), 4, "{obs:?}");
    assert_eq!(obs[0]["echo"]["x"], "a");
    let repeated = obs[1]["error"].as_str().unwrap();
    assert!(repeated.starts_with("not run again"), "{repeated}");
    assert_eq!(obs[2]["ok"], false, "read-only mode refuses the change");
    assert!(obs[2].get("echo").is_none());
    let again = obs[3]["error"].as_str().unwrap();
    assert!(again.starts_with("not run again"), "{again}");
    assert!(
        events
            .iter()
            .any(|e| matches!(e, AgentEvent::StepLimitReached { .. }))
    );
    assert_eq!(r.server.requests().len(), 3);
}

#[tokio::test]
async fn a_session_switches_between_the_protocols_at_any_step() {
    let native = SseBuilder::calls("n1", "probe", serde_json::json!({"x": "native"}));
    let script = vec![
        native,
        SseBuilder::answer("native done"),
        text_reply(
            "<tool_call>{\"name\": \"probe\", \"arguments\": {\"x\": \"text\"}}</tool_call>",
        ),
        text_reply("text done"),
        SseBuilder::answer("back"),
    ];
    let mut r = rig_local(
        script,
        vec![Probe::new("probe", true)],
        ToolProtocol::Text,
        6,
    )
    .await;
    let text_preset = r.agent.current_preset();
    r.agent.set_preset(Preset::Flash);
    assert_eq!(run(&mut r.agent, "one").await.0, TurnOutcome::Answered);
    r.agent.set_preset(text_preset);
    assert_eq!(run(&mut r.agent, "two").await.0, TurnOutcome::Answered);
    r.agent.set_preset(Preset::Flash);
    assert_eq!(run(&mut r.agent, "three").await.0, TurnOutcome::Answered);

    // In the text protocol, the native turn's call is a tag and its result a response block.
    let text_request = sent(&r, 2);
    let messages = text_request["messages"].as_array().unwrap();
    assert!(
        messages
            .iter()
            .all(|m| m.get("tool_calls").is_none() && m["role"] != "tool")
    );
    let joined: Vec<&str> = messages
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    let joined = joined.join("\n");
    assert!(
        joined.contains(
            "<tool_call>{\"name\":\"probe\",\"arguments\":{\"x\":\"native\"}}</tool_call>"
        )
    );
    assert!(joined.contains("<tool_response>{\"ok\":true,\"tool\":\"probe\""));
    // Back on DeepSeek, the text turn's call is a native call with its tool message.
    let back = sent(&r, 4);
    let messages = back["messages"].as_array().unwrap();
    let calls: Vec<&Value> = messages
        .iter()
        .filter_map(|m| m.get("tool_calls"))
        .flat_map(|c| c.as_array().unwrap())
        .collect();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1]["function"]["arguments"], r#"{"x":"text"}"#);
    let tools = messages.iter().filter(|m| m["role"] == "tool").count();
    assert_eq!(tools, 2);
    assert!(back.get("tools").is_some());
    let session = assert_history_valid(&r.dir.path().join("history.json"));
    assert_eq!(
        session
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count(),
        2
    );
}
