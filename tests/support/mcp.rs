//! MCP clients for tests: rmcp's own client driving the real adapter binary,
//! over stdio (a child process) or Streamable HTTP (with the bearer token).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{ConfigureCommandExt, StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;

use super::adapter_bin;

pub type Client = RunningService<RoleClient, ()>;

/// A token that passes the adapter's checks; tests only.
pub const TEST_TOKEN: &str = "Zq8vN2xR5tB7wK1mP4sD9fH3jL6cV0gY";
/// The spawned adapters' clock (`HERDR_MCP_TEST_PACE`): every period a
/// tenth of `serve`'s, as the in-process adapters' (`test_pace`). A test
/// that shows the real pace passes `HERDR_MCP_TEST_PACE=1` among its
/// environment.
pub const TEST_PACE_DIVISOR: &str = "10";
/// The read-only token (`HERDR_MCP_READ_TOKEN`) of the tests' adapters.
pub const READ_TEST_TOKEN: &str = "Rm4xK9qW2vT7bN3pZ8cF5hJ0sL6dG1yA";

/// The adapter over stdio, its stderr kept in `stderr_log`.
pub async fn stdio(config: &Path, stderr_log: &Path) -> Client {
    stdio_with((), config, stderr_log).await
}

/// The adapter over stdio with a client handler of the test's own.
pub async fn stdio_with<H: rmcp::ClientHandler>(
    handler: H,
    config: &Path,
    stderr_log: &Path,
) -> RunningService<RoleClient, H> {
    stdio_process(handler, config, stderr_log).await.0
}

/// The adapter over stdio, and its process id (to signal it).
pub async fn stdio_process<H: rmcp::ClientHandler>(
    handler: H,
    config: &Path,
    stderr_log: &Path,
) -> (RunningService<RoleClient, H>, u32) {
    stdio_spawn(handler, config, stderr_log, "info").await
}

/// [`stdio`] with `RUST_LOG` set to `rust_log`.
pub async fn stdio_logging(config: &Path, stderr_log: &Path, rust_log: &str) -> Client {
    stdio_spawn((), config, stderr_log, rust_log).await.0
}

/// [`stdio_process`] of the binary at `binary` (another copy of the
/// adapter).
pub async fn stdio_process_of(binary: &Path, config: &Path, stderr_log: &Path) -> (Client, u32) {
    spawn_of(binary, (), config, stderr_log, "info").await
}

async fn stdio_spawn<H: rmcp::ClientHandler>(
    handler: H,
    config: &Path,
    stderr_log: &Path,
    rust_log: &str,
) -> (RunningService<RoleClient, H>, u32) {
    spawn_of(&adapter_bin(), handler, config, stderr_log, rust_log).await
}

async fn spawn_of<H: rmcp::ClientHandler>(
    binary: &Path,
    handler: H,
    config: &Path,
    stderr_log: &Path,
    rust_log: &str,
) -> (RunningService<RoleClient, H>, u32) {
    let stderr = std::fs::File::create(stderr_log).expect("stderr log");
    let command = tokio::process::Command::new(binary).configure(|c| {
        c.arg("serve")
            .arg("--config")
            .arg(config)
            .env("RUST_LOG", rust_log)
            .env(herdr_core_mcp::TEST_PACE_ENV, TEST_PACE_DIVISOR);
    });
    let (transport, _) = TokioChildProcess::builder(command)
        .stderr(Stdio::from(stderr))
        .spawn()
        .expect("spawn the adapter");
    let pid = transport.id().expect("the adapter's pid");
    let client = handler
        .serve(transport)
        .await
        .expect("MCP initialize over stdio");
    (client, pid)
}

/// A running `serve` over HTTP (a child process), with its port.
pub struct HttpAdapter {
    pub child: tokio::process::Child,
    pub port: u16,
    pub stderr_log: PathBuf,
}

