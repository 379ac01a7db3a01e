//! What the gate answers instead of routing, in a short body that names
//! the problem (never a secret): the `WWW-Authenticate` challenges of 401
//! and 403 (with the metadata URL and the scope in oauth mode), 403 for a
//! Host or Origin, and 429/503 with `Retry-After` for a token that could
//! not be checked now. Each carries the reason the refusal log gives.

use axum::response::{IntoResponse, Response};
use http::header::{CONTENT_TYPE, RETRY_AFTER, WWW_AUTHENTICATE};
use http::{HeaderValue, StatusCode};

use crate::transport::http::auth::Authenticator;
use crate::transport::http::auth::oauth::Rejection;

/// What a refusal says in the log: the reason, never the token or a claim.
#[derive(Debug, Clone)]
pub(super) struct RefusedBecause(pub String);

/// The `WWW-Authenticate` challenges and the short bodies of 401 and 403:
/// in oauth mode they name the metadata URL and the scope needed (MCP
/// authorization; RFC 6750 section 3), in token mode just the scheme.
pub(super) struct Challenges {
    /// The protected-resource metadata URL (oauth mode).
    metadata_url: Option<String>,
    read_scope: String,
    send_scope: String,
}

impl Challenges {
    pub(super) fn new(auth: &Authenticator) -> Challenges {
        match auth {
            Authenticator::OAuth(server) => Challenges {
                metadata_url: Some(server.config().metadata_url()),
                read_scope: server.config().read_scope().to_owned(),
                send_scope: server.config().send_scope().to_owned(),
            },
            // The read token is the read scope; the full one, the send scope.
            Authenticator::Tokens { .. } => Challenges {
                metadata_url: None,
                read_scope: "herdr.read".to_owned(),
                send_scope: "herdr.send".to_owned(),
            },
        }
    }

    /// 401: no token (`refused` None), or a token refused for `refused`.
    pub(super) fn unauthorized(&self, refused: Option<&str>) -> Response {
        let mut challenge = "Bearer".to_owned();
        let mut fields = Vec::new();
        if let Some(url) = &self.metadata_url {
            fields.push(format!("resource_metadata=\"{url}\""));
            fields.push(format!("scope=\"{}\"", self.read_scope));
        }
        // RFC 6750 section 3 in oauth mode; token mode keeps the bare
        // scheme (its clients are told the token out of band).
        if refused.is_some() && self.metadata_url.is_some() {
            fields.push("error=\"invalid_token\"".to_owned());
        }
        if !fields.is_empty() {
            challenge.push(' ');
            challenge.push_str(&fields.join(", "));
        }
        let (body, because) = match refused {
            None => (
                "Unauthorized: send the header Authorization: Bearer <token>.\n".to_owned(),
                "no bearer token".to_owned(),
            ),
            Some(why) => (
                format!("Unauthorized: the bearer token was refused ({why}).\n"),
                format!("bearer token refused: {why}"),
            ),
        };
        refusal(StatusCode::UNAUTHORIZED, Some(challenge), body, because)
    }

    /// 403 `insufficient_scope` for `send_prompt` without the send scope:
    /// MCP's step-up challenge. Nothing is sent.
    pub(super) fn insufficient_send(&self) -> Response {
        self.insufficient(
            &self.send_scope,
            "send_prompt needs the send scope; this token may only read",
        )
    }

    /// 403 for a valid token that grants none of this server's scopes.
    pub(super) fn insufficient_read(&self) -> Response {
        self.insufficient(
            &self.read_scope,
            "this token grants none of this server's scopes",
        )
    }

    fn insufficient(&self, scope: &str, why: &str) -> Response {
        let mut fields = vec!["error=\"insufficient_scope\"".to_owned()];
        if !scope.is_empty() {
            fields.push(format!("scope=\"{scope}\""));
        }
        if let Some(url) = &self.metadata_url {
            fields.push(format!("resource_metadata=\"{url}\""));
        }
        let body = if scope.is_empty() {
            format!("Forbidden: {why}.\n")
        } else {
            format!("Forbidden: {why} (scope {scope}).\n")
        };
        refusal(
            StatusCode::FORBIDDEN,
            Some(format!("Bearer {}", fields.join(", "))),
            body,
            format!("insufficient scope: {why}"),
        )
    }
}

/// 429 or 503 with `Retry-After`: the token could not be checked now (it
/// says nothing about the token, so the client keeps it and retries).
pub(super) fn retry_later(rejection: Rejection) -> Response {
    let status = if rejection == Rejection::IntrospectionRateLimited {
        StatusCode::TOO_MANY_REQUESTS
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let mut response = refusal(
        status,
        None,
        format!("Not checked now: {rejection}.\n"),
        format!("bearer token not checked: {rejection}"),
    );
    response
        .headers_mut()
        .insert(RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

pub(super) fn forbidden(why: &str) -> Response {
    refusal(
        StatusCode::FORBIDDEN,
        None,
        format!("Forbidden: {why}.\n"),
        why.to_owned(),
    )
}

fn refusal(
    status: StatusCode,
    challenge: Option<String>,
    body: String,
    because: String,
) -> Response {
    let mut response = (
        status,
        [(
            CONTENT_TYPE,
            HeaderValue::from_static("text/plain; charset=utf-8"),
        )],
        body,
    )
        .into_response();
    if let Some(challenge) = challenge {
        let value = HeaderValue::from_str(&challenge).unwrap_or(HeaderValue::from_static("Bearer"));
        response.headers_mut().insert(WWW_AUTHENTICATE, value);
    }
    response.extensions_mut().insert(RefusedBecause(because));
    response
}
