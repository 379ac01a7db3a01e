//! OAuth resource-server mode against a real authorization server
//! (`oidc-provider`, see `support::idp`): the protected-resource metadata
//! and the challenges, scopes deciding what a caller sees and may do,
//! hostile tokens, an IdP that is down, slow or killed, and the official
//! Python SDK's OAuth client end to end (`oauth/python.rs`). Token
//! mode's read-only token is here too: the same split without an IdP.

mod hostile;
mod introspection;
mod introspection_floods;
mod outages;
mod python;
mod signatures;

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::support::in_process;
use crate::support::mcp::{READ_TEST_TOKEN, TEST_TOKEN};
use crate::support::oauth::{
    RESOURCE, accepted, approved_sim, idp_for, initialize, list_call, oauth_config, oauth_world,
    post, redact, send_call, tool_names,
};

#[tokio::test]
async fn the_metadata_document_and_the_challenges_are_what_clients_read() {
    let (sim, approvals) = approved_sim(1).await;
    let (idp, adapter) = oauth_world(&sim, &approvals, sim.dir.path()).await;
    let base = format!("http://127.0.0.1:{}", adapter.port);
    let client = reqwest::Client::new();
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        // Clients send their protocol revision on discovery too.
        let response = client
            .get(format!("{base}{path}"))
            .header("mcp-protocol-version", "2099-01-01")
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        let document: Value =
            serde_json::from_str(&redact(&response.text().await.unwrap(), &idp)).unwrap();
        insta::assert_json_snapshot!("oauth_protected_resource_metadata", document);
    }
    let (status, challenge, body) = post(&adapter.url(), None, &initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    insta::assert_snapshot!(
        "oauth_401_no_token",
        format!("WWW-Authenticate: {challenge}\n\n{body}")
    );
    let (status, challenge, body) = post(&adapter.url(), Some("not-a-token"), &initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    insta::assert_snapshot!(
        "oauth_401_refused",
        format!("WWW-Authenticate: {challenge}\n\n{body}")
    );
    // A wrong Host is refused first, with a body saying so.
    let response = client
        .post(adapter.url())
        .header("host", "evil.example.net")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::FORBIDDEN);
    let body = response.text().await.unwrap();
    assert!(body.contains("Host header"), "{body}");
}

