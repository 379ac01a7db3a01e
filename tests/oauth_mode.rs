//! OAuth resource-server mode against a real authorization server
//! (`oidc-provider`, see `support::idp`): the protected-resource metadata
//! and the challenges, scopes deciding what a caller sees and may do,
//! hostile tokens, an IdP that is down, slow or killed, and the official
//! Python SDK's OAuth client end to end (`oauth_mode/python.rs`). Token
//! mode's read-only token is here too: the same split without an IdP.

mod hostile;
mod introspection;
mod outages;
mod python;

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use crate::stdio_tools::approve_all;
use crate::support::idp::{Idp, IdpOptions};
use crate::support::in_process;
use crate::support::mcp::{READ_TEST_TOKEN, TEST_TOKEN};
use crate::support::{Sim, SimOptions};
use herdr_core_mcp::hc::HcClient;

/// The public URL of `/mcp` the tests' adapters are configured with (the
/// Python SDK test uses the real loopback URL instead).
pub const RESOURCE: &str = "https://mcp.example.net/mcp";

/// A simulator with `agents` agents, all approved.
pub async fn approved_sim(agents: usize) -> (Sim, Value) {
    let sim = Sim::start(SimOptions {
        agents,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    let approvals = json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await});
    (sim, approvals)
}

/// An HTTP config for `sim` on `port` in oauth mode.
pub fn oauth_config(sim: &Sim, approvals: &Value, port: u16, auth: Value) -> PathBuf {
    let mut config = approvals.clone();
    crate::support::merge(
        &mut config,
        json!({"transport": "http", "http": {"port": port, "auth": auth}}),
    );
    sim.config(config)
}

/// A loopback listener bound here, in std form (to hand a child) or tokio's.
pub fn bind() -> std::net::TcpListener {
    herdr_core_mcp::transport::http::listen(([127, 0, 0, 1], 0).into())
        .and_then(|l| l.into_std())
        .expect("bind a loopback port")
}

/// One raw JSON-RPC POST to `url`, as a Streamable HTTP client sends it.
pub async fn post(url: &str, token: Option<&str>, body: &Value) -> (StatusCode, String, String) {
    static CLIENT: std::sync::OnceLock<reqwest::Client> = std::sync::OnceLock::new();
    let mut request = CLIENT
        .get_or_init(reqwest::Client::new)
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the adapter answers");
    let status = response.status();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, response.text().await.unwrap())
}

pub fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "oauth-tests", "version": "1"}}})
}

pub fn send_call(address: &str, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "send_prompt", "arguments": {"address": address, "text": text}}})
}

fn list_call() -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})
}

/// The tool names a `tools/list` answer lists.
fn tool_names(body: &str) -> Vec<String> {
    let answer: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{body}: {e}"));
    let mut names: Vec<String> = answer["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("a tool list: {answer}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    names.sort();
    names
}

/// `text` with the IdP's and the adapter's ports named, for snapshots.
fn redact(text: &str, idp: &Idp) -> String {
    text.replace(&idp.issuer, "http://127.0.0.1:IDP")
}

/// The test IdP, issuing JWTs for [`RESOURCE`].
pub async fn idp_for(dir: &Path) -> Idp {
    Idp::start(
        &bind(),
        dir,
        &IdpOptions {
            resource: RESOURCE.to_owned(),
            ..IdpOptions::default()
        },
    )
    .await
}

/// An IdP issuing JWTs for [`RESOURCE`], and an in-process adapter in
/// oauth mode trusting it.
pub async fn oauth_world(
    sim: &Sim,
    approvals: &Value,
    dir: &Path,
) -> (Idp, in_process::HttpAdapter) {
    let idp = idp_for(dir).await;
    let listener = tokio::net::TcpListener::from_std(bind()).unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = oauth_config(
        sim,
        approvals,
        port,
        json!({"mode": "oauth", "issuer": idp.issuer, "resource": RESOURCE}),
    );
    let adapter = in_process::http_on(listener, &config).await;
    (idp, adapter)
}

/// Waits until `token` is accepted (the adapter learns the IdP's keys in
/// the background).
pub async fn accepted(url: &str, token: &str) {
    let deadline = std::time::Instant::now() + crate::support::PATIENCE;
    loop {
        let (status, _, body) = post(url, Some(token), &initialize()).await;
        if status == StatusCode::OK {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the token was never accepted: {status} {body}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

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
    assert_eq!(tool_names(&body).len(), 5, "{body}");
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
    assert_eq!(tool_names(&body).len(), 4, "{body}");
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
    assert_eq!(tool_names(&body).len(), 5, "{body}");
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
    idp.kill().await;
    let (_, stdout, _) =
        crate::support::run_adapter(&["doctor", "--config", config.to_str().unwrap()], &[]);
    assert!(stdout.contains("serve still starts"), "{stdout}");
}
