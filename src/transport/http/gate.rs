//! The gate every HTTP request crosses before routing, in the order of
//! spec section 5: `Host` and `Origin` (403, the one place they are
//! enforced), the two unauthenticated well-known answers (the RFC 9728
//! document in oauth mode, 404 in token mode), bearer authentication (401
//! with a `WWW-Authenticate` challenge: constant-time static tokens, or the
//! OAuth resource server), then the request rate limit (429). A request
//! that passes carries its [`Caller`] (and the challenges, for the scope
//! check on the body) to the handlers. The body is read after the gate, by
//! `body`; a refused request's body is not read at all (see [`gate`]).

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;

use axum::extract::Request;
use axum::response::{IntoResponse, Response};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter};
use http::header::{AUTHORIZATION, CONTENT_TYPE, HOST, ORIGIN};
use http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, Uri};

use super::admission::slots::Slot;
use super::challenges::{Challenges, forbidden, retry_later};
use crate::caller::Caller;
use crate::config::HttpConfig;
use crate::transport::http::auth::oauth::Reach;
use crate::transport::http::auth::{Authenticator, Unauthenticated};

/// The protected-resource metadata paths (RFC 9728): the document in oauth
/// mode, 404 without a challenge in token mode.
const WELL_KNOWN_PATHS: [&str; 2] = [
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-protected-resource",
];
/// Sustained authenticated requests per second (burst the same): a backstop
/// against a runaway client loop, far above any coordinator's real pace and
/// above what the adapter itself serves on a small machine (about 12,000
/// calls/s on 2 cores), so it never caps legitimate load.
const REQUESTS_PER_SECOND: u32 = 20_000;

pub(super) struct Gate {
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    auth: Authenticator,
    challenges: Arc<Challenges>,
    limiter: DefaultDirectRateLimiter,
}

impl Gate {
    pub(super) fn new(http: &HttpConfig, auth: Authenticator) -> Gate {
        let challenges = Arc::new(Challenges::new(&auth));
        Gate {
            allowed_hosts: http.allowed_hosts().to_vec(),
            allowed_origins: http.allowed_origins().to_vec(),
            auth,
            challenges,
            limiter: RateLimiter::direct(Quota::per_second(
                NonZeroU32::new(REQUESTS_PER_SECOND).expect("non-zero rate"),
            )),
        }
    }

