//! The gate every HTTP request crosses before routing, in the order of
//! spec section 5: `Host` and `Origin` (403, the one place they are
//! enforced), the two unauthenticated well-known answers (404, no
//! challenge), bearer authentication (401 + `WWW-Authenticate: Bearer`,
//! constant-time through `auth`), then the request rate limit (429). The
//! body is read after the gate, by `body`; a refused request's body is not
//! read at all (see [`gate`]).

use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::header::{AUTHORIZATION, HOST, ORIGIN, WWW_AUTHENTICATE};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};

use super::slots::Slot;
use crate::config::HttpConfig;
use crate::transport::auth::BearerToken;

/// The protected-resource metadata paths: answered 404 without a challenge,
/// because this server is not an OAuth resource server.
const WELL_KNOWN_PATHS: [&str; 2] = [
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
];
/// Sustained authenticated requests per second (burst the same): a backstop
/// against a runaway client loop, far above any coordinator's real pace and
/// above what the adapter itself serves on a small machine (about 12,000
/// calls/s on 2 cores), so it never caps legitimate load.
const REQUESTS_PER_SECOND: u32 = 20_000;

pub struct Gate {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    token: BearerToken,
    limiter: DefaultDirectRateLimiter,
}

impl Gate {
    pub fn new(http: &HttpConfig, token: BearerToken) -> Gate {
        Gate {
            allowed_hosts: http.allowed_hosts().to_vec(),
            allowed_origins: http.allowed_origins().to_vec(),
            token,
            limiter: RateLimiter::direct(Quota::per_second(
                NonZeroU32::new(REQUESTS_PER_SECOND).expect("non-zero rate"),
            )),
        }
    }

    /// The checks before routing, in the documented order.
    fn check(&self, request: &Request) -> Result<(), Denial> {
        if !self.host_and_origin_allowed(request) {
            return Err(Denial::Forbidden);
        }
        if is_well_known(request) {
            return Err(Denial::NotFound);
        }
        if !self.authenticated(request.headers()) {
            return Err(Denial::Unauthorized);
        }
        if self.limiter.check().is_err() {
            return Err(Denial::TooManyRequests);
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
        self.token.matches(&value[SCHEME.len()..])
    }
}

/// The gate as axum middleware.
/// A request that passes proves its connection (see `slots`).
///
/// A refused request is answered at once, without reading its body, and
/// its connection serves nothing more (the refusals carry `Connection:
/// close`); its slot is marked refused, so it is never busy and can be
/// pushed out at any time (issue 19: reading up to 64 KiB for up to 1 s
/// here, slot busy, let 1,200 clients that declare a body and never send
/// it lock out 31 of 32 new authorised connections). Dropping the request
/// leaves the body to hyper, which takes only what already arrived (one
/// read that never waits) and reads nothing more. The socket then closes
/// (or, under a flood, is parked first: see `slots`). A client that sent
/// its whole request reads its refusal: closed with bytes it sent still
/// unread (a body bigger than hyper's first read), the socket sends a
/// reset, but on Linux a reset does not discard a response the client
/// already received. Measured on loopback (`tests/http_flood.rs`): reqwest
/// POSTing `initialize` without a token, each on a fresh connection, read
/// the 401 and its `WWW-Authenticate` 1,000 times of 1,000 with its
/// 150-byte body and 1,000 of 1,000 with a body at the 64 KiB cap.
pub async fn gate(State(gate): State<Arc<Gate>>, request: Request, next: Next) -> Response {
    let slot = request.extensions().get::<Arc<Slot>>().cloned();
    match gate.check(&request) {
        Ok(()) => {
            if let Some(slot) = slot {
                slot.prove();
            }
            next.run(request).await
        }
        Err(refusal) => {
            if let Some(slot) = slot {
                slot.refuse();
            }
            drop(request);
            refusal.into_response()
        }
    }
}

fn single(headers: &HeaderMap, name: HeaderName) -> Option<&HeaderValue> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

fn is_well_known(request: &Request) -> bool {
    matches!(*request.method(), Method::GET | Method::HEAD)
        && WELL_KNOWN_PATHS.contains(&request.uri().path())
}

/// What the gate (and the body reader) answers instead of routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Denial {
    Forbidden,
    NotFound,
    Unauthorized,
    TooManyRequests,
    PayloadTooLarge,
    RequestTimeout,
    BadRequest,
}

impl IntoResponse for Denial {
    fn into_response(self) -> Response {
        let code = match self {
            Denial::Forbidden => StatusCode::FORBIDDEN,
            Denial::NotFound => StatusCode::NOT_FOUND,
            Denial::Unauthorized => StatusCode::UNAUTHORIZED,
            Denial::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Denial::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Denial::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Denial::BadRequest => StatusCode::BAD_REQUEST,
        };
        let mut response = code.into_response();
        if self == Denial::Unauthorized {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        response
    }
}
