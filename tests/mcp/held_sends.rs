//! Sends hc holds: a draft typed at the terminal's keyboard (control
//! `type`, no Enter) holds a send until it is submitted or cleared, at most
//! the core's draft protection. A send held past `timeoutMs` still ends
//! `sent` within `sendTimeoutMs`, with progress meanwhile; a draft that
//! stays gives `not_sent`/`not_started` with nothing written.

use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{self, structured};
use crate::support::waits::{ProgressRecorder, agents, wait_status};
use crate::support::world::{World, approve_all};
use crate::support::{PATIENCE, Sim, SimOptions, eventually, in_process};

fn type_at(sim: &Sim, address: &str, keys: &str) {
    sim.control("type", json!({"address": address, "text": keys}));
}

async fn answer(handle: rmcp::service::RequestHandle<rmcp::RoleClient>) -> Value {
    let answer = tokio::time::timeout(PATIENCE, handle.await_response())
        .await
        .expect("the send ended")
        .expect("a tool result");
    let rmcp::model::ServerResult::CallToolResult(result) = answer else {
        panic!("not a tool result: {answer:?}")
    };
    structured(&result).clone()
}

#[tokio::test]
async fn a_send_held_by_a_draft_past_timeout_ms_is_sent_once_the_draft_clears() {
    let sim = Sim::start(agents(1, 300));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": approve_all(&hc).await,
        "timeoutMs": 1000,
        "sendTimeoutMs": 30000,
    }));
    let recorder = ProgressRecorder::default();
    let client = in_process::stdio_with(recorder.clone(), &config)
        .await
        .client;
    type_at(&sim, "t1", "half a thought");
    let started = std::time::Instant::now();
    let args = json!({"address": "t1", "text": "the coordinator's prompt"});
    let handle = mcp::start_call(&client, "send_prompt", args).await;
    // Held past timeoutMs (1 s), the caller hearing why meanwhile (every
    // tenth of the real 5 s at the test pace), and nothing written.
    let progress = eventually(
        "progress past timeoutMs while hc holds the send",
        async || {
            recorder
                .0
                .lock()
                .unwrap()
                .iter()
                .find(|p| p.progress > 1000.0)
                .cloned()
        },
    )
    .await;
    assert!(
        progress
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("waiting for hc to deliver"),
        "{progress:?}"
    );
    assert_eq!(progress.progress_token, handle.progress_token);
    assert_eq!(sim.writes_to("t1"), 0, "written while the draft was there");
    // The user clears the draft (^U): the held send goes on and lands.
    type_at(&sim, "t1", "\u{15}");
    let out = answer(handle).await;
    assert_eq!(out["outcome"], "sent", "{out}");
    assert!(
        started.elapsed() > std::time::Duration::from_secs(1),
        "not held past timeoutMs"
    );
    assert_eq!(sim.writes_to("t1"), 1);
}

#[tokio::test]
async fn a_draft_that_stays_gives_not_started_with_nothing_written() {
    let world = World::new(
        SimOptions {
            draft_protect_ms: Some(1500),
            ..agents(1, 300)
        },
        json!({}),
    )
    .await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    type_at(&world.sim, "t1", "the user's own words");
    let out = mcp::send_prompt(&world.client, "t1", "must wait for the user").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "not_started", "{out}");
    assert!(
        out["reason"].as_str().unwrap_or_default().contains("draft"),
        "{out}"
    );
    assert_eq!(world.sim.writes_to("t1"), 0, "typed over the user's draft");
    assert_eq!(world.sim.calls("terminal.send"), 1, "resent");
    let lines = world.wait_audit_lines(1).await;
    assert!(
        lines[0].contains("\"reason\":\"not_started\""),
        "{}",
        lines[0]
    );
}

