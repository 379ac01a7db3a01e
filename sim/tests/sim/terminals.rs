//! Terminals as hc serves them: the agent's round trip, the `if` guard,
//! the blocked refusal, and addresses reused after removal.

use hc_sim::testing::Options;
use serde_json::json;

use crate::support::{greeted_client, record, screen, send_params, start, wait_for_status};

#[test]
fn agent_round_trip_goes_working_then_done_with_the_reply_on_screen() {
    let sim = start(Options {
        agent_delay_ms: Some(600),
        ..Options::agents(1)
    });
    let mut client = greeted_client(&sim);
    let before = wait_for_status(&mut client, "t1", "idle");
    assert_eq!(before["program"], "sim-agent");

    let sent = client.result(
        "terminal.send",
        send_params("t1", "hello\nsecond line", Some("idle")),
    );
    assert_eq!(sent["accepted"], true);
    assert_eq!(sent["created_ms"], before["created_ms"]);

    let working = wait_for_status(&mut client, "t1", "working");
    assert_eq!(
        working["status_seq"],
        before["status_seq"].as_u64().unwrap() + 1
    );
    let done = wait_for_status(&mut client, "t1", "done");
    assert_eq!(
        done["status_seq"],
        before["status_seq"].as_u64().unwrap() + 2
    );
    let screen = screen(&mut client, "t1");
    let text = screen["text"].as_str().unwrap();
    assert!(
        text.contains("reply: hello\nreply: second line"),
        "screen: {text:?}"
    );
    assert!(
        !text.contains("7501"),
        "status reports are stripped: {text:?}"
    );
    assert_eq!(screen["complete"], true);
    assert_eq!(
        (screen["rows"].as_u64(), screen["cols"].as_u64()),
        (Some(40), Some(120))
    );

    let log = sim.writes();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["address"], "t1");
    assert_eq!(log[0]["bytes"], "hello\nsecond line".len());
}

#[test]
fn guard_mismatch_writes_nothing() {
    let sim = start(Options::agents(1));
    let mut client = greeted_client(&sim);
    let idle = wait_for_status(&mut client, "t1", "idle");

    let error = client.error(
        "terminal.send",
        send_params("t1", "must not arrive", Some("working")),
    );
    assert_eq!(error["code"], -32000);
    assert_eq!(error["message"], "status_mismatch");
    assert_eq!(error["data"]["kind"], "status_mismatch");
    assert_eq!(error["data"]["expected"], "working");
    assert_eq!(error["data"]["actual"], "idle");
    assert_eq!(error["data"]["status_seq"], idle["status_seq"]);
    assert!(sim.writes().is_empty());
    let screen = screen(&mut client, "t1");
    assert!(!screen["text"].as_str().unwrap().contains("must not arrive"));

    let error = client.error("terminal.send", send_params("t1", "x", Some("done")));
    assert_eq!(error["code"], -32602, "`if` accepts only idle and working");
    assert!(sim.writes().is_empty());
}

#[test]
fn a_blocked_agent_refuses_input_until_forced() {
    let sim = start(Options::agents(1));
    let mut client = greeted_client(&sim);
    wait_for_status(&mut client, "t1", "idle");
    client.result("terminal.send", send_params("t1", "do it /block", None));
    wait_for_status(&mut client, "t1", "blocked");

    let error = client.error("terminal.send", send_params("t1", "y", None));
    assert_eq!(
        error,
        json!({ "code": -32003, "message": "blocked", "data": { "kind": "blocked", "address": "t1" } })
    );
    assert_eq!(sim.writes().len(), 1, "the refused send wrote nothing");

    let mut forced = send_params("t1", "y", None);
    forced["force"] = json!(true);
    client.result("terminal.send", forced);
    wait_for_status(&mut client, "t1", "done");
    assert_eq!(sim.writes().len(), 2);
}

#[test]
fn a_removed_address_is_reused_with_a_new_created_ms() {
    let sim = start(Options {
        idle_records: 3,
        ..Options::default()
    });
    let mut client = greeted_client(&sim);
    let old = record(&mut client, "t2");

    sim.control("kill", json!({ "address": "t2" }));
    let finished = client.error("terminal.send", send_params("t2", "x", None));
    assert_eq!(finished["code"], -32002);
    let fresh = sim.spawn("idle");
    assert_eq!(
        fresh["address"], "t4",
        "a finished terminal keeps its address"
    );

    sim.control("remove", json!({ "address": "t2" }));
    assert_eq!(
        client.error("terminal.get", json!({ "address": "t2" }))["code"],
        -32001
    );
    let reused = sim.spawn("idle");
    assert_eq!(reused["address"], "t2");
    assert!(reused["created_ms"].as_u64() > fresh["created_ms"].as_u64());
    assert!(reused["created_ms"].as_u64() > old["created_ms"].as_u64());

    let listed = client.result("terminal.list", json!({ "include_finished": true }));
    let order: Vec<_> = listed["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["address"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, ["t1", "t3", "t4", "t2"], "sorted by created_ms");
}

/// hc's own keyboard-quiet wait (3 s, `--quiet-ms` not given): a send to a
/// terminal nobody has written to types at once; the next one waits until
/// the keyboard has been quiet for 3 s since the first. The input log says
/// whether each send carried `force`.
#[test]
fn a_send_right_after_another_waits_for_three_quiet_seconds() {
    let sim = start(Options {
        idle_records: 1,
        quiet_ms: None,
        ..Options::default()
    });
    let mut client = greeted_client(&sim);
    let started = std::time::Instant::now();
    client.result("terminal.send", send_params("t1", "first", Some("idle")));
    let first = started.elapsed();
    assert!(first < std::time::Duration::from_secs(2), "{first:?}");
    let mut without_force = send_params("t1", "second", Some("idle"));
    without_force.as_object_mut().unwrap().remove("force");
    client.result("terminal.send", without_force);
    let second = started.elapsed();
    assert!(
        second >= std::time::Duration::from_millis(2_900),
        "the second send typed after {second:?}"
    );
    let forced: Vec<_> = sim
        .writes()
        .iter()
        .map(|w| w["force_present"].clone())
        .collect();
    assert_eq!(forced, [json!(true), json!(false)]);
}
