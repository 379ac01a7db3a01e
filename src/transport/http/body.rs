//! Reading a request body before it is routed, so a slow, oversized or
//! broken body is answered here (408 / 413 / 400) rather than failing
//! inside the MCP service as a 500.
//!
//! The 64 KiB cap is tower-http's `RequestBodyLimitLayer` (a declared
//! length over it is refused before anything is read; a chunked body is cut
//! off while streaming); this module turns its error into the 413. The
//! deadline is ours: tower-http's body timeout restarts at every frame, so
//! a client dripping a byte at a time would never hit it, and this one
//! bounds the whole body.

use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use http_body_util::{BodyExt, LengthLimitError};

use super::gate::Refusal;

/// Largest request body: a prompt is at most 16,000 characters (64 KiB of
/// UTF-8 at worst, JSON escapes aside); anything bigger is not a tool call.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
/// A client gets this long to send its whole body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads the whole body within [`BODY_READ_TIMEOUT`], then routes.
pub async fn buffer(request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let bytes = match tokio::time::timeout(BODY_READ_TIMEOUT, body.collect()).await {
        Err(_) => return Refusal::RequestTimeout.into_response(),
        Ok(Err(e)) if over_limit(&e) => return Refusal::PayloadTooLarge.into_response(),
        Ok(Err(_)) => return Refusal::BadRequest.into_response(),
        Ok(Ok(collected)) => collected.to_bytes(),
    };
    next.run(Request::from_parts(parts, Body::from(bytes)))
        .await
}

/// Whether a body error is the length limit somewhere in its chain.
fn over_limit(error: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = source {
        if e.is::<LengthLimitError>() {
            return true;
        }
        source = e.source();
    }
    false
}
