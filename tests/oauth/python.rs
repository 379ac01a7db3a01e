//! The official Python MCP SDK's OAuth client end to end, through
//! tests/oauth/client.py: protected-resource metadata, authorization-server
//! metadata, dynamic registration, authorization code with PKCE and the
//! resource parameter, the token, and tool calls; on the 403 it steps up.

use serde_json::{Value, json};

use crate::support::idp::{Idp, IdpOptions};
use crate::support::oauth::{approved_sim, bind, oauth_config};
use crate::support::{in_process, python};

/// Runs one client scenario against `url`; its one JSON line.
async fn client(url: &str, scenario: &str, text: &str) -> Value {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/oauth/client.py");
    let output = tokio::process::Command::new(python())
        .arg(script)
        .args([
            "--url",
            url,
            "--scenario",
            scenario,
            "--address",
            "t1",
            "--text",
            text,
        ])
        .kill_on_drop(true)
        .output()
        .await
        .expect("run the Python OAuth client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "client {scenario} failed: {}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("client {scenario} printed {stdout:?}: {e}"))
}

/// An IdP and an adapter whose resource is the adapter's real URL.
async fn world(deny_send: bool) -> (crate::support::Sim, Idp, in_process::HttpAdapter) {
    let (sim, approvals) = approved_sim(1).await;
    let listener = tokio::net::TcpListener::from_std(bind()).unwrap();
    let port = listener.local_addr().unwrap().port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let idp = Idp::start(
        &bind(),
        sim.dir.path(),
        &IdpOptions {
            resource: resource.clone(),
            deny_send,
            ..IdpOptions::default()
        },
    )
    .await;
    let config = oauth_config(
        &sim,
        &approvals,
        port,
        json!({"mode": "oauth", "issuer": idp.issuer, "resource": resource}),
    );
    let adapter = in_process::http_on(listener, &config).await;
    (sim, idp, adapter)
}

#[tokio::test]
async fn the_python_sdk_oauth_client_reads_steps_up_and_sends() {
    let (sim, _idp, adapter) = world(false).await;
    let out = client(&adapter.url(), "send", "sent through OAuth").await;
    assert_eq!(
        out["tools"],
        json!([
            "list_machines",
            "list_sessions",
            "read_output",
            "wait_for_output",
            "wait_for_status"
        ]),
        "a read grant sees five tools: {out}"
    );
    assert_eq!(out["result"]["outcome"], "sent", "{out}");
    assert_eq!(out["isError"], false, "{out}");
    assert_eq!(out["authorizations"], 2, "one step-up: {out}");
    let scopes: Vec<&str> = out["scopes_after"].as_str().unwrap().split(' ').collect();
    assert!(scopes.contains(&"herdr.send"), "{out}");
    assert_eq!(sim.writes_to("t1"), 1, "the prompt reached the terminal");
}

#[tokio::test]
async fn a_read_only_grant_gets_the_step_up_challenge_and_sends_nothing() {
    let (sim, idp, adapter) = world(true).await;
    let out = client(&adapter.url(), "send-read-only", "must not land").await;
    assert_eq!(out["status"], 403, "{out}");
    let metadata = format!(
        "http://127.0.0.1:{}/.well-known/oauth-protected-resource/mcp",
        adapter.port
    );
    assert_eq!(
        out["www_authenticate"],
        format!(
            r#"Bearer error="insufficient_scope", scope="herdr.send", resource_metadata="{metadata}""#
        ),
        "{out}"
    );
    assert_eq!(out["raw_scope"], "herdr.read", "{out}");
    assert_eq!(sim.writes_to("t1"), 0, "nothing was sent");
    drop(idp);
}
