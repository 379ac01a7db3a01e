//! A wait binds to the lifetime it saw first, core included. A wait on an
//! address without `created_ms` used to follow the address into a
//! restarted hc and time out there, watching a terminal nobody asked for.

use serde_json::{Value, json};

use crate::support::mcp::{self, structured};
use crate::support::{Sim, SimOptions};

/// Starts `tool` with `args` on an in-process adapter of a simulator, then
/// replaces hc on the same socket path once the wait has polled (the new
/// core's socket renamed over the old one, then the old core crashed, so
/// no poll meets a socket without a core), and returns the wait's result.
async fn across_a_restart(tool: &str, poll_method: &str, args: Value) -> Value {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let client = crate::support::in_process::stdio(&config).await;
    let before = sim.core_id.clone();
    let calls = sim.calls(poll_method);
    let handle = mcp::start_call(&client, tool, args).await;
    sim.wait_for_calls(poll_method, calls).await;
    let restarted = Sim::start(SimOptions::agents(1));
    assert_ne!(
        restarted.core_id, before,
        "a restarted hc has a new core_id"
    );
    std::fs::rename(&restarted.socket, &sim.socket).unwrap();
    let _old_dir = sim.crash();
    let started = std::time::Instant::now();
    let answer = tokio::time::timeout(crate::support::PATIENCE, handle.await_response())
        .await
        .expect("the wait ended after the restart")
        .expect("a tool result");
    let rmcp::model::ServerResult::CallToolResult(result) = answer else {
        panic!("not a tool result: {answer:?}")
    };
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the wait went on past the restart"
    );
    structured(&result).clone()
}

#[tokio::test]
async fn a_status_wait_without_created_ms_ends_when_hc_restarts() {
    let out = across_a_restart(
        "wait_for_status",
        "terminal.get",
        json!({"targets": [{"address": "t1"}], "until": ["error"], "timeout_ms": 60000}),
    )
    .await;
    assert_eq!(out["outcome"], "core_restarted", "{out}");
    assert_eq!(out["address"], "t1", "{out}");
}

#[tokio::test]
async fn an_output_wait_without_created_ms_ends_when_hc_restarts() {
    let out = across_a_restart(
        "wait_for_output",
        "terminal.read",
        json!({"address": "t1", "pattern": "never shown", "timeout_ms": 60000}),
    )
    .await;
    assert_eq!(out["outcome"], "core_restarted", "{out}");
}
