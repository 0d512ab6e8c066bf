//! The step limit in the real binary: the notice offers Enter to go on for another round, and
//! Enter on the empty input sends `continue`.

use serde_json::json;

use crate::pty::{CTRL_D, ENTER, Launch};
use crate::support::{MockServer, SseBuilder};

#[test]
fn enter_after_the_step_limit_goes_on_for_another_round() {
    let (server, _rt) = MockServer::start_blocking(vec![
        SseBuilder::calls("c1", "get_current_time", json!({"timezone": "UTC"})),
        SseBuilder::answer("Finished after all."),
    ]);
    let dir = tempfile::tempdir().unwrap();
    let mut s = Launch::ui(dir.path(), &server.url())
        .key("sk-x")
        .args(["--max-steps", "1"])
        .start();
    s.wait_for("deepseek-flash");
    s.submit("what time is it");
    s.wait_for("Press Enter to go");
    s.send(ENTER);
    s.wait_for("Finished after all.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let last_user = requests[1].json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .cloned()
        .unwrap();
    assert_eq!(last_user["content"], "continue");
    s.send(CTRL_D);
    assert_eq!(s.wait_exit(), 0);
}
