//! Terminal resources and status pushed on change, with the official Python
//! SDK (tests/mcp/resources_client.py) over stdio in both eras: the
//! resources and the template are listed, a terminal is read (its record,
//! never its screen), a subscription is told of each status change once,
//! and after it ends nothing more arrives and the watcher stops listing hc
//! (the simulator's call counters).

use std::path::Path;
use std::time::Duration;

use herdr_core_mcp::wire::TerminalStatus;
use herdr_core_mcp::{HcClient, Pace};
use serde_json::{Value, json};

use crate::support::mcp::{TEST_PACE_DIVISOR, TEST_TOKEN};
use crate::support::waits::wait_status;
use crate::support::world::approve_all;
use crate::support::{Sim, SimOptions, adapter_bin, in_process, python};

/// The watcher's poll interval as `serve` runs it
/// (`mcp::resources::watcher::POLL`): the spawned binary's.
const POLL: Duration = Duration::from_millis(250);

/// The clock the in-process adapters are handed: a tick of 25 ms, at most
/// one notification a terminal every 100 ms (the rule is the same; only
/// the time is shorter).
fn test_pace() -> Pace {
    in_process::test_pace()
}

/// Over stdio (the spawned binary, at the real pace or the test pace) or
/// HTTP (in process, with the tests' token, at the test pace).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Over {
    Stdio,
    StdioAtTestPace,
    Http,
}

