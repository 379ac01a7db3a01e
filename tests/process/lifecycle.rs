//! The server's life as a process: starting with hc down, stopping on
//! signals, a send cancelled before dispatch, what reaches its log
//! whatever RUST_LOG says, and the audit record.

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

use crate::support::mcp::{self, TEST_TOKEN, call, is_error, text};
use crate::support::waits::wait_status;
use crate::support::world::World;
use crate::support::{
    PATIENCE, Sim, SimOptions, adapter_bin, run_adapter, send_signal, write_config,
};
use herdr_core_mcp::wire::TerminalStatus;

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
    adapter.ready().await;
    let started = Instant::now();
    send_signal(adapter.child.id().unwrap(), libc::SIGTERM);
    let status = exit_status(&mut adapter.child).await;
    assert!(status.success(), "http/SIGTERM: {status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "http: slow shutdown"
    );
    // The terminals are untouched.
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
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
    let audit = crate::support::eventually("the audit line", async || {
        world.audit_lines().into_iter().next()
    })
    .await;
    assert!(
        audit.contains(r#""reason":"cancelled""#) && audit.contains(r#""outcome":"not_sent""#),
        "{audit}"
    );
    world.sim.set_faults(&[]);
    assert_eq!(world.sim.writes().len(), 0, "a cancelled send wrote input");
}

/// RUST_LOG values that lift other crates' levels in every way a directive
/// can: globally, by module, by span, and more specifically than any cap
/// added to the same filter.
const HOSTILE_RUST_LOG: [&str; 6] = [
    "trace",
    "rmcp=trace",
    "rmcp::service=trace",
    "[serve_inner]=trace,trace",
    "rmcp::transport=trace,rmcp::handler=trace,hyper=trace,axum=trace",
    "debug,rmcp[serve_inner]=trace,rmcp::service::server=trace",
];

#[tokio::test]
async fn no_rust_log_value_puts_prompts_or_screens_in_the_log() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        agent_delay_ms: Some(20),
        ..SimOptions::default()
    });
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let allowlist = crate::support::world::approve_all(&hc).await;
    // normal mode: the agent sits in `done` after each reply.
    let extra = json!({"coreId": sim.core_id, "sendAllowlist": allowlist, "sendMode": "normal"});
    for (n, rust_log) in HOSTILE_RUST_LOG.iter().enumerate() {
        for transport in ["stdio", "http"] {
            let log = sim.dir.path().join(format!("hostile-{n}-{transport}.log"));
            let secret = format!("Xy7-SECRET-PROMPT-{n}-{transport}");
            let (client, _adapter) = if transport == "stdio" {
                let config = sim.config(extra.clone());
                (mcp::stdio_logging(&config, &log, rust_log).await, None)
            } else {
                let config = |port: u16| {
                    let mut config = extra.clone();
                    crate::support::merge(
                        &mut config,
                        json!({"transport": "http", "http": {"port": port}}),
                    );
                    sim.config(config)
                };
                // Our own info line says when it listens; the hostile part stays.
                let rust_log = format!("{rust_log},herdr_core_mcp=info");
                let adapter = mcp::http_logging(config, &log, &rust_log).await;
                (adapter.client().await, Some(adapter))
            };
            let sent = call(
                &client,
                "send_prompt",
                json!({"address": "t1", "text": secret}),
            )
            .await;
            assert_eq!(mcp::structured(&sent)["outcome"], "sent", "{rust_log}");
            let marker = format!("reply: {secret}");
            crate::support::eventually("the reply on screen", async || {
                let text = hc.read("t1").await.unwrap().value.text;
                text.contains(&marker).then_some(())
            })
            .await;
            // The agent reports done after printing its reply.
            wait_status(&hc, "t1", TerminalStatus::Done).await;
            let screen = call(&client, "read_output", json!({"address": "t1"})).await;
            assert!(
                text(&screen).contains(&marker),
                "the screen shows the reply"
            );
            client.cancel().await.unwrap();
            let logged = std::fs::read_to_string(&log).unwrap();
            assert!(
                logged.contains(r#""audit":"send_prompt""#),
                "{rust_log} over {transport}: no audit line:\n{logged}"
            );
            assert!(
                !logged.contains(&secret),
                "{rust_log} over {transport}: prompt or screen text in the log:\n{logged}"
            );
        }
    }
}

