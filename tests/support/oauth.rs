//! OAuth mode's common ground: a simulator with approvals, the config of
//! an adapter in OAuth mode, the test identity provider, and requests.

use std::path::{Path, PathBuf};

use reqwest::StatusCode;
use serde_json::{Value, json};

use super::idp::{Idp, IdpOptions};
use super::in_process;
use super::world::approve_all;
use super::{Sim, SimOptions};
use herdr_core_mcp::HcClient;

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
    herdr_core_mcp::listen(([127, 0, 0, 1], 0).into())
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

pub fn list_call() -> Value {
    json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}})
}

/// The tool names a `tools/list` answer lists.
pub fn tool_names(body: &str) -> Vec<String> {
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
pub fn redact(text: &str, idp: &Idp) -> String {
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

/// The adapter binary serving HTTP in oauth mode, trusting `idp` for
/// [`RESOURCE`], ready; its stderr goes to `log`.
pub async fn spawned_trusting(
    sim: &Sim,
    approvals: &Value,
    idp: &Idp,
    log: &Path,
) -> super::mcp::HttpAdapter {
    let mut adapter = super::mcp::http(
        |port| {
            oauth_config(
                sim,
                approvals,
                port,
                json!({"mode": "oauth", "issuer": idp.issuer, "resource": RESOURCE}),
            )
        },
        log,
    )
    .await;
    adapter.ready().await;
    adapter
}

/// Waits until `token` is accepted (the adapter learns the IdP's keys in
/// the background).
pub async fn accepted(url: &str, token: &str) {
    super::eventually("the token to be accepted", async || {
        let (status, _, _) = post(url, Some(token), &initialize()).await;
        (status == StatusCode::OK).then_some(())
    })
    .await;
}
