//! MCP Streamable HTTP on 127.0.0.1, stateless, at exactly `/mcp`.
//!
//! The steps a request crosses, in one service (`Front`), outermost first:
//! `Cache-Control: no-store` on every response, `refusals` (each response
//! finished: `Connection: close` on refusals, a JSON-RPC body on 413; and
//! refusals logged), the `gate` (Host/Origin 403, well-known 404, bearer
//! 401, rate 429), the body read under its 64 KiB cap (413, also when
//! chunked) and within its deadline (`body`: 408, 413, 400), the
//! concurrency limit, then rmcp's service at `/mcp` and 404
//! for everything else. The accept loop (`server`) keeps unauthenticated
//! connections to their share of slots (`slots`, sized from the open-file
//! limit, which it raises; one descriptor per connection, shared through
//! `socket`) and caps the header read time and size.

mod admission;
pub mod auth;
mod body;
mod challenges;
mod gate;
mod refusals;
mod server;

use std::sync::Arc;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

pub use body::MAX_BODY_BYTES;
pub use server::serve;

use crate::config::HttpConfig;
use crate::tools::{HerdrServer, Tools};
use auth::Authenticator;

/// Everything the HTTP transport needs; only this transport authenticates.
pub struct HttpEndpoint {
    /// The bound loopback listener.
    pub listener: tokio::net::TcpListener,
    /// The validated `http` section.
    pub config: HttpConfig,
    /// How callers are told apart.
    pub auth: Authenticator,
}

/// Connections the kernel may queue for `accept` (capped by
/// `net.core.somaxconn`). While a flood fills the queue, an authorised
/// client's connection is dropped and retried a second later, so it is
/// larger than the usual 128; each queued one waits its turn, so it is not
/// much larger (measured: VALIDATION.md, "Starvation").
const LISTEN_BACKLOG: u32 = 1024;

/// The listening socket `serve` was handed by its parent, when there is
/// one: socket activation, and how tests hand over a bound port. systemd's
/// rules (sd_listen_fds(3)): `LISTEN_FDS` counts the sockets from
/// descriptor 3, and they are this process's only when `LISTEN_PID` names
/// it; otherwise they were meant for another process, and are ignored with
/// a warning. Only the first is served (more: a warning); the descriptor
/// must be a TCP stream socket that listens (`SO_ACCEPTCONN`: a bound one
/// that does not would fail every accept) on `address` (loopback and
/// `http.port`: there is no other address to serve on). The non-standard
/// `LISTEN_FDS_FIRST_FD` (another first descriptor) is not honoured: set to
/// anything but 3, the start is refused.
pub fn inherited(
    address: std::net::SocketAddr,
) -> Result<Option<tokio::net::TcpListener>, InheritError> {
    let Some(count) = std::env::var_os(LISTEN_FDS) else {
        return Ok(None);
    };
    let count = count
        .to_str()
        .and_then(|c| c.parse::<u32>().ok())
        .ok_or_else(|| InheritError::Count(count.to_string_lossy().into_owned()))?;
    if count == 0 {
        return Ok(None);
    }
    let pid = std::env::var(LISTEN_PID).ok();
    if pid.as_deref().and_then(|p| p.parse::<u32>().ok()) != Some(std::process::id()) {
        tracing::warn!(
            listen_pid = %crate::escape::bounded(pid.as_deref().unwrap_or("(unset)"), 32),
            pid = std::process::id(),
            "LISTEN_FDS is set, but LISTEN_PID does not name this process: the sockets were passed to another one, and are ignored (systemd's rule); serve binds {address} itself"
        );
        return Ok(None);
    }
    if let Some(first) = std::env::var_os(LISTEN_FDS_FIRST_FD).filter(|f| f != "3") {
        return Err(InheritError::FirstFd(first.to_string_lossy().into_owned()));
    }
    if count > 1 {
        tracing::warn!(
            "LISTEN_FDS={count}: serve uses the first socket (descriptor 3) and ignores the other {}",
            count - 1
        );
    }
    let mut passed = listenfd::ListenFd::from_env();
    let listener = passed
        .take_tcp_listener(0)
        .map_err(InheritError::NotTcp)?
        .ok_or_else(|| {
            InheritError::NotTcp(std::io::Error::other("descriptor 3 was already taken"))
        })?;
    match socket2::SockRef::from(&listener).is_listener() {
        Ok(true) => {}
        Ok(false) => return Err(InheritError::NotListening),
        Err(e) => return Err(InheritError::NotTcp(e)),
    }
    let bound = listener.local_addr().map_err(InheritError::NotTcp)?;
    if bound != address {
        return Err(InheritError::Elsewhere { bound, address });
    }
    listener
        .set_nonblocking(true)
        .map_err(InheritError::NotTcp)?;
    let listener = tokio::net::TcpListener::from_std(listener).map_err(InheritError::NotTcp)?;
    Ok(Some(listener))
}

const LISTEN_FDS: &str = "LISTEN_FDS";
const LISTEN_PID: &str = "LISTEN_PID";
const LISTEN_FDS_FIRST_FD: &str = "LISTEN_FDS_FIRST_FD";

