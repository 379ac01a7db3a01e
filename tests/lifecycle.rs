//! The server's life: starting with hc down, stopping on signals, and a
//! send cancelled before dispatch.

use std::process::Stdio;

use std::time::{Duration, Instant};
use tokio::io::AsyncBufReadExt;

use serde_json::json;

use crate::core_client::wait_status;
use crate::stdio_tools::World;
use crate::support::mcp::{self, TEST_TOKEN, call, is_error, text};
use crate::support::{PATIENCE, Sim, SimOptions, adapter_bin, send_signal, write_config};
use herdr_core_mcp::hc::wire::TerminalStatus;

/// Waits for a child to exit, failing after [`PATIENCE`].
async fn exit_status(child: &mut tokio::process::Child) -> std::process::ExitStatus {
    tokio::time::timeout(PATIENCE, child.wait())
        .await
        .expect("the adapter exited in time")
        .expect("wait for the adapter")
}

#[tokio::test]
async fn serve_starts_with_hc_down_and_tools_say_why() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hc.sock");
    let config = write_config(
        dir.path(),
        &json!({"socketPath": socket, "coreId": "c1", "timeoutMs": 500}),
    );
    let client = mcp::stdio(&config, &dir.path().join("stderr.log")).await;
    for (tool, args) in [
        ("list_sessions", json!({})),
        ("read_output", json!({"address": "t1"})),
        ("wait_for_status", json!({"targets": [{"address": "t1"}]})),
    ] {
        let result = call(&client, tool, args).await;
        assert!(is_error(&result), "{tool}: {result:?}");
        let message = text(&result);
        assert!(
            message.contains(&socket.display().to_string()) && message.contains("hc_unavailable"),
            "{tool}: {message}"
        );
    }
    let sent = call(
        &client,
        "send_prompt",
        json!({"address": "t1", "text": "hi"}),
    )
    .await;
    let out = mcp::structured(&sent);
    assert_eq!(out["outcome"], "not_sent");
    assert_eq!(out["reason_code"], "preflight_failed");
}

#[tokio::test]
async fn sigterm_and_sigint_stop_both_transports_cleanly() {
    let sim = Sim::start(SimOptions::agents(1));
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let transport = "stdio";
        let config = sim.config(json!({"transport": transport}));
        let mut child = tokio::process::Command::new(adapter_bin())
            .args(["serve", "--config", config.to_str().unwrap()])
            .env("HERDR_MCP_TOKEN", TEST_TOKEN)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // Signal handlers are installed before the start line is logged.
        let stderr = child.stderr.take().unwrap();
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("starting") {
                break;
            }
        }
        let started = Instant::now();
        send_signal(child.id().unwrap(), signal);
        let status = exit_status(&mut child).await;
        assert!(status.success(), "{transport}/{signal}: {status:?}");
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{transport}: slow shutdown"
        );
    }
    let stderr_log = sim.dir.path().join("http.stderr");
    let config = |port: u16| sim.config(json!({"transport": "http", "http": {"port": port}}));
    let mut adapter = mcp::http(config, &stderr_log).await;
    let started = Instant::now();
    send_signal(adapter.child.id().unwrap(), libc::SIGTERM);
    let status = exit_status(&mut adapter.child).await;
    assert!(status.success(), "http/SIGTERM: {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "http: slow shutdown"
    );
    // The terminals are untouched.
    let hc = herdr_core_mcp::hc::HcClient::new(&sim.socket, Duration::from_secs(5));
    assert!(hc.get("t1").await.unwrap().value.finished_ms.is_none());
}

#[tokio::test]
async fn a_send_cancelled_during_preflight_sends_nothing() {
    let options = SimOptions {
        agents: 1,
        slow_reply_ms: Some(2_000),
        ..SimOptions::default()
    };
    let world = World::spawned(options, json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    world.sim.set_faults(&["slow-reply:terminal.get"]);
    let args = json!({"address": "t1", "text": "cancel me"});
    let handle = mcp::start_call(&world.client, "send_prompt", args).await;
    world.sim.wait_for_calls("terminal.get", 0).await;
    handle.cancel(Some("changed my mind".into())).await.unwrap();
    let audit =
        crate::support::eventually("the audit line", || world.audit_lines().into_iter().next())
            .await;
    assert!(
        audit.contains("reason=cancelled") && audit.contains("not_sent"),
        "{audit}"
    );
    world.sim.set_faults(&[]);
    assert_eq!(world.sim.writes().len(), 0, "a cancelled send wrote input");
}

#[tokio::test]
async fn even_trace_logging_never_shows_prompts_or_screens() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        agent_delay_ms: Some(20),
        ..SimOptions::default()
    });
    let hc = herdr_core_mcp::hc::HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let allowlist = crate::stdio_tools::approve_all(&hc).await;
    let config = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    let log = sim.dir.path().join("trace.log");
    let stderr = std::fs::File::create(&log).unwrap();
    let mut command = tokio::process::Command::new(adapter_bin());
    command
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("RUST_LOG", "trace");
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(command)
        .stderr(Stdio::from(stderr))
        .spawn()
        .unwrap();
    let client = rmcp::ServiceExt::serve((), transport).await.unwrap();
    let secret = "Xy7-SECRET-PROMPT";
    let sent = call(
        &client,
        "send_prompt",
        json!({"address": "t1", "text": secret}),
    )
    .await;
    assert_eq!(mcp::structured(&sent)["outcome"], "sent");
    wait_status(&hc, "t1", TerminalStatus::Done).await;
    let screen = call(&client, "read_output", json!({"address": "t1"})).await;
    assert!(text(&screen).contains(secret), "the screen shows the reply");
    client.cancel().await.unwrap();
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("TRACE") || logged.contains("DEBUG") || logged.contains("audit"),
        "{logged}"
    );
    assert!(
        !logged.contains(secret),
        "prompt or screen text in the log:\n{logged}"
    );
}