async fn watched(era: &str, over: Over) -> (Sim, Value) {
    // The agent works longer than the watcher's least gap between two
    // notifications: 1.5 s beside the binary's 1 s, 400 ms beside the
    // test clock's 100 ms.
    let (agent_delay_ms, settle_secs) = match over {
        Over::Stdio => (1500, "2.5"),
        Over::StdioAtTestPace | Over::Http => (400, "0.6"),
    };
    let sim = Sim::start(SimOptions {
        agents: 1,
        agent_delay_ms: Some(agent_delay_ms),
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let config = json!({
        "coreId": sim.core_id,
        "sendMode": "normal",
        "sendAllowlist": approve_all(&hc).await,
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/resources_client.py");
    let mut command = tokio::process::Command::new(python());
    command
        .arg(script)
        .args(["--era", era, "--settle-secs", settle_secs])
        .kill_on_drop(true);
    let _adapter = match over {
        Over::Stdio | Over::StdioAtTestPace => {
            if over == Over::StdioAtTestPace {
                command.env(herdr_core_mcp::TEST_PACE_ENV, TEST_PACE_DIVISOR);
            }
            let config = sim.config(config);
            command
                .args(["--adapter", adapter_bin().to_str().unwrap()])
                .args(["--config", config.to_str().unwrap()]);
            None
        }
        Over::Http => {
            let adapter = in_process::http_for_paced(&sim, &config, test_pace()).await;
            command
                .args(["--url", &adapter.url()])
                .env("HERDR_MCP_TOKEN", TEST_TOKEN);
            Some(adapter)
        }
    };
    let output = command.output().await.expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "resources_client {era} {over:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("resources_client printed {stdout:?}: {e}"));
    (sim, out)
}

async fn subscribed_in(era: &str, over: Over) {
    let (sim, out) = watched(era, over).await;
    assert_eq!(
        out["resources"],
        json!(["herdr-core://terminal/t1"]),
        "{era}: {out}"
    );
    assert_eq!(
        out["templates"],
        json!(["herdr-core://terminal/{address}"]),
        "{era}"
    );
    assert_eq!(out["mime"], "application/json");
    let read = &out["read"];
    assert_eq!(read["address"], "t1");
    assert_eq!(read["core_id"], sim.core_id.as_str());
    assert_eq!(read["status"], "idle");
    assert_eq!(read["send_approved"], true);
    assert_eq!(read["confirm_required"], false);
    assert!(
        read.get("text").is_none() && !read.to_string().contains("sim-agent> "),
        "a resource never carries the screen: {read}"
    );
    // One update per change: working, then done (the agent's delay apart,
    // more than the watcher's least gap between two), each a new status_seq.
    let updates = out["updates"].as_array().unwrap();
    let statuses: Vec<&str> = updates
        .iter()
        .map(|u| u["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["working", "done"], "{era}: {updates:?}");
    assert!(
        updates
            .iter()
            .all(|u| u["uri"] == "herdr-core://terminal/t1"),
        "{updates:?}"
    );
    let seqs: Vec<u64> = updates
        .iter()
        .map(|u| u["status_seq"].as_u64().unwrap())
        .collect();
    assert!(seqs[0] < seqs[1], "{seqs:?}");
    assert_eq!(out["after_unsubscribe"], 0, "{era}: {out}");
    // Nobody listens: the watcher lists hc no more.
    let poll = match over {
        Over::Stdio => POLL,
        Over::StdioAtTestPace | Over::Http => test_pace().poll,
    };
    let listed = sim.calls("terminal.list");
    tokio::time::sleep(poll * 3).await;
    assert_eq!(
        sim.calls("terminal.list"),
        listed,
        "{era}: hc listed with nobody subscribed"
    );
}

#[tokio::test]
async fn a_legacy_session_subscribes_and_is_told_each_status_change_once() {
    subscribed_in("legacy", Over::Stdio).await;
}

#[tokio::test]
async fn a_current_era_listen_is_told_each_status_change_once() {
    subscribed_in("current", Over::StdioAtTestPace).await;
}

#[tokio::test]
async fn a_current_era_listen_over_stateless_http_is_told_each_status_change_once() {
    subscribed_in("current", Over::Http).await;
}

#[tokio::test]
async fn the_watcher_lists_hc_at_a_bounded_rate_and_only_while_someone_is_subscribed() {
    let sim = Sim::start(SimOptions::agents(1));
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    let config =
        sim.config(json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await}));
    let started = sim.calls("terminal.list");
    let client = crate::support::in_process::stdio_paced((), &config, test_pace())
        .await
        .client;
    // The one look `serve` takes at start.
    crate::support::eventually("the start's look at hc", async || {
        (sim.calls("terminal.list") > started).then_some(())
    })
    .await;
    let uri = "herdr-core://terminal/t1";
    let window = test_pace().poll * 6;
    let before = sim.calls("terminal.list");
    tokio::time::sleep(window).await;
    assert_eq!(
        sim.calls("terminal.list"),
        before,
        "listed before anyone subscribed"
    );
    #[expect(deprecated, reason = "the legacy subscription is what this tests")]
    client
        .subscribe(rmcp::model::SubscribeRequestParams::new(uri))
        .await
        .expect("resources/subscribe");
    let subscribed = sim.calls("terminal.list");
    let started = std::time::Instant::now();
    tokio::time::sleep(window).await;
    let polled = sim.calls("terminal.list") - subscribed;
    let elapsed = started.elapsed();
    eprintln!("watcher: {polled} terminal.list calls in {elapsed:?} while subscribed");
    // At most one a tick (a slow machine makes fewer, never more), and at
    // least one in six ticks.
    let ticks = (elapsed.as_micros() / test_pace().poll.as_micros()) as u64;
    assert!(
        (1..=ticks + 1).contains(&polled),
        "{polled} calls in {elapsed:?}"
    );
    #[expect(deprecated, reason = "the legacy subscription is what this tests")]
    client
        .unsubscribe(rmcp::model::UnsubscribeRequestParams::new(uri))
        .await
        .expect("resources/unsubscribe");
    // The poller notices at its next tick, then stops.
    tokio::time::sleep(test_pace().poll * 2).await;
    let stopped = sim.calls("terminal.list");
    tokio::time::sleep(window).await;
    assert_eq!(
        sim.calls("terminal.list"),
        stopped,
        "listed after the last one left"
    );
}

#[tokio::test]
async fn the_resource_template_and_a_listed_terminal_are_pinned() {
    let world = crate::support::world::World::new(SimOptions::agents(1), json!({})).await;
    let templates = world
        .client
        .list_all_resource_templates()
        .await
        .expect("resources/templates/list");
    insta::assert_json_snapshot!("resource_templates", templates);
    let resources = world
        .client
        .list_all_resources()
        .await
        .expect("resources/list");
    insta::assert_json_snapshot!("resources_list", resources);
    // A URI that is not a terminal's is an error that names the template.
    let error = world
        .client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "herdr-core://terminal/machine/t7",
        ))
        .await
        .expect_err("not a terminal resource");
    assert!(
        error
            .to_string()
            .contains("herdr-core://terminal/{address}"),
        "{error}"
    );
}

#[tokio::test]
async fn over_stateless_http_a_legacy_subscribe_is_refused_naming_what_works() {
    let sim = Sim::start(SimOptions::agents(1));
    let adapter =
        in_process::http(|port| sim.config(json!({"transport": "http", "http": {"port": port}})))
            .await;
    // The one look `serve` takes at start.
    crate::support::eventually("the start's look at hc", async || {
        (sim.calls("terminal.list") > 0).then_some(())
    })
    .await;
    let listed = sim.calls("terminal.list");
    let subscribe = json!({"jsonrpc": "2.0", "id": 7, "method": "resources/subscribe",
        "params": {"uri": "herdr-core://terminal/t1"}});
    let (status, _, body) =
        crate::support::oauth::post(&adapter.url(), Some(TEST_TOKEN), &subscribe).await;
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("stdio") && message.contains("subscriptions/listen"),
        "{answer}"
    );
    assert_eq!(sim.calls("terminal.list"), listed, "nothing watched");
}

/// A raw `subscriptions/listen` (2026-07-28) of t1's resource.
fn listen_request(port: u16, id: u64) -> Vec<u8> {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "0"},
        },
        "notifications": {"resourceSubscriptions": ["herdr-core://terminal/t1"]},
    }});
    crate::support::http::request::Req::mcp(port)
        .set("MCP-Protocol-Version", "2026-07-28")
        .set("Mcp-Method", "subscriptions/listen")
        .body(body.to_string())
        .bytes()
}