#[tokio::test]
async fn scopes_decide_what_a_caller_sees_and_a_reader_gets_the_step_up_challenge() {
    let (sim, approvals) = approved_sim(1).await;
    let (idp, adapter) = oauth_world(&sim, &approvals, sim.dir.path()).await;
    let read = idp.token(RESOURCE, "herdr.read").await;
    accepted(&adapter.url(), &read).await;
    let (status, _, body) = post(&adapter.url(), Some(&read), &list_call()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        tool_names(&body),
        [
            "list_machines",
            "list_sessions",
            "read_output",
            "wait_for_output",
            "wait_for_status"
        ]
    );
    let (status, challenge, body) = post(
        &adapter.url(),
        Some(&read),
        &send_call("t1", "from a reader"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    insta::assert_snapshot!(
        "oauth_403_insufficient_scope",
        format!("WWW-Authenticate: {challenge}\n\n{body}")
    );
    assert_eq!(sim.writes_to("t1"), 0, "a reader sent nothing");

    let send = idp.token(RESOURCE, "herdr.read herdr.send").await;
    let (status, _, body) = post(&adapter.url(), Some(&send), &list_call()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(tool_names(&body).len(), 6, "{body}");
    let (status, _, body) = post(
        &adapter.url(),
        Some(&send),
        &send_call("t1", "from a sender"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        answer["result"]["structuredContent"]["outcome"], "sent",
        "{answer}"
    );
    assert_eq!(sim.writes_to("t1"), 1);
    // The audit line names the caller, never its token.
    let lines = adapter.audit.lines();
    let line: Value = serde_json::from_str(lines.last().expect("an audit line")).unwrap();
    assert_eq!(
        line["caller"],
        json!({"kind": "oauth", "sub": "herdr-tests", "client_id": "herdr-tests"}),
        "{line}"
    );
    assert!(
        !lines.concat().contains(&send[..40]),
        "no token in the audit"
    );
}

#[tokio::test]
async fn the_read_token_sees_the_read_tools_and_cannot_send() {
    let (sim, approvals) = approved_sim(1).await;
    let adapter = in_process::http(|port| {
        let mut config = approvals.clone();
        crate::support::merge(
            &mut config,
            json!({"transport": "http", "http": {"port": port}}),
        );
        sim.config(config)
    })
    .await;
    let (status, _, body) = post(&adapter.url(), Some(READ_TEST_TOKEN), &list_call()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(tool_names(&body).len(), 5, "{body}");
    let (status, challenge, body) = post(
        &adapter.url(),
        Some(READ_TEST_TOKEN),
        &send_call("t1", "from a reader"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        challenge,
        r#"Bearer error="insufficient_scope", scope="herdr.send""#
    );
    assert_eq!(sim.writes_to("t1"), 0);
    // The full token still sees and sends.
    let (status, _, body) = post(&adapter.url(), Some(TEST_TOKEN), &list_call()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(tool_names(&body).len(), 6, "{body}");
    let (status, _, body) = post(&adapter.url(), Some(TEST_TOKEN), &send_call("t1", "hello")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(sim.writes_to("t1"), 1);
    let line: Value = serde_json::from_str(adapter.audit.lines().last().unwrap()).unwrap();
    assert_eq!(line["caller"], json!({"kind": "token"}), "{line}");
}

#[test]
fn a_read_token_equal_to_the_full_one_or_weak_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = crate::support::write_config(
        dir.path(),
        &json!({"socketPath": "/tmp/none.sock", "transport": "http", "http": {"port": 1}}),
    );
    let config = config.to_str().unwrap();
    let (code, _, stderr) = crate::support::run_adapter(
        &["serve", "--config", config],
        &[
            ("HERDR_MCP_TOKEN", TEST_TOKEN),
            ("HERDR_MCP_READ_TOKEN", TEST_TOKEN),
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("HERDR_MCP_READ_TOKEN equals HERDR_MCP_TOKEN"),
        "{stderr}"
    );
    let (code, _, stderr) = crate::support::run_adapter(
        &["serve", "--config", config],
        &[
            ("HERDR_MCP_TOKEN", TEST_TOKEN),
            ("HERDR_MCP_READ_TOKEN", "short"),
        ],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("HERDR_MCP_READ_TOKEN is refused: it is 5 bytes"),
        "{stderr}"
    );
}

#[tokio::test]
async fn doctor_checks_the_issuer_the_resource_and_the_scopes() {
    let (sim, approvals) = approved_sim(1).await;
    let idp = idp_for(sim.dir.path()).await;
    let config = oauth_config(
        &sim,
        &approvals,
        1,
        json!({"mode": "oauth", "issuer": idp.issuer, "resource": RESOURCE}),
    );
    let (_, stdout, stderr) =
        crate::support::run_adapter(&["doctor", "--config", config.to_str().unwrap()], &[]);
    let line = |check: &str| {
        stdout
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(check))
            .unwrap_or_else(|| panic!("no {check} line:\n{stdout}{stderr}"))
            .to_owned()
    };
    assert!(
        line("issuer").contains("publishes its metadata and 2 usable signing key(s)"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("HERDR_MCP_TOKEN"),
        "oauth mode needs no static token: {stdout}"
    );
    // The public host is not in allowedHosts: the fix is named.
    let resource = line("resource");
    assert!(resource.contains("add \"mcp.example.net\""), "{resource}");
    assert!(
        line("scopes").contains("herdr.read reads; herdr.send also sends"),
        "{stdout}"
    );
    // A plain-http resource on this machine (the local walkthrough's):
    // serve accepts it, so doctor notes it rather than failing.
    let local = oauth_config(
        &sim,
        &approvals,
        1,
        json!({"mode": "oauth", "issuer": idp.issuer, "resource": "http://127.0.0.1:1/mcp"}),
    );
    let (_, stdout, _) =
        crate::support::run_adapter(&["doctor", "--config", local.to_str().unwrap()], &[]);
    let resource = stdout
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some("resource"))
        .unwrap_or_else(|| panic!("no resource line:\n{stdout}"));
    assert!(
        resource.starts_with("note") && resource.contains("plain http on this machine"),
        "{stdout}"
    );
    idp.kill().await;
    let (_, stdout, _) =
        crate::support::run_adapter(&["doctor", "--config", config.to_str().unwrap()], &[]);
    assert!(stdout.contains("serve still starts"), "{stdout}");
    // An IdP that is down is named as such, with the fix.
    assert!(
        stdout.contains("cannot connect (") && stdout.contains("connection refused"),
        "{stdout}"
    );
    assert!(
        stdout.contains("check that the identity provider runs"),
        "{stdout}"
    );
}
