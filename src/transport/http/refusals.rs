//! Every refusal the HTTP transport answers (401, 403, 404, 413, 429) is
//! logged at info with its reason (the gate's own words when it gave
//! some: why a token was refused, never the token or a claim) and the request's `Host`, `Origin` and
//! path, escaped (never the `Authorization` header), so a misconfigured
//! proxy or port shows up in the log. A flood cannot fill the log: beyond a
//! few lines per second the rest are counted and the count is logged with
//! the next line that gets through.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::header::{CONNECTION, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderValue, StatusCode};

use crate::escape::printable;
use crate::transport::MAX_MESSAGE_BYTES;

/// Denial lines logged per second at most (and in one burst).
const LINES_PER_SECOND: u32 = 5;
const BURST: u32 = 20;

pub(super) struct RefusalLog {
    limiter: DefaultDirectRateLimiter,
    suppressed: AtomicU64,
}

impl Default for RefusalLog {
    fn default() -> RefusalLog {
        let quota = Quota::per_second(NonZeroU32::new(LINES_PER_SECOND).expect("non-zero"))
            .allow_burst(NonZeroU32::new(BURST).expect("non-zero"));
        RefusalLog {
            limiter: RateLimiter::direct(quota),
            suppressed: AtomicU64::new(0),
        }
    }
}

/// Why a status is a refusal worth a line.
fn reason(status: StatusCode) -> Option<&'static str> {
    Some(match status {
        StatusCode::UNAUTHORIZED => "no valid bearer token",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "no such path (the endpoint is /mcp)",
        StatusCode::PAYLOAD_TOO_LARGE => "body over 64 KiB",
        StatusCode::TOO_MANY_REQUESTS => "request rate limit",
        _ => return None,
    })
}

/// A header's value, escaped, or `-`.
fn shown(value: Option<&HeaderValue>) -> String {
    value
        .map(|v| printable(&String::from_utf8_lossy(v.as_bytes())).into_owned())
        .unwrap_or_else(|| "-".to_owned())
}

/// Middleware, outermost: passes the request on, finishes the response
/// (see [`finish_response`]), and logs it if it is a refusal. What a log line needs is
/// kept as it came (cheap clones) and rendered only for a refusal.
pub(super) async fn log<F: Future<Output = Response>>(
    log: &RefusalLog,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let host = request.headers().get(HOST).cloned();
    let origin = request.headers().get(ORIGIN).cloned();
    let uri = request.uri().clone();
    let method = request.method().clone();
    let response = finish_response(next(request).await);
    let status = response.status();
    let because = response
        .extensions()
        .get::<super::challenges::RefusedBecause>()
        .map(|b| b.0.as_str());
    if let Some(reason) = because.or_else(|| reason(status)) {
        if log.limiter.check().is_ok() {
            let suppressed = log.suppressed.swap(0, Ordering::Relaxed);
            tracing::info!(
                status = status.as_u16(),
                %method,
                path = %printable(uri.path()),
                host = %shown(host.as_ref()),
                origin = %shown(origin.as_ref()),
                suppressed_since_last = suppressed,
                "HTTP request refused: {reason}"
            );
        } else {
            log.suppressed.fetch_add(1, Ordering::Relaxed);
        }
    }
    response
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

fn too_large() -> Response {
    let message = format!(
        "Request body over {MAX_MESSAGE_BYTES} bytes: send fewer characters. A prompt may have up to 16,000 characters, but a client that escapes non-ASCII characters as \\uXXXX (6 to 12 bytes each) reaches this limit with fewer."
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
