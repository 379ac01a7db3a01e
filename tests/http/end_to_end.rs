//! The tools end to end over Streamable HTTP, and the same scenarios over
//! stdio, each transport with its own simulator.

use std::path::PathBuf;
use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::http::spawn_http;
use crate::support::mcp::{self, Client, call, is_error, structured};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions};

/// The terminals of a scenario: `approved` is on the allowlist, `unapproved`
/// is not; both are idle agents.
struct Cast<'a> {
    sim: &'a Sim,
    hc: &'a HcClient,
    approved: &'a str,
    unapproved: &'a str,
}

async fn scenario_list_sessions(client: &Client, cast: &Cast<'_>) {
    let result = call(client, "list_sessions", json!({})).await;
    assert!(!is_error(&result), "{result:?}");
    let out = structured(&result);
    assert_eq!(out["core_id"], cast.sim.core_id.as_str(), "{out}");
    let sessions = out["sessions"].as_array().expect("sessions");
    let approval = |address: &str| {
        sessions
            .iter()
            .find(|s| s["address"] == address)
            .unwrap_or_else(|| panic!("{address} not listed: {out}"))["send_approved"]
            .clone()
    };
    assert_eq!(approval(cast.approved), true, "{out}");
    assert_eq!(approval(cast.unapproved), false, "{out}");
    assert_eq!(out["next_cursor"], Value::Null, "{out}");
}

async fn scenario_read_output(client: &Client, cast: &Cast<'_>) {
    let result = call(client, "read_output", json!({"address": cast.approved})).await;
    assert!(!is_error(&result), "{result:?}");
    let out = structured(&result);
    let screen = cast
        .hc
        .read(cast.approved)
        .await
        .expect("terminal.read")
        .value
        .text;
    assert!(!screen.is_empty(), "the agent shows nothing");
    assert_eq!(out["text"], screen.as_str(), "{out}");
    assert_eq!(out["address"], cast.approved);
    assert_eq!(out["core_id"], cast.sim.core_id.as_str());
    assert_eq!(out["total_chars"], screen.chars().count());
    assert_eq!(out["truncated"], false);
    assert!(
        out["notice"]
            .as_str()
            .is_some_and(|n| n.to_lowercase().contains("untrusted")),
        "{out}"
    );
}

async fn scenario_send_to_approved_idle_agent(client: &Client, cast: &Cast<'_>) {
    assert_eq!(cast.sim.writes_to(cast.approved), 0);
    let result = call(
        client,
        "send_prompt",
        json!({"address": cast.approved, "text": "summarise the build log"}),
    )
    .await;
    let out = structured(&result);
    assert!(!is_error(&result), "{out}");
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["preflight_status"], "idle", "{out}");
    assert_eq!(out["atomic_status_guard"], "idle", "{out}");
    assert_eq!(cast.sim.writes_to(cast.approved), 1, "exactly one write");
}

async fn scenario_refused_send_to_unapproved(client: &Client, cast: &Cast<'_>) {
    let result = call(
        client,
        "send_prompt",
        json!({"address": cast.unapproved, "text": "rm -rf /"}),
    )
    .await;
    let out = structured(&result);
    assert!(is_error(&result), "{out}");
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "not_approved", "{out}");
    assert_eq!(
        cast.sim.writes_to(cast.unapproved),
        0,
        "a refused send wrote"
    );
}

#[derive(Debug, Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

/// The same scenarios over each transport, each with its own simulator.
#[tokio::test]
async fn tools_end_to_end_over_streamable_http() {
    for transport in [Transport::Http, Transport::Stdio] {
        let sim = Sim::start(SimOptions::agents(2));
        let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
        for a in ["t1", "t2"] {
            wait_status(&hc, a, TerminalStatus::Idle).await;
        }
        let t1 = hc.get("t1").await.unwrap().value;
        let allowlist = json!([{"address": "t1", "created_ms": t1.created_ms}]);
        let extra = json!({"coreId": sim.core_id, "sendAllowlist": allowlist});
        let stderr_log: PathBuf = sim.dir.path().join("e2e.stderr");
        let (client, _adapter) = match transport {
            Transport::Http => {
                let adapter = spawn_http(&sim, extra).await;
                (adapter.client().await, Some(adapter))
            }
            Transport::Stdio => (mcp::stdio(&sim.config(extra), &stderr_log).await, None),
        };
        let cast = Cast {
            sim: &sim,
            hc: &hc,
            approved: "t1",
            unapproved: "t2",
        };
        scenario_list_sessions(&client, &cast).await;
        scenario_read_output(&client, &cast).await;
        scenario_refused_send_to_unapproved(&client, &cast).await;
        scenario_send_to_approved_idle_agent(&client, &cast).await;
        assert_eq!(sim.writes().len(), 1, "{transport:?}: one write in all");
        client.cancel().await.expect("close the MCP session");
    }
}

/// A path other than `/mcp` (a trailing slash included) is answered 404
/// with a body naming the endpoint.
#[tokio::test]
async fn another_path_is_a_404_naming_the_endpoint() {
    let sim = crate::support::Sim::start(crate::support::SimOptions::default());
    let adapter = crate::support::http::serve_http(&sim, serde_json::json!({})).await;
    for path in ["/mcp/", "/", "/api/mcp"] {
        let request = crate::support::http::request::Req::mcp(adapter.port)
            .target(path)
            .bytes();
        let reply = crate::support::http::response::exchange(adapter.port, &request, false)
            .await
            .unwrap();
        assert_eq!(reply.status, 404, "{path}: {}", reply.summary());
        assert!(
            String::from_utf8_lossy(&reply.body)
                .contains("the MCP endpoint of this server is /mcp"),
            "{path}: {}",
            reply.summary()
        );
    }
}
