//! The whole HTTP surface as one service, [`Front`]: every request crosses
//! the steps the folder's face lists, in that order, and each response is
//! finished here (`Connection: close` on refusals, a JSON-RPC 413).

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderValue, StatusCode};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::body::{self, MCP_PATH};
use super::endpoint::HttpEndpoint;
use super::{gate, refusals};
use crate::mcp::HerdrServer;
use crate::transport::MAX_MESSAGE_BYTES;

/// Authenticated requests in flight at once; more queue behind them.
const MAX_IN_FLIGHT: usize = 256;

/// The whole HTTP surface: every request crosses the same steps, in one
/// service (no router, no middleware boxes: each would cost allocations on
/// every call).
pub(crate) struct Front {
    refusals: refusals::RefusalLog,
    gate: gate::Gate,
    server: HerdrServer,
    /// How long a client gets to send its whole body.
    body_read: Duration,
    /// Requests past the gate and the body read, in flight at once.
    in_flight: Semaphore,
    mcp: StreamableHttpService<HerdrServer, LocalSessionManager>,
}

impl Front {
    pub(super) fn new(
        server: HerdrServer,
        endpoint: &HttpEndpoint,
        body_read: Duration,
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
            .with_max_request_body_bytes(MAX_MESSAGE_BYTES)
            .with_cancellation_token(stop);
        let sessions = server.clone();
        let mcp = StreamableHttpService::new(
            move || Ok(sessions.fresh()),
            Arc::new(LocalSessionManager::default()),
            mcp_config,
        );
        Front {
            refusals: refusals::RefusalLog::default(),
            gate: gate::Gate::new(&endpoint.config, endpoint.auth.clone()),
            server,
            body_read,
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
            mcp,
        }
    }

    /// One request, through the steps the module's head lists.
    pub(super) async fn serve(&self, request: Request) -> Response {
        let mut response = refusals::log(&self.refusals, request, |request| {
            gate::gate(&self.gate, request, |request| {
                body::buffer(&self.server, self.body_read, request, |request| {
                    self.route(request)
                })
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