    /// The checks before routing, in the documented order: the caller, or
    /// the answer instead of routing.
    /// Takes the request's parts, not the request: its body is not `Sync`,
    /// and the check may wait (for the IdP's keys).
    async fn check(
        &self,
        method: &Method,
        uri: &Uri,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
        slot: Option<&Slot>,
    ) -> Result<Caller, Response> {
        if let Some(refusal) = self.host_and_origin_refusal(uri, headers) {
            return Err(refusal);
        }
        if is_well_known(method, uri) {
            return Err(match self.auth.metadata() {
                Some(metadata) => (
                    StatusCode::OK,
                    [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                    metadata.to_owned(),
                )
                    .into_response(),
                None => Denial::NotFound.into_response(),
            });
        }
        let Some(token) = bearer(headers) else {
            return Err(self.challenges.unauthorized(None));
        };
        // A reserve slot takes only what is checked here; a connection
        // waiting on the IdP can be pushed out meanwhile.
        let reach = if slot.is_some_and(Slot::is_reserve) {
            Reach::LocalOnly
        } else {
            Reach::Any
        };
        let waiting = slot.filter(|_| self.auth.may_wait());
        if let Some(slot) = waiting {
            slot.set_waiting_on_idp(true);
        }
        let proved = self.auth.caller(token, peer, reach).await;
        if let Some(slot) = waiting {
            slot.set_waiting_on_idp(false);
        }
        let caller = match proved {
            Ok(caller) => caller,
            Err(Unauthenticated::Invalid(why)) => {
                return Err(self.challenges.unauthorized(Some(&why)));
            }
            Err(Unauthenticated::NoScope) => return Err(self.challenges.insufficient_read()),
            Err(Unauthenticated::Transient(rejection)) => return Err(retry_later(rejection)),
        };
        if self.limiter.check().is_err() {
            return Err(Denial::TooManyRequests.into_response());
        }
        Ok(caller)
    }

    /// Exactly one `Host`, listed verbatim; no other authority in the
    /// request line; `Origin` absent or exactly one listed value.
    fn host_and_origin_refusal(&self, uri: &Uri, headers: &HeaderMap) -> Option<Response> {
        let host_ok = single(headers, HOST).is_some_and(|host| {
            self.allowed_hosts
                .iter()
                .any(|h| h.as_bytes() == host.as_bytes())
                && uri
                    .authority()
                    .is_none_or(|a| a.as_str().as_bytes() == host.as_bytes())
        });
        if !host_ok {
            return Some(forbidden(
                "the Host header is not one this server accepts (http.allowedHosts)",
            ));
        }
        let origin_ok = match headers.get_all(ORIGIN).iter().count() {
            0 => true,
            1 => {
                let origin = headers.get(ORIGIN).expect("counted one").as_bytes();
                self.allowed_origins.iter().any(|o| o.as_bytes() == origin)
            }
            _ => false,
        };
        if !origin_ok {
            return Some(forbidden(
                "the Origin header is not one this server accepts (http.allowedOrigins)",
            ));
        }
        None
    }
}

/// The token of exactly one `Authorization: Bearer <token>` header. Only
/// this header is read: never a query string or a form body.
fn bearer(headers: &HeaderMap) -> Option<&[u8]> {
    let value = single(headers, AUTHORIZATION)?.as_bytes();
    const SCHEME: &[u8] = b"bearer ";
    if value.len() <= SCHEME.len() || !value[..SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
        return None;
    }
    Some(&value[SCHEME.len()..])
}

/// The address a request's connection comes from (the proxy's, behind one).
#[derive(Debug, Clone, Copy)]
pub(super) struct PeerAddr(pub IpAddr);

/// The gate, in front of the body read and the route (`next`).
/// A request that passes proves its connection (see `slots`).
///
/// A refused request is answered at once, without reading its body, and
/// its connection serves nothing more (the refusals carry `Connection:
/// close`); its slot is marked refused, so it is never busy and can be
/// pushed out at any time (measured: reading up to 64 KiB for up to 1 s
/// here, slot busy, let 1,200 clients that declare a body and never send
/// it lock out 31 of 32 new authorised connections). Dropping the request
/// leaves the body to hyper, which takes only what already arrived (one
/// read that never waits) and reads nothing more. The socket then closes
/// (or, under a flood, is parked first: see `slots`). A client that sent
/// its whole request reads its refusal: closed with bytes it sent still
/// unread (a body bigger than hyper's first read), the socket sends a
/// reset, but on Linux a reset does not discard a response the client
/// already received. Measured on loopback (`tests/http/flood.rs`): reqwest
/// POSTing `initialize` without a token, each on a fresh connection, read
/// the 401 and its `WWW-Authenticate` 1,000 times of 1,000 with its
/// 150-byte body and 1,000 of 1,000 with a body at the 64 KiB cap.
pub(super) async fn gate<F: Future<Output = Response>>(
    gate: &Gate,
    request: Request,
    next: impl FnOnce(Request) -> F,
) -> Response {
    let slot = request.extensions().get::<Arc<Slot>>().cloned();
    let peer = request.extensions().get::<PeerAddr>().map(|p| p.0);
    let checked = gate
        .check(
            request.method(),
            request.uri(),
            request.headers(),
            peer,
            slot.as_deref(),
        )
        .await;
    match checked {
        Ok(caller) => {
            if let Some(slot) = slot {
                slot.prove();
            }
            let mut request = request;
            request.extensions_mut().insert(caller);
            request
                .extensions_mut()
                .insert(Arc::clone(&gate.challenges));
            next(request).await
        }
        Err(refusal) => {
            if let Some(slot) = slot {
                slot.refuse();
            }
            drop(request);
            refusal
        }
    }
}

fn single(headers: &HeaderMap, name: HeaderName) -> Option<&HeaderValue> {
    let mut values = headers.get_all(name).iter();
    let first = values.next()?;
    values.next().is_none().then_some(first)
}

fn is_well_known(method: &Method, uri: &Uri) -> bool {
    matches!(*method, Method::GET | Method::HEAD) && WELL_KNOWN_PATHS.contains(&uri.path())
}

/// What the gate (and the body reader) answers instead of routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Denial {
    NotFound,
    TooManyRequests,
    PayloadTooLarge,
    RequestTimeout,
    BadRequest,
}

