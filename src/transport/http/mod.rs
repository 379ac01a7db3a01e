//! MCP Streamable HTTP on 127.0.0.1, stateless, at exactly `/mcp`.
//!
//! The layer stack a request crosses, outermost first: `Cache-Control:
//! no-store` on every response (tower-http), the `gate` (Host/Origin 403,
//! well-known 404, bearer 401, rate 429), the 64 KiB body cap (tower-http,
//! 413 also when chunked), the body read within its deadline (`body`: 408,
//! 413, 400), the concurrency limit, then rmcp's service at `/mcp` and 404
//! for everything else. The accept loop (`server`) caps connections and the
//! header read time.

mod body;
mod gate;
mod server;

use std::sync::Arc;

use axum::Router;
use axum::middleware;
use http::header::CACHE_CONTROL;
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
    let gate = Arc::new(gate::Gate::new(&endpoint.config, endpoint.token.clone()));
    Router::new()
        .route_service(MCP_PATH, mcp)
        .fallback(|| async { StatusCode::NOT_FOUND })
        .layer(ConcurrencyLimitLayer::new(MAX_IN_FLIGHT))
        .layer(middleware::from_fn(body::buffer))
        .layer(RequestBodyLimitLayer::new(MAX_BODY_BYTES))
        .layer(middleware::from_fn_with_state(gate, gate::gate))
        .layer(SetResponseHeaderLayer::overriding(
            CACHE_CONTROL,
            HeaderValue::from_static("no-store"),
        ))
}