#[tokio::test]
async fn a_send_cancelled_while_hc_holds_it_is_settled_by_hc_not_by_the_cancel() {
    let world = World::new(agents(1, 300), json!({"sendTimeoutMs": 30000})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    type_at(&world.sim, "t1", "draft");
    let args = json!({"address": "t1", "text": "sent though cancelled"});
    let handle = mcp::start_call(&world.client, "send_prompt", args).await;
    world.sim.wait_for_calls("terminal.send", 0).await;
    handle
        .cancel(Some("the host gave up".into()))
        .await
        .expect("cancel");
    // hc still holds the request; once the draft clears it delivers it,
    // and the record says so: a cancel after dispatch is never "not sent".
    type_at(&world.sim, "t1", "\u{15}");
    let lines = world.wait_audit_lines(1).await;
    assert!(lines[0].contains("\"outcome\":\"sent\""), "{}", lines[0]);
    assert_eq!(world.sim.writes_to("t1"), 1);
}

/// Eight sends held by users' drafts (the most the adapter ever starts at
/// once is its sends' share, 4; the other four wait for a place and are
/// refused as queued, nothing written): list, read, a wait on an idle
/// terminal, a fleet wait with `since` and a send's preflight all find a
/// connection, and no answer blames hc for the adapter's own queue.
#[tokio::test]
async fn eight_held_sends_never_starve_reads_waits_or_other_preflights() {
    let world = World::new(
        agents(10, 300),
        json!({"timeoutMs": 1000, "sendTimeoutMs": 30000}),
    )
    .await;
    let terminals: Vec<String> = world
        .hc
        .list(false)
        .await
        .unwrap()
        .value
        .terminals
        .into_iter()
        .map(|t| t.address)
        .collect();
    for address in &terminals {
        wait_status(&world.hc, address, TerminalStatus::Idle).await;
    }
    let (drafted, free) = terminals.split_at(8);
    let (idle, free) = (&free[0], &free[1]);
    for address in drafted {
        type_at(&world.sim, address, "a user's half-typed draft");
    }
    let mut held = Vec::new();
    for address in drafted {
        let args = json!({"address": address, "text": format!("prompt to {address}")});
        held.push(mcp::start_call(&world.client, "send_prompt", args).await);
    }
    // Four reach hc and are held there; the rest wait for a place.
    world.sim.wait_for_calls("terminal.send", 3).await;
    let listed = mcp::call(&world.client, "list_sessions", json!({})).await;
    assert!(!mcp::is_error(&listed), "{listed:?}");
    let since = structured(&listed)["since"].clone();
    let read = mcp::call(&world.client, "read_output", json!({"address": idle})).await;
    assert!(!mcp::is_error(&read), "{read:?}");
    let waited = mcp::call(
        &world.client,
        "wait_for_status",
        json!({"targets": [{"address": idle}], "until": ["idle"], "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(structured(&waited)["outcome"], "reached", "{waited:?}");
    let fleet = mcp::call(
        &world.client,
        "wait_for_status",
        json!({"since": since, "timeout_ms": 1000}),
    )
    .await;
    assert!(!mcp::is_error(&fleet), "{fleet:?}");
    // A send to a free idle terminal: its preflight finds a connection; its
    // dispatch waits for a place among the sends (timeoutMs) and is refused
    // as the adapter's own queue, with nothing written.
    let queued = mcp::send_prompt(&world.client, free, "to a free terminal").await;
    assert_eq!(queued["outcome"], "not_sent", "{queued}");
    assert_eq!(queued["reason_code"], "sends_queued", "{queued}");
    assert_eq!(queued["preflight_status"], "idle", "{queued}");
    let reason = queued["reason"].as_str().unwrap();
    assert!(reason.contains("this adapter's own sends"), "{reason}");
    assert!(reason.contains("hc is not at fault"), "{reason}");
    assert!(!reason.contains("check hc"), "{reason}");
    assert_eq!(world.sim.writes_to(free), 0);
    // The drafts clear: every held send lands once; the queued ones were
    // never dispatched.
    for address in drafted {
        type_at(&world.sim, address, "\u{15}");
    }
    let mut sent = 0;
    for handle in held {
        let out = answer(handle).await;
        match out["outcome"].as_str() {
            Some("sent") => sent += 1,
            Some("not_sent") => assert_eq!(out["reason_code"], "sends_queued", "{out}"),
            _ => panic!("neither sent nor queued: {out}"),
        }
    }
    assert_eq!(sent, 4, "the sends' share");
    assert_eq!(world.sim.calls("terminal.send"), 4);
    assert_eq!(world.sim.writes().len(), 4);
    assert_eq!(world.wait_audit_lines(9).await.len(), 9);
}