#[tokio::test]
async fn the_audit_log_holds_one_line_per_attempt_even_after_a_sigkill() {
    let sim = Sim::start(SimOptions::agents(2));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
    for address in ["t1", "t2"] {
        wait_status(&hc, address, TerminalStatus::Idle).await;
    }
    let t1 = hc.get("t1").await.unwrap().value.created_ms;
    let audit_log = sim.dir.path().join("audit.jsonl");
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": [{"address": "t1", "created_ms": t1}],
        "auditLog": audit_log,
        "sendMode": "normal",
    }));
    let stderr_log = sim.dir.path().join("audit-run.stderr");
    let (client, pid) = mcp::stdio_process((), &config, &stderr_log).await;
    let lines = || -> Vec<Value> {
        std::fs::read_to_string(&audit_log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("an audit line is JSON"))
            .collect()
    };
    let secret = "AUDIT-SECRET-PROMPT";
    let mut expected = Vec::new();
    for (address, fault, outcome) in [
        ("t1", None, "sent"),
        ("t2", None, "not_sent"),
        ("t1", Some("drop-after-dispatch:terminal.send"), "unknown"),
    ] {
        if outcome == "unknown" {
            wait_status(&hc, "t1", TerminalStatus::Done).await;
        }
        if let Some(fault) = fault {
            sim.set_faults(&[fault]);
        }
        let out = mcp::send_prompt(&client, address, secret).await;
        assert_eq!(out["outcome"], outcome, "{out}");
        expected.push((address, outcome));
        // Written before the tool answered.
        assert_eq!(lines().len(), expected.len(), "after {address}/{outcome}");
    }
    // The always-on stream: the same lines on stderr, whatever RUST_LOG.
    // Log lines reach stderr through a queue that never blocks an answer,
    // so they may follow it by a moment; the file is the durable copy.
    crate::support::eventually("three audit lines on stderr", async || {
        let stderr = std::fs::read_to_string(&stderr_log).unwrap();
        (crate::support::world::audit_lines(&stderr).len() == 3).then_some(())
    })
    .await;
    // Killed right after its last answer: the line is already in the file.
    send_signal(pid, libc::SIGKILL);
    let recorded: Vec<(String, String)> = lines()
        .iter()
        .map(|l| {
            (
                l["address"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected: Vec<(String, String)> = expected
        .iter()
        .map(|(a, o)| ((*a).to_owned(), (*o).to_owned()))
        .collect();
    assert_eq!(recorded, expected);
    let text = std::fs::read_to_string(&audit_log).unwrap();
    assert!(!text.contains(secret), "the prompt reached the audit log");
    let mode = std::fs::metadata(&audit_log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
}

#[test]
fn an_audit_log_that_cannot_be_opened_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock"), "auditLog": dir.path().join("missing/audit.jsonl")}),
    );
    let (code, stdout, stderr) = run_adapter(&["serve", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stdout.is_empty());
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(lines.len(), 1, "{stderr}");
    assert!(
        lines[0].contains("auditLog") && lines[0].contains("missing/audit.jsonl"),
        "{stderr}"
    );
}

/// SIGTERM while hc holds a send (a draft in the terminal): the HTTP
/// client is answered with a JSON-RPC error saying the server stops and
/// the outcome is unknown, never a bare 500; the audit line carries what
/// the attempt knew (core, lifetime, preflight status, mode).
#[tokio::test]
async fn sigterm_during_a_held_send_answers_stopping_and_audits_what_it_knew() {
    let sim = Sim::start(crate::support::waits::agents(1, 300));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let created_ms = hc.get("t1").await.unwrap().value.created_ms;
    let stderr_log = sim.dir.path().join("http.stderr");
    let config = |port: u16| {
        sim.config(json!({
            "transport": "http",
            "http": {"port": port},
            "coreId": sim.core_id,
            "sendAllowlist": [{"address": "t1", "created_ms": created_ms}],
            "sendTimeoutMs": 30000,
        }))
    };
    let mut adapter = mcp::http(config, &stderr_log).await;
    adapter.ready().await;
    let client = adapter.client().await;
    sim.control("type", json!({"address": "t1", "text": "the user's draft"}));
    let handle = mcp::start_call(
        &client,
        "send_prompt",
        json!({"address": "t1", "text": "held by the draft"}),
    )
    .await;
    sim.wait_for_calls("terminal.send", 0).await;
    send_signal(adapter.child.id().unwrap(), libc::SIGTERM);
    let answered = tokio::time::timeout(PATIENCE, handle.await_response())
        .await
        .expect("answered before the process ended");
    let Err(rmcp::ServiceError::McpError(error)) = answered else {
        panic!("not a JSON-RPC error: {answered:?}");
    };
    assert!(error.message.contains("is stopping"), "{error:?}");
    assert!(error.message.contains("outcome is unknown"), "{error:?}");
    let data = error.data.clone().expect("data");
    assert_eq!(data["outcome"], "unknown", "{error:?}");
    assert_eq!(data["reason_code"], "server_stopping", "{error:?}");
    assert!(exit_status(&mut adapter.child).await.success());
    let log = std::fs::read_to_string(&stderr_log).unwrap();
    let lines = crate::support::world::audit_lines(&log);
    assert_eq!(lines.len(), 1, "{log}");
    let line: Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(line["outcome"], "unknown", "{line}");
    assert_eq!(line["reason"], "server_stopping", "{line}");
    assert_eq!(line["core_id"], sim.core_id, "{line}");
    assert_eq!(line["created_ms"], created_ms, "{line}");
    assert_eq!(line["preflight_status"], "idle", "{line}");
    assert_eq!(line["send_mode"], "idle-only", "{line}");
    // Nothing was typed over the draft.
    assert_eq!(sim.writes_to("t1"), 0);
}
