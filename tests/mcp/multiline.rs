//! Multi-line prompts: refused (before any hc call) for a terminal not
//! approved for them, sent as they are where the operator allowed them.

use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{call, send_prompt, structured};
use crate::support::waits::wait_status;
use crate::support::world::World;
use crate::support::{Sim, SimOptions, in_process};

/// The screen of `address` once it contains `needle`.
async fn screen_with(world: &World, address: &str, needle: &str) -> String {
    crate::support::eventually(&format!("{needle:?} on screen"), async || {
        let text = world.hc.read(address).await.unwrap().value.text;
        text.contains(needle).then_some(text)
    })
    .await
}

#[tokio::test]
async fn a_multi_line_prompt_never_reaches_a_terminal_not_approved_for_it() {
    let readers = SimOptions {
        readers: 1,
        ..SimOptions::default()
    };
    let world = World::new(readers, json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let (gets, sends) = (
        world.sim.calls("terminal.get"),
        world.sim.calls("terminal.send"),
    );
    // The old hole: line 1 makes a line-reading program ask, line 2 is
    // typed into the question.
    for (text, named) in [
        ("ask\nSECOND-LINE", "LF (U+000A) at character 3"),
        ("ls\t", "TAB (U+0009) at character 2"),
    ] {
        let result = call(
            &world.client,
            "send_prompt",
            json!({"address": "t1", "text": text}),
        )
        .await;
        let out = structured(&result);
        assert_eq!(out["outcome"], "not_sent", "{out}");
        assert_eq!(out["reason_code"], "control_character", "{out}");
        let reason = out["reason"].as_str().unwrap();
        assert!(
            reason.contains(named) && reason.contains("allow --multiline"),
            "{reason}"
        );
    }
    assert_eq!(
        world.sim.calls("terminal.get"),
        gets,
        "refused before any hc call"
    );
    assert_eq!(world.sim.calls("terminal.send"), sends);
    assert_eq!(world.sim.writes().len(), 0);
    let listed = structured(&call(&world.client, "list_sessions", json!({})).await).clone();
    assert_eq!(listed["sessions"][0]["send_approved"], true, "{listed}");
    assert_eq!(
        listed["sessions"][0]["multiline_allowed"], false,
        "{listed}"
    );
    // One line still goes, and the reader takes it as one line.
    let out = send_prompt(&world.client, "t1", "one line only").await;
    assert_eq!(out["outcome"], "sent", "{out}");
    screen_with(&world, "t1", "line: one line only").await;
}

#[tokio::test]
async fn multi_line_prompts_go_only_where_the_operator_allowed_them() {
    let sim = Sim::start(SimOptions {
        readers: 2,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    for address in ["t1", "t2"] {
        wait_status(&hc, address, TerminalStatus::Idle).await;
    }
    let t1 = hc.get("t1").await.unwrap().value.created_ms;
    let t2 = hc.get("t2").await.unwrap().value.created_ms;
    let allowlist = json!([
        {"address": "t1", "created_ms": t1, "multiline": true},
        {"address": "t2", "created_ms": t2},
    ]);
    let config = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    let client = in_process::stdio(&config).await;
    let listed = structured(&call(&client, "list_sessions", json!({})).await).clone();
    let allowed: Vec<(Value, Value)> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["address"].clone(), s["multiline_allowed"].clone()))
        .collect();
    assert_eq!(
        allowed,
        [(json!("t1"), json!(true)), (json!("t2"), json!(false))]
    );
    let refused = send_prompt(&client, "t2", "ask\nSECOND-LINE").await;
    assert_eq!(refused["reason_code"], "control_character", "{refused}");
    assert_eq!(sim.writes_to("t2"), 0);
    // The operator's decision for t1: the paste goes as it is.
    let sent = send_prompt(&client, "t1", "ask\nSECOND-LINE").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    assert_eq!(sim.writes_to("t1"), 1);
}