/// Why an inherited socket cannot be served on.
#[derive(Debug, thiserror::Error)]
pub enum InheritError {
    /// `LISTEN_FDS` is not a number.
    #[error("LISTEN_FDS is {0:?}, not a number of sockets: unset it, or let systemd set it")]
    Count(String),
    /// `LISTEN_FDS_FIRST_FD` names another descriptor than 3.
    #[error(
        "LISTEN_FDS_FIRST_FD is {0:?}: that variable is not part of systemd's protocol and serve does not honour it (the first socket is always descriptor 3): unset it and pass the socket on descriptor 3"
    )]
    FirstFd(String),
    /// Descriptor 3 is not a TCP stream socket.
    #[error(
        "the socket passed in LISTEN_FDS is not a listening TCP socket: {0}; pass a stream socket (ListenStream=) or none"
    )]
    NotTcp(#[source] std::io::Error),
    /// Descriptor 3 is a TCP socket that was bound but never listened on.
    #[error(
        "the socket passed in LISTEN_FDS is bound but not listening (listen(2) was never called on it), so every accept would fail: pass a listening socket (a .socket unit does), or none"
    )]
    NotListening,
    /// It listens on another address than `127.0.0.1:<http.port>`.
    #[error(
        "the socket passed in LISTEN_FDS listens on {bound}, but serve listens only on {address} (loopback and http.port): set ListenStream={address} in the .socket unit"
    )]
    Elsewhere {
        /// Where the passed socket listens.
        bound: std::net::SocketAddr,
        /// Where `serve` listens: `127.0.0.1:<http.port>`.
        address: std::net::SocketAddr,
    },
}

/// Listens on `address` (the loopback port `serve` binds).
pub fn listen(address: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// The one MCP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// Authenticated requests in flight at once; more queue behind them.
const MAX_IN_FLIGHT: usize = 256;

/// The whole HTTP surface: every request crosses the same steps, in one
/// service (no router, no middleware boxes: each would cost allocations on
/// every call).
pub(super) struct Front {
    refusals: refusals::RefusalLog,
    gate: gate::Gate,
    tools: Arc<Tools>,
    /// Requests past the gate and the body read, in flight at once.
    in_flight: Semaphore,
    mcp: StreamableHttpService<HerdrServer, LocalSessionManager>,
}

impl Front {
    pub(super) fn new(
        tools: Arc<Tools>,
        endpoint: &HttpEndpoint,
        stop: CancellationToken,
    ) -> Front {
        // Host and Origin are enforced once, by the gate, before
        // authentication (spec order); rmcp's own checks are turned off so
        // they cannot disagree.
        let mcp_config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .disable_allowed_hosts()
            .disable_allowed_origins()
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            .with_cancellation_token(stop);
        let server_tools = Arc::clone(&tools);
        let mcp = StreamableHttpService::new(
            move || Ok(HerdrServer::new(Arc::clone(&server_tools))),
            Arc::new(LocalSessionManager::default()),
            mcp_config,
        );
        Front {
            refusals: refusals::RefusalLog::default(),
            gate: gate::Gate::new(&endpoint.config, endpoint.auth.clone()),
            tools,
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
            mcp,
        }
    }

    /// One request, through the steps the module's head lists.
    pub(super) async fn serve(&self, request: Request) -> Response {
        let mut response = refusals::log(&self.refusals, request, |request| {
            gate::gate(&self.gate, request, |request| {
                body::buffer(&self.tools, request, |request| self.route(request))
            })
        })
        .await;
        response
            .headers_mut()
            .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
        response
    }

    /// `/mcp` to rmcp's service, everything else 404, at most
    /// [`MAX_IN_FLIGHT`] at once (the rest wait their turn).
    async fn route(&self, request: Request) -> Response {
        let _permit = self.in_flight.acquire().await;
        if request.uri().path() == MCP_PATH {
            self.mcp.handle(request).await.map(Body::new)
        } else {
            not_found()
        }
    }
}

/// Refusals end their connection: a client that was refused starts afresh,
/// and a refused socket does not keep a slot.
const CLOSING: [StatusCode; 10] = [
    StatusCode::BAD_REQUEST,
    StatusCode::UNAUTHORIZED,
    StatusCode::FORBIDDEN,
    StatusCode::NOT_FOUND,
    StatusCode::METHOD_NOT_ALLOWED,
    StatusCode::REQUEST_TIMEOUT,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
    StatusCode::TOO_MANY_REQUESTS,
    StatusCode::SERVICE_UNAVAILABLE,
];

/// Every response on its way out: `Connection: close` on refusals, and a
/// 413 (whoever answered it) says in JSON-RPC which limit was hit.
fn finish_response(mut response: Response) -> Response {
    let status = response.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        response = too_large();
    }
    if CLOSING.contains(&status) {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Any path but `/mcp` (a trailing slash included): a short body names the
/// endpoint, for whoever reads the 404.
fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        format!("Not found: the MCP endpoint of this server is {MCP_PATH}.\n"),
    )
        .into_response()
}

fn too_large() -> Response {
    let message = format!(
        "Request body over {MAX_BODY_BYTES} bytes: send fewer characters. A prompt may have up to 16,000 characters, but a client that escapes non-ASCII characters as \\uXXXX (6 to 12 bytes each) reaches this limit with fewer."
    );
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32600, "message": message},
    });
    (
        StatusCode::PAYLOAD_TOO_LARGE,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body.to_string(),
    )
        .into_response()
}