impl IntoResponse for Denial {
    fn into_response(self) -> Response {
        let code = match self {
            Denial::NotFound => StatusCode::NOT_FOUND,
            Denial::TooManyRequests => StatusCode::TOO_MANY_REQUESTS,
            Denial::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Denial::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            Denial::BadRequest => StatusCode::BAD_REQUEST,
        };
        code.into_response()
    }
}

#[cfg(test)]
mod tests {
    //! `Gate::check` in token mode, one row per rule: the bearer header
    //! (scheme case, empty, other schemes, duplicates), `Host` (listed,
    //! duplicated, or contradicted by the request line), `Origin` (absent,
    //! listed, unlisted, duplicated), and which caller each token proves.

    use std::path::Path;

    use http::header::WWW_AUTHENTICATE;

    use super::*;
    use crate::config::{Config, RawConfig, Transport};
    use crate::transport::http::auth::tokens::BearerToken;

    const FULL: &str = "q3Zk9VbX1mR7tY2uW8pL4nC6sD0fG5hJ";
    const READ: &str = "Hn4Tw8Qz2Lr6Vk0Xp3Mb7Yc1Fd5Gs9Ja";
    const HOST_OK: &str = "127.0.0.1:8765";
    const ORIGIN_OK: &str = "https://app.example.net";