/// Opens a listen and reads until it is acknowledged (the stream is
/// kept open: the subscription lives while it does), or until it is
/// answered with an error (its text).
async fn try_listen(port: u16, id: u64) -> Result<tokio::net::TcpStream, String> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    stream.write_all(&listen_request(port, id)).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    tokio::time::timeout(crate::support::PATIENCE, async {
        loop {
            let text = String::from_utf8_lossy(&seen);
            if text.contains("notifications/subscriptions/acknowledged") {
                return Ok(());
            }
            if text.contains("\"error\"") {
                return Err(text.into_owned());
            }
            let n = stream.read(&mut buf).await.unwrap();
            if n == 0 {
                return Err(format!("closed: {text}"));
            }
            seen.extend_from_slice(&buf[..n]);
        }
    })
    .await
    .expect("acknowledged or refused")?;
    Ok(stream)
}

#[tokio::test]
async fn a_listen_past_its_callers_share_is_refused_before_it_is_acknowledged() {
    let sim = Sim::start(SimOptions::agents(1));
    let adapter = in_process::http_for_paced(&sim, &json!({}), test_pace()).await;
    let port = adapter.port;
    let mut held = Vec::new();
    for id in 1..=16 {
        held.push(try_listen(port, id).await.expect("acknowledged"));
    }
    let refused = crate::support::http::response::exchange(port, &listen_request(port, 17), false)
        .await
        .expect("an answer");
    assert_eq!(refused.status, 200, "{}", refused.summary());
    let body = refused.json().expect("a JSON-RPC answer");
    assert_eq!(body["id"], 17, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("HERDR_MCP_TOKEN holds 16 subscriptions already"),
        "{body}"
    );
    assert!(message.contains("nothing was subscribed"), "{body}");
    assert!(
        !refused.summary().contains("acknowledged"),
        "{}",
        refused.summary()
    );
    // One ends: its place is given back, and a new listen is acknowledged.
    drop(held.pop());
    let again = crate::support::eventually("a seat given back", async || {
        try_listen(port, 18).await.ok()
    })
    .await;
    drop(again);
}
