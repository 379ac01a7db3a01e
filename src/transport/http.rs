//! MCP Streamable HTTP on 127.0.0.1, stateless, at exactly `/mcp`.
//!
//! Every request crosses the gate in this order: `Host` and `Origin` (403),
//! the two unauthenticated well-known answers (404, no challenge), bearer
//! authentication (401 + `WWW-Authenticate: Bearer`), the request rate
//! limit (429), then the body: a declared length over 64 KiB is refused
//! (413) before anything is read, and any body is read whole by the gate
//! within the body timeout (408) and the same 64 KiB cap (413, also when
//! chunked; 400 for broken framing) before routing. Behind the gate: a
//! concurrency limit; the accept loop caps connections and the header read
//! time.

use std::net::{Ipv4Addr, SocketAddr};
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::header::{AUTHORIZATION, CACHE_CONTROL, CONTENT_LENGTH, HOST, ORIGIN, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tower::limit::ConcurrencyLimitLayer;

use super::auth::BearerToken;
use crate::app::App;
use crate::cli::Failure;
use crate::config::HttpConfig;
use crate::tools::HerdrServer;

/// The one MCP endpoint.
pub const MCP_PATH: &str = "/mcp";
/// The protected-resource metadata paths: answered 404 without a challenge,
/// because this server is not an OAuth resource server.
const WELL_KNOWN_PATHS: [&str; 2] = [
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
];
/// Largest request body: a prompt is at most 16,000 characters (64 KiB of
/// UTF-8 at worst, JSON escapes aside); anything bigger is not a tool call.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// Open connections accepted at once; more wait in the listen backlog.
/// Bounds memory under a flood whatever the requests carry.
const MAX_CONNECTIONS: usize = 512;
/// Authenticated requests in flight at once; more queue behind them.
const MAX_IN_FLIGHT: usize = 256;
/// Sustained authenticated requests per second (burst the same): a backstop
/// against a runaway client loop, far above any coordinator's real pace and
/// above what the adapter itself serves on a small machine (about 12,000
/// calls/s on 2 cores), so it never caps legitimate load.
const REQUESTS_PER_SECOND: u32 = 20_000;
/// A client gets this long to send its request headers (slowloris guard).
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// And this long to send its body.
const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// In-flight requests get this long to finish after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Binds 127.0.0.1:`http.port` (there is no other address) and serves.
pub async fn serve(
    app: Arc<App>,
    http: &HttpConfig,
    token: BearerToken,
    shutdown: impl Future<Output = ()>,
) -> Result<(), Failure> {
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, http.port));
    let listener = TcpListener::bind(address).await.map_err(|e| {
        Failure::Runtime(format!(
            "cannot listen on {address}: {e}; pick another http.port or stop what uses it"
        ))
    })?;
    tracing::info!(%address, path = MCP_PATH, "serving MCP over HTTP");
    run(listener, app, http, token, shutdown).await;
    Ok(())
}

/// Serves on an already bound listener until `shutdown`.
pub async fn run(
    listener: TcpListener,
    app: Arc<App>,
    http: &HttpConfig,
    token: BearerToken,
    shutdown: impl Future<Output = ()>,
) {
    let stop = CancellationToken::new();
    let router = router(app, http, token, stop.child_token());
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let graceful = GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            permit = Arc::clone(&connections).acquire_owned() => permit.expect("never closed"),
            () = &mut shutdown => break,
        };
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = TowerToHyperService::new(router.clone());
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(HEADER_READ_TIMEOUT)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            let _ = connection.await;
            drop(permit);
        });
    }
    stop.cancel();
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("some HTTP requests were still running at shutdown");
    }
    tracing::info!("HTTP server stopped");
}

/// The whole HTTP surface: gate, limits and the exact `/mcp` route.
pub fn router(
    app: Arc<App>,
    http: &HttpConfig,
    token: BearerToken,
    stop: CancellationToken,
) -> Router {
    let mcp_config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_allowed_hosts(http.allowed_hosts.clone())
        .with_allowed_origins(http.allowed_origins.clone())
        .enforce_origin_validation()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop);
    let mcp = StreamableHttpService::new(
        move || Ok(HerdrServer::new(Arc::clone(&app))),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let gate = Arc::new(Gate {
        allowed_hosts: http.allowed_hosts.clone(),
        allowed_origins: http.allowed_origins.clone(),
        token,
        limiter: RateLimiter::direct(Quota::per_second(
            NonZeroU32::new(REQUESTS_PER_SECOND).expect("non-zero rate"),
        )),
    });
    Router::new()
        .route_service(MCP_PATH, mcp)
        .fallback(|| async { StatusCode::NOT_FOUND })
        .layer(ConcurrencyLimitLayer::new(MAX_IN_FLIGHT))
        .layer(middleware::from_fn_with_state(gate, gate_request))
}