impl HttpAdapter {
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }

    /// Waits until the adapter logs that it serves (its signal handlers are
    /// installed by then), or fails if it exits first.
    pub async fn ready(&mut self) {
        let log = self.stderr_log.clone();
        let child = &mut self.child;
        let served = super::eventually("the HTTP adapter to serve or exit", async || {
            if let Ok(Some(_)) = child.try_wait() {
                return Some(false);
            }
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            text.contains("serving MCP over HTTP").then_some(true)
        })
        .await;
        assert!(
            served,
            "the adapter exited: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    /// An rmcp streamable-HTTP client session with the token.
    pub async fn client(&self) -> Client {
        http_client(&self.url()).await
    }
}

/// An rmcp Streamable HTTP client session to `url` with the test token.
pub async fn http_client(url: &str) -> Client {
    let config =
        StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(TEST_TOKEN);
    ().serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP initialize over HTTP")
}

/// Spawns `serve` over HTTP on a loopback port bound here and handed to it
/// as systemd would (descriptor 3, `LISTEN_FDS=1`, `LISTEN_PID` its own
/// pid), with the config `write_config` writes for that port. Nothing is
/// guessed: the port is bound before the adapter starts, and connections
/// wait in its queue until the adapter accepts them.
pub async fn http(write_config: impl Fn(u16) -> PathBuf, stderr_log: &Path) -> HttpAdapter {
    http_logging(write_config, stderr_log, "info").await
}

/// [`http`] with `RUST_LOG` set to `rust_log`.
pub async fn http_logging(
    write_config: impl Fn(u16) -> PathBuf,
    stderr_log: &Path,
    rust_log: &str,
) -> HttpAdapter {
    http_spawn(write_config, stderr_log, rust_log, None, &[]).await
}

/// [`http`] with more environment variables set.
pub async fn http_env(
    write_config: impl Fn(u16) -> PathBuf,
    stderr_log: &Path,
    env: &[(&str, &str)],
) -> HttpAdapter {
    http_spawn(write_config, stderr_log, "info", None, env).await
}

/// [`http`] in a process that may open at most `fd_limit` descriptors
/// (soft and hard limit, so it cannot raise its own).
pub async fn http_fd_limited(
    write_config: impl Fn(u16) -> PathBuf,
    stderr_log: &Path,
    fd_limit: u64,
) -> HttpAdapter {
    http_spawn(write_config, stderr_log, "info", Some(fd_limit), &[]).await
}

async fn http_spawn(
    write_config: impl Fn(u16) -> PathBuf,
    stderr_log: &Path,
    rust_log: &str,
    fd_limit: Option<u64>,
    env: &[(&str, &str)],
) -> HttpAdapter {
    // Bound as serve itself binds (its accept queue included).
    let listener = herdr_core_mcp::listen(([127, 0, 0, 1], 0).into())
        .and_then(|l| l.into_std())
        .expect("bind a loopback port");
    let port = listener.local_addr().expect("its address").port();
    let config = write_config(port);
    let stderr = std::fs::File::create(stderr_log).expect("stderr log");
    let mut command = tokio::process::Command::from(hc_sim::testing::command_with_listener(
        &adapter_bin(),
        &listener,
    ));
    command
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .env("HERDR_MCP_TOKEN", TEST_TOKEN)
        .env("HERDR_MCP_READ_TOKEN", READ_TEST_TOKEN)
        .env("RUST_LOG", rust_log)
        .env(herdr_core_mcp::TEST_PACE_ENV, TEST_PACE_DIVISOR)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::from(stderr))
        .envs(env.iter().copied())
        .kill_on_drop(true);
    super::limits::limit_child(
        &mut command,
        super::limits::ChildLimits {
            open_files: fd_limit,
            file_bytes: None,
        },
    );
    let child = command.spawn().expect("spawn the adapter");
    // The child holds its own copy now.
    drop(listener);
    HttpAdapter {
        child,
        port,
        stderr_log: stderr_log.to_owned(),
    }
}

/// Calls a tool and returns its result (tool-level errors included).
pub async fn call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("tool arguments must be an object")
    };
    let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(args);
    tokio::time::timeout(Duration::from_secs(30), client.call_tool(params))
        .await
        .expect("tool call finished in time")
        .unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
}

/// Calls a tool with bad arguments: expects an `isError` result without
/// structured content; returns its text.
pub async fn call_invalid(client: &Client, tool: &str, args: Value) -> String {
    let result = call(client, tool, args).await;
    assert!(
        is_error(&result),
        "{tool} accepted bad arguments: {result:?}"
    );
    assert!(result.structured_content.is_none(), "{result:?}");
    text(&result)
}

/// Waits until `list_sessions` through `client` shows `address` in
/// `status` (the adapter's view, not hc's directly).
pub async fn until_listed<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    address: &str,
    status: &str,
) {
    super::eventually(&format!("{address} listed {status}"), async || {
        let listed = call(client, "list_sessions", serde_json::json!({})).await;
        structured(&listed)["sessions"]
            .as_array()?
            .iter()
            .any(|s| s["address"] == address && s["status"] == status)
            .then_some(())
    })
    .await;
}

/// `send_prompt` through `client`; checks `isError` follows the outcome and
/// returns the structured output.
pub async fn send_prompt<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    address: &str,
    text: &str,
) -> Value {
    let args = serde_json::json!({"address": address, "text": text});
    let result = call(client, "send_prompt", args).await;
    let out = structured(&result).clone();
    assert_eq!(
        is_error(&result),
        out["outcome"] != "sent",
        "isError must follow the outcome: {out}"
    );
    out
}

/// Starts a tool call that the test can cancel (and whose progress token
/// it can see) instead of awaiting it.
pub async fn start_call<H: rmcp::ClientHandler>(
    client: &RunningService<RoleClient, H>,
    tool: &str,
    args: Value,
) -> rmcp::service::RequestHandle<RoleClient> {
    let Value::Object(args) = args else {
        panic!("tool arguments must be an object")
    };
    let request = rmcp::model::ClientRequest::CallToolRequest(rmcp::model::Request::new(
        CallToolRequestParams::new(tool.to_owned()).with_arguments(args),
    ));
    client
        .send_cancellable_request(request, rmcp::service::PeerRequestOptions::no_options())
        .await
        .unwrap_or_else(|e| panic!("start {tool}: {e}"))
}

/// The structured content of a result.
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .unwrap_or_else(|| panic!("no structuredContent in {result:?}"))
}

/// The text rendering of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn is_error(result: &CallToolResult) -> bool {
    result.is_error == Some(true)
}