    fn gate() -> Gate {
        let text = format!(
            r#"{{"socketPath": "/run/hc.sock", "transport": "http",
            "http": {{"port": 8765, "allowedHosts": ["{HOST_OK}", "localhost:8765"],
                      "allowedOrigins": ["{ORIGIN_OK}"]}}}}"#
        );
        let path = Path::new("/test/config.json");
        let config = Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap();
        let Transport::Http(http) = config.transport() else {
            panic!("expected http")
        };
        let auth = Authenticator::Tokens {
            full: BearerToken::new(FULL).unwrap(),
            read: Some(BearerToken::new(READ).unwrap()),
        };
        Gate::new(http, auth)
    }

    /// What the gate made of a POST to `uri` with `headers`: the caller's
    /// kind, or the refusal's status, `WWW-Authenticate` header and (for a 401)
    /// what its body tells the client.
    async fn check(uri: &str, headers: &[(HeaderName, &str)]) -> String {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.append(name.clone(), HeaderValue::from_str(value).unwrap());
        }
        let uri: Uri = uri.parse().unwrap();
        match gate().check(&Method::POST, &uri, &map, None, None).await {
            Ok(caller) => {
                let who = serde_json::to_value(caller.who()).unwrap();
                format!(
                    "{} may_send={}",
                    who["kind"].as_str().unwrap(),
                    caller.may_send()
                )
            }
            Err(response) => {
                let status = response.status().as_u16();
                let challenge = response.headers().get(WWW_AUTHENTICATE);
                let challenge = challenge.map_or("-", |v| v.to_str().unwrap()).to_owned();
                let body = axum::body::to_bytes(response.into_body(), 4096).await;
                let body = String::from_utf8(body.unwrap().to_vec()).unwrap();
                // What the client is told: send a token, or this one is refused.
                let told = match body {
                    b if b.starts_with("Unauthorized: send the header") => " (no token)",
                    b if b.starts_with("Unauthorized: the bearer token was refused") => {
                        " (refused)"
                    }
                    _ => "",
                };
                format!("{status} {challenge}{told}")
            }
        }
    }

    /// A request with the allowed Host and `more` headers.
    async fn with_host(more: &[(HeaderName, &str)]) -> String {
        let mut headers = vec![(HOST, HOST_OK)];
        headers.extend_from_slice(more);
        check("/mcp", &headers).await
    }

    const FULL_CALLER: &str = "token may_send=true";
    const NO_TOKEN: &str = "401 Bearer (no token)";
    const REFUSED: &str = "401 Bearer (refused)";

    #[tokio::test]
    async fn the_bearer_scheme_is_case_insensitive_and_the_token_exact() {
        let full = |scheme: &str| format!("{scheme} {FULL}");
        let rows: [(&str, String, &str); 11] = [
            ("Bearer", full("Bearer"), FULL_CALLER),
            ("bearer", full("bearer"), FULL_CALLER),
            ("BEARER", full("BEARER"), FULL_CALLER),
            ("bEaReR", full("bEaReR"), FULL_CALLER),
            ("empty token", "Bearer ".into(), NO_TOKEN),
            ("scheme only", "Bearer".into(), NO_TOKEN),
            ("Basic", format!("Basic {FULL}"), NO_TOKEN),
            ("no space", format!("Bearer{FULL}"), NO_TOKEN),
            ("two spaces", format!("Bearer  {FULL}"), REFUSED),
            ("a wrong token", format!("Bearer {FULL}x"), REFUSED),
            ("empty header", String::new(), NO_TOKEN),
        ];
        for (what, value, expected) in rows {
            assert_eq!(
                with_host(&[(AUTHORIZATION, &value)]).await,
                expected,
                "{what}"
            );
        }
        assert_eq!(with_host(&[]).await, NO_TOKEN, "no Authorization");
    }

    #[tokio::test]
    async fn two_authorization_headers_are_refused_even_if_both_are_valid() {
        let full = format!("Bearer {FULL}");
        let read = format!("Bearer {READ}");
        for (first, second) in [(&full, &full), (&full, &read), (&read, &full)] {
            let got = with_host(&[(AUTHORIZATION, first), (AUTHORIZATION, second)]).await;
            assert_eq!(got, NO_TOKEN, "{first} / {second}");
        }
    }

    #[tokio::test]
    async fn the_read_token_proves_a_reader_and_the_full_one_a_sender() {
        let bearer = |token: &str| format!("Bearer {token}");
        assert_eq!(
            with_host(&[(AUTHORIZATION, &bearer(FULL))]).await,
            FULL_CALLER
        );
        assert_eq!(
            with_host(&[(AUTHORIZATION, &bearer(READ))]).await,
            "read-token may_send=false"
        );
    }

    #[tokio::test]
    async fn host_must_be_one_listed_value_agreeing_with_the_request_line() {
        let auth = format!("Bearer {FULL}");
        let rows: [(&str, &str, Vec<&str>, &str); 8] = [
            ("listed", "/mcp", vec![HOST_OK], FULL_CALLER),
            (
                "the other listed",
                "/mcp",
                vec!["localhost:8765"],
                FULL_CALLER,
            ),
            ("unlisted", "/mcp", vec!["evil.example:8765"], "403 -"),
            ("another port", "/mcp", vec!["127.0.0.1:8766"], "403 -"),
            ("absent", "/mcp", vec![], "403 -"),
            ("two Hosts", "/mcp", vec![HOST_OK, HOST_OK], "403 -"),
            (
                "request line agrees",
                "http://127.0.0.1:8765/mcp",
                vec![HOST_OK],
                FULL_CALLER,
            ),
            (
                "request line names another authority",
                "http://localhost:8765/mcp",
                vec![HOST_OK],
                "403 -",
            ),
        ];
        for (what, uri, hosts, expected) in rows {
            let mut headers: Vec<_> = hosts.into_iter().map(|h| (HOST, h)).collect();
            headers.push((AUTHORIZATION, &auth));
            assert_eq!(check(uri, &headers).await, expected, "{what}");
        }
        // Host is judged before the token: a bad Host without one is 403.
        assert_eq!(check("/mcp", &[(HOST, "evil.example")]).await, "403 -");
    }

    #[tokio::test]
    async fn origin_may_be_absent_or_one_listed_value() {
        let auth = format!("Bearer {FULL}");
        let rows: [(&str, Vec<&str>, &str); 6] = [
            ("absent", vec![], FULL_CALLER),
            ("listed", vec![ORIGIN_OK], FULL_CALLER),
            ("unlisted", vec!["https://evil.example"], "403 -"),
            (
                "listed, other scheme",
                vec!["http://app.example.net"],
                "403 -",
            ),
            ("two, both listed", vec![ORIGIN_OK, ORIGIN_OK], "403 -"),
            ("null", vec!["null"], "403 -"),
        ];
        for (what, origins, expected) in rows {
            let mut headers = vec![(AUTHORIZATION, auth.as_str())];
            headers.extend(origins.into_iter().map(|o| (ORIGIN, o)));
            assert_eq!(with_host(&headers).await, expected, "{what}");
        }
    }
}