struct Gate {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    token: BearerToken,
    limiter: DefaultDirectRateLimiter,
}

async fn gate_request(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let checked = match gate.check(&request) {
        Ok(()) => read_body(request).await,
        Err(refusal) => Err(refusal),
    };
    let mut response = match checked {
        Ok(request) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    };
    response
        .headers_mut()
        .insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

impl Gate {
    /// The checks before routing, in the documented order.
    fn check(&self, request: &Request) -> Result<(), Refusal> {
        if !self.host_and_origin_allowed(request) {
            return Err(Refusal::Forbidden);
        }
        if is_well_known(request) {
            return Err(Refusal::NotFound);
        }
        if !self.authenticated(request.headers()) {
            return Err(Refusal::Unauthorized);
        }
        if declared_too_large(request.headers()) {
            return Err(Refusal::PayloadTooLarge);
        }
        if self.limiter.check().is_err() {
            return Err(Refusal::TooManyRequests);
        }
        Ok(())
    }

    /// Exactly one `Host`, listed verbatim; no other authority in the
    /// request line; `Origin` absent or exactly one listed value.
    fn host_and_origin_allowed(&self, request: &Request) -> bool {
        let headers = request.headers();
        let Some(host) = single(headers, HOST) else {
            return false;
        };
        if !self
            .allowed_hosts
            .iter()
            .any(|h| h.as_bytes() == host.as_bytes())
        {
            return false;
        }
        if let Some(authority) = request.uri().authority()
            && authority.as_str().as_bytes() != host.as_bytes()
        {
            return false;
        }
        match headers.get_all(ORIGIN).iter().count() {
            0 => true,
            1 => {
                let origin = headers.get(ORIGIN).expect("counted one").as_bytes();
                self.allowed_origins.iter().any(|o| o.as_bytes() == origin)
            }
            _ => false,
        }
    }

    /// Exactly one `Authorization: Bearer <token>` header with the right token.
    fn authenticated(&self, headers: &HeaderMap) -> bool {
        let Some(value) = single(headers, AUTHORIZATION) else {
            return false;
        };
        let value = value.as_bytes();
        const SCHEME: &[u8] = b"bearer ";
        if value.len() <= SCHEME.len() || !value[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
            return false;
        }
        let presented = &value[SCHEME.len()..];
        self.token.matches(presented)
    }
}

fn single(headers: &HeaderMap, name: http::header::HeaderName) -> Option<&HeaderValue> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

/// Reads the whole body within [`BODY_READ_TIMEOUT`] and [`MAX_BODY_BYTES`],
/// so a slow or oversized body is answered here (408 / 413 / 400) rather
/// than failing inside the MCP service as a 500.
async fn read_body(request: Request) -> Result<Request, Refusal> {
    let (parts, body) = request.into_parts();
    let limited = Limited::new(body, MAX_BODY_BYTES);
    let bytes = match tokio::time::timeout(BODY_READ_TIMEOUT, limited.collect()).await {
        Err(_) => return Err(Refusal::RequestTimeout),
        Ok(Err(e)) if e.is::<LengthLimitError>() => return Err(Refusal::PayloadTooLarge),
        Ok(Err(_)) => return Err(Refusal::BadRequest),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

/// A declared `Content-Length` over the cap is refused before any of the
/// body is read.
fn declared_too_large(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|len| len > MAX_BODY_BYTES as u64)
}

fn is_well_known(request: &Request) -> bool {
    matches!(*request.method(), Method::GET | Method::HEAD)
        && WELL_KNOWN_PATHS.contains(&request.uri().path())
}

/// What the gate answers instead of routing.
enum Refusal {
    Forbidden,
    NotFound,
    Unauthorized,
    PayloadTooLarge,
    RequestTimeout,
    BadRequest,
    TooManyRequests,
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        let code = match self {
            Refusal::Forbidden => StatusCode::FORBIDDEN,
            Refusal::NotFound => StatusCode::NOT_FOUND,
            Refusal::Unauthorized => StatusCode::UNAUTHORIZED,
            Refusal::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Refusal::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Refusal::BadRequest => StatusCode::BAD_REQUEST,
            Refusal::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
        };
        let mut response = (code, Body::empty()).into_response();
        if let Refusal::Unauthorized = self {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
