//! The HTTP transport against the real binary (`serve` with `"transport":
//! "http"`): a hostile-request battery written as raw HTTP/1.1 bytes, a flood
//! of unauthenticated requests, slow clients, the tools end to end through
//! rmcp's Streamable HTTP client, and fail-closed startup on weak tokens.
//! By noun:
//! - `request` and `response`: raw HTTP/1.1, exact request bytes out and
//!   one parsed response back.
//! - `battery`: the hostile-request table and how each reply is judged.
//! - `flood`: many unauthenticated or idle sockets against one adapter.
//! - `slow_clients`: half-sent heads and bodies are cut off.
//! - `end_to_end`: the tools over Streamable HTTP (and stdio, alike).
//! - `startup`: a missing or weak token fails closed.

pub mod request;
pub mod response;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::Sim;
use super::in_process;
use super::mcp::{self, HttpAdapter};

/// The origin the battery's adapter accepts (so a duplicated allowed
/// `Origin` can be told apart from a foreign one).
pub const OK_ORIGIN: &str = "https://ok.example";
/// The body cap of spec section 5.
pub const MAX_BODY: usize = 65_536;
/// A valid `initialize` request (stateless Streamable HTTP, 2025-06-18).
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
/// How long one raw exchange may take before it counts as hung.
pub const EXCHANGE_DEADLINE: Duration = Duration::from_secs(10);

/// The config of an HTTP adapter on `port` for `sim`, with `extra` merged in.
pub fn http_config(sim: &Sim, extra: &Value, port: u16) -> PathBuf {
    let mut config = json!({
        "transport": "http",
        "http": {"port": port},
        "coreId": sim.core_id,
    });
    crate::support::merge(&mut config, extra.clone());
    if let Some(http) = config["http"].as_object_mut() {
        http.insert("port".into(), json!(port));
    }
    sim.config(config)
}

/// Spawns the adapter binary over HTTP for `sim` (for the tests that read
/// its log or its memory).
/// A serve process over HTTP of a fresh config of `sim`, ready, and that
/// config's path (for the operator commands run beside it).
pub async fn serve_process_with_config(sim: &Sim) -> (HttpAdapter, PathBuf) {
    let log = sim.dir.path().join("serve.stderr");
    let written = std::sync::Mutex::new(None);
    let mut served = mcp::http(
        |port| {
            let path = sim.config(json!({"transport": "http", "http": {"port": port}}));
            *written.lock().unwrap() = Some(path.clone());
            path
        },
        &log,
    )
    .await;
    served.ready().await;
    let config = written.into_inner().unwrap().expect("the config it serves");
    (served, config)
}

pub async fn spawn_http(sim: &Sim, extra: Value) -> HttpAdapter {
    let stderr_log = sim.dir.path().join("adapter-http.stderr");
    mcp::http(|port| http_config(sim, &extra, port), &stderr_log).await
}

/// Serves the adapter over HTTP in-process for `sim`.
pub async fn serve_http(sim: &Sim, extra: Value) -> in_process::HttpAdapter {
    in_process::http(|port| http_config(sim, &extra, port)).await
}
