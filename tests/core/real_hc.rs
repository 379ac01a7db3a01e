//! Against a core that answers the way public clients show real cores
//! answer (`hc-sim --evidence`: human-text error messages with a hint,
//! records with extra fields and without title, submit_key, rows and cols,
//! an agent at `machine/t7`, a record showing the status `paused`): every
//! tool and `allow` work, the safety rules hold unchanged, and the input
//! log shows exactly the sends that answered `sent`.

use serde_json::{Value, json};

use crate::support::mcp::{self, call, structured};
use crate::support::{Sim, SimOptions, in_process, run_adapter, sha256_hex};

const REMOTE: &str = "machine/t7";

fn evidence_sim() -> Sim {
    Sim::start(SimOptions {
        agents: 1,
        evidence: true,
        ..SimOptions::default()
    })
}

/// The session list's record of `address`.
fn session<'a>(listed: &'a Value, address: &str) -> &'a Value {
    listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["address"] == address)
        .unwrap_or_else(|| panic!("no {address} in {listed}"))
}

/// The record showing a status outside the six.
fn odd_address(listed: &Value) -> String {
    listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["reported_status"] == "paused")
        .unwrap_or_else(|| panic!("no record showing paused in {listed}"))["address"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn every_read_tool_works_against_an_evidence_core() {
    let sim = evidence_sim();
    let config = sim.config(json!({}));
    let client = in_process::stdio(&config).await;

    let listed = call(&client, "list_sessions", json!({})).await;
    let listed = structured(&listed).clone();
    assert_eq!(listed["unreadable"], json!([]), "{listed}");
    let remote = session(&listed, REMOTE);
    assert_eq!(remote["title"], Value::Null, "{remote}");
    assert_eq!(remote["submit_key"], Value::Null, "{remote}");
    assert!(
        remote.get("argv").is_none(),
        "extra fields are not passed on: {remote}"
    );
    let odd = session(&listed, &odd_address(&listed));
    assert_eq!(odd["status"], "unknown", "{odd}");

    let read = call(&client, "read_output", json!({"address": REMOTE})).await;
    assert!(!mcp::is_error(&read), "{read:?}");
    assert!(
        structured(&read)["text"]
            .as_str()
            .unwrap()
            .contains("sim-agent>")
    );

    let waited = call(
        &client,
        "wait_for_status",
        json!({"targets": [{"address": REMOTE}], "until": ["idle"], "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(structured(&waited)["outcome"], "reached", "{waited:?}");

    let handle = mcp::start_call(
        &client,
        "wait_for_output",
        json!({"address": "t1", "pattern": "^evidence seen$", "timeout_ms": 20000}),
    )
    .await;
    let reads = sim.calls("terminal.read");
    sim.wait_for_calls("terminal.read", reads).await;
    sim.control(
        "emit",
        json!({"address": "t1", "text": "\r\nevidence seen\r\n"}),
    );
    let answer = handle.await_response().await.expect("a tool result");
    let rmcp::model::ServerResult::CallToolResult(output) = answer else {
        panic!("not a tool result: {answer:?}")
    };
    assert_eq!(structured(&output)["outcome"], "matched", "{output:?}");
}

#[tokio::test]
async fn an_evidence_core_is_approved_and_prompted_exactly_as_the_rules_say() {
    let sim = evidence_sim();
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let (code, out, err) = run_adapter(&["allow", "--config", path, REMOTE], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("address     machine/t7"), "{out}");
    let client = in_process::stdio(&config).await;
    let listed = call(&client, "list_sessions", json!({})).await;
    let odd = odd_address(structured(&listed));
    let (code, out, err) = run_adapter(&["allow", "--mode", "normal", "--config", path, &odd], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("has never reported a status"), "{out}");
    let client = in_process::stdio(&config).await;
    assert_eq!(
        session(
            structured(&call(&client, "list_sessions", json!({})).await),
            REMOTE
        )["send_approved"],
        true
    );

    // Prompted at its opaque address, it answers.
    let sent = mcp::send_prompt(&client, REMOTE, "hello remote machine").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    let waited = call(
        &client,
        "wait_for_status",
        json!({"targets": [{"address": REMOTE, "after_seq": sent["core_status_seq"]}],
            "until": ["done"], "timeout_ms": 20000}),
    )
    .await;
    assert_eq!(structured(&waited)["outcome"], "reached", "{waited:?}");
    let read = call(&client, "read_output", json!({"address": REMOTE})).await;
    assert!(
        structured(&read)["text"]
            .as_str()
            .unwrap()
            .contains("reply: hello remote machine"),
        "{read:?}"
    );

    // Done, not idle: hc's guard refuses, in human words; nothing is sent.
    let refused = mcp::send_prompt(&client, REMOTE, "a follow-up").await;
    assert_eq!(refused["outcome"], "not_sent", "{refused}");
    assert_eq!(refused["reason_code"], "status_mismatch", "{refused}");

    // normal mode never takes a status outside the six for idle or done:
    // refused before dispatch.
    let sends = sim.calls("terminal.send");
    let odd_send = mcp::send_prompt(&client, &odd, "to the paused record").await;
    assert_eq!(odd_send["outcome"], "not_sent", "{odd_send}");
    assert_eq!(odd_send["reason_code"], "status_not_allowed", "{odd_send}");
    assert_eq!(odd_send["preflight_status"], "unknown", "{odd_send}");
    assert_eq!(sim.calls("terminal.send"), sends, "it reached hc");

    // The input log holds exactly the one send that answered `sent`.
    let writes = sim.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["address"], REMOTE);
    assert_eq!(writes[0]["sha256"], sha256_hex("hello remote machine"));
}

#[tokio::test]
async fn inspect_core_lists_an_evidence_core_as_it_is() {
    let sim = evidence_sim();
    let config = sim.config(json!({}));
    let (code, out, err) =
        run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(REMOTE), "{out}");
    assert!(out.contains("unknown (paused)"), "{out}");
    assert!(!out.contains("unreadable"), "{out}");
}
