//! MCP Streamable HTTP on 127.0.0.1, stateless, at exactly `/mcp`.
//!
//! The layer stack a request crosses, outermost first: `Cache-Control:
//! no-store` on every response (tower-http), `refusals` (each response
//! finished: `Connection: close` on refusals, a JSON-RPC body on 413; and
//! refusals logged), the `gate` (Host/Origin 403,
//! well-known 404, bearer 401, rate 429), the 64 KiB body cap (tower-http,
//! 413 also when chunked), the body read within its deadline (`body`: 408,
//! 413, 400), the concurrency limit, then rmcp's service at `/mcp` and 404
//! for everything else. The accept loop (`server`) keeps unauthenticated
//! connections to their share of slots (`slots`, sized from the open-file
//! limit, which it raises; one descriptor per connection, shared through
//! `socket`) and caps the header read time and size.

mod body;
mod gate;
mod refusals;
mod server;
mod slots;
mod socket;

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONNECTION, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;
use tower::limit::ConcurrencyLimitLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::set_header::SetResponseHeaderLayer;

pub use body::MAX_BODY_BYTES;
pub use server::serve;

use super::HttpEndpoint;
use crate::tools::{HerdrServer, Tools};

/// Connections the kernel may queue for `accept` (capped by
/// `net.core.somaxconn`). While a flood fills the queue, an authorised
/// client's connection is dropped and retried a second later, so it is
/// larger than the usual 128; each queued one waits its turn, so it is not
/// much larger (measured: VALIDATION.md, "Starvation").
const LISTEN_BACKLOG: u32 = 1024;

/// The listening socket `serve` was handed by its parent (the systemd
/// convention: `LISTEN_PID` names this process, `LISTEN_FDS` counts the
/// sockets from descriptor 3), when there is one: socket activation, and
/// how tests hand over a bound port. It must listen on `address` (loopback
/// and `http.port`: there is no other address to serve on).
pub fn inherited(
    address: std::net::SocketAddr,
) -> Result<Option<tokio::net::TcpListener>, InheritError> {
    let mut passed = listenfd::ListenFd::from_env();
    if passed.len() == 0 {
        return Ok(None);
    }
    let Some(listener) = passed.take_tcp_listener(0).map_err(InheritError::NotTcp)? else {
        return Ok(None);
    };
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

/// Why an inherited socket cannot be served on.
#[derive(Debug, thiserror::Error)]
pub enum InheritError {
    /// Descriptor 3 is not a listening TCP socket.
    #[error(
        "the socket passed in LISTEN_FDS is not a listening TCP socket: {0}; pass a stream socket (ListenStream=) or none"
    )]
    NotTcp(#[source] std::io::Error),
    /// It listens on another address than `127.0.0.1:<http.port>`.
    #[error(
        "the socket passed in LISTEN_FDS listens on {bound}, but serve listens only on {address} (loopback and http.port): set ListenStream={address} in the .socket unit"
    )]
    Elsewhere {
        bound: std::net::SocketAddr,
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

/// The whole HTTP surface: gate, limits and the exact `/mcp` route.
fn router(tools: Arc<Tools>, endpoint: &HttpEndpoint, stop: CancellationToken) -> Router {
    // Host and Origin are enforced once, by the gate, before authentication
    // (spec order); rmcp's own checks are turned off so they cannot disagree.
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop);
    let mcp = StreamableHttpService::new(
        move || Ok(HerdrServer::new(Arc::clone(&tools))),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let gate = Arc::new(gate::Gate::new(&endpoint.config, endpoint.auth.clone()));
    Router::new()
        .route_service(MCP_PATH, mcp)
        .fallback(|| async { StatusCode::NOT_FOUND })
        .layer(ConcurrencyLimitLayer::new(MAX_IN_FLIGHT))
        .layer(middleware::from_fn(body::buffer))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(gate, gate::gate))
        .layer(middleware::from_fn_with_state(
            Arc::new(refusals::RefusalLog::default()),
            refusals::log,
        ))
        .layer(SetResponseHeaderLayer::overriding(
            CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
}

/// Refusals end their connection: a client that was refused starts afresh,
/// and a refused socket does not keep a slot.
const CLOSING: [StatusCode; 8] = [
    StatusCode::BAD_REQUEST,
    StatusCode::UNAUTHORIZED,
    StatusCode::FORBIDDEN,
    StatusCode::NOT_FOUND,
    StatusCode::METHOD_NOT_ALLOWED,
    StatusCode::REQUEST_TIMEOUT,
    StatusCode::PAYLOAD_TOO_LARGE,
    StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
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
