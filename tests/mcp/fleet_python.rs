//! A coordinator's `since` loop run by the official Python SDK
//! (tests/mcp/fleet_client.py) over stdio and over stateless HTTP.

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::waits::{agents, wait_status};
use crate::support::world::approve_all;
use crate::support::{Sim, in_process};
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

/// Over stdio (the spawned binary) or HTTP (in process, with the tests'
/// token).
#[derive(Clone, Copy, Debug)]
enum Over {
    Stdio,
    Http,
}

/// The official Python SDK runs a coordinator's since loop
/// (tests/mcp/fleet_client.py).
async fn python_loop(over: Over) {
    let sim = Sim::start(agents(1, 200));
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let config = json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await});
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fleet_client.py");
    let mut command = tokio::process::Command::new(crate::support::python());
    command.arg(script).kill_on_drop(true);
    let _adapter = match over {
        Over::Stdio => {
            let config = sim.config(config);
            command
                .args(["--adapter", crate::support::adapter_bin().to_str().unwrap()])
                .args(["--config", config.to_str().unwrap()]);
            None
        }
        Over::Http => {
            let adapter = in_process::http_for(&sim, &config).await;
            command
                .args(["--url", &adapter.url()])
                .env("HERDR_MCP_TOKEN", crate::support::mcp::TEST_TOKEN);
            Some(adapter)
        }
    };
    let output = command.output().await.expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "fleet_client {over:?} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let out: Value = serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("fleet_client printed {stdout:?}: {e}"));
    assert_eq!(out["first"]["outcome"], "timeout", "{over:?}: {out}");
    let second = &out["second"];
    assert_eq!(second["outcome"], "reached", "{over:?}: {second}");
    assert_eq!(second["address"], "t1");
    assert_eq!(second["status"], "done");
    assert!(second["elapsed_ms"].as_u64().unwrap() < 5000, "{second}");
    assert_eq!(second["changes"][0]["change"], "status", "{second}");
    assert_eq!(out["third"]["outcome"], "timeout", "{over:?}: {out}");
    assert_eq!(out["third"]["changes"], json!([]));
    assert_eq!(out["edited"]["is_error"], true, "{out}");
    assert!(
        out["edited"]["text"]
            .as_str()
            .unwrap()
            .contains("invalid_since"),
        "{out}"
    );
    assert_eq!(out["resource_scope"], "named");
    assert_eq!(out["resource_wait"]["outcome"], "timeout", "{out}");
}

#[tokio::test]
async fn the_python_sdk_runs_a_since_loop_over_stdio() {
    python_loop(Over::Stdio).await;
}

#[tokio::test]
async fn the_python_sdk_runs_a_since_loop_over_stateless_http() {
    python_loop(Over::Http).await;
}
