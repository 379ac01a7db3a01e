//! Who an HTTP request comes from: the [`Authenticator`] answers that one
//! question, for static tokens and OAuth access tokens alike, and every
//! request goes through it once (the gate asks it). Only the HTTP
//! transport authenticates: stdio's caller is the host that launched the
//! process. What a caller may then call is `mcp::access`'s rule.
//!
//! - [`tokens`]: `HERDR_MCP_TOKEN` and `HERDR_MCP_READ_TOKEN`, kept as
//!   digests and compared in constant time (`http.auth` `token`, the
//!   default);
//! - [`oauth`]: access tokens of the operator's identity provider, checked
//!   as a resource server (`http.auth` `oauth`).

pub(crate) mod oauth;
pub(crate) mod tokens;

use std::net::IpAddr;
use std::sync::Arc;

use oauth::{Reach, Rejection, TokenVerdict};
use tokens::BearerToken;

use crate::caller::Caller;

/// How the HTTP transport tells callers apart (`http.auth`).
#[derive(Clone)]
pub enum Authenticator {
    /// `HERDR_MCP_TOKEN` for every tool; `HERDR_MCP_READ_TOKEN`, if set,
    /// for the read tools only.
    Tokens {
        /// The token that may call every tool.
        full: BearerToken,
        /// The token that may call the read tools only.
        read: Option<BearerToken>,
    },
    /// Access tokens from the operator's identity provider.
    OAuth(Arc<oauth::ResourceServer>),
}

/// Why a bearer token proved no caller.
#[derive(Debug)]
pub(crate) enum Unauthenticated {
    /// The token is not valid; why, for the challenge's body.
    Invalid(String),
    /// A valid OAuth token with neither the read nor the send scope.
    NoScope,
    /// The identity provider could not be asked now: try again later.
    Transient(Rejection),
}

impl Authenticator {
    /// Who `token` proves, or why it proves no one. `peer` and `reach`
    /// matter to OAuth only: where the request comes from (the
    /// introspection shares), and whether the identity provider may be
    /// asked (not for a connection on a reserve slot).
    pub(crate) async fn caller(
        &self,
        token: &[u8],
        peer: Option<IpAddr>,
        reach: Reach,
    ) -> Result<Caller, Unauthenticated> {
        match self {
            Authenticator::Tokens { full, read } => {
                if full.matches(token) {
                    Ok(Caller::token())
                } else if read.as_ref().is_some_and(|r| r.matches(token)) {
                    Ok(Caller::read_token())
                } else {
                    Err(Unauthenticated::Invalid(
                        "the bearer token is not valid".to_owned(),
                    ))
                }
            }
            Authenticator::OAuth(server) => {
                let Ok(token) = std::str::from_utf8(token) else {
                    return Err(Unauthenticated::Invalid(
                        "the access token is not ASCII".to_owned(),
                    ));
                };
                match server.authenticate(token, peer, reach).await {
                    Ok(TokenVerdict::Caller(caller)) => Ok(caller),
                    Ok(TokenVerdict::NoScope) => Err(Unauthenticated::NoScope),
                    Err(rejection) if rejection.is_transient() => {
                        Err(Unauthenticated::Transient(rejection))
                    }
                    Err(rejection) => Err(Unauthenticated::Invalid(rejection.to_string())),
                }
            }
        }
    }

    /// Whether proving a caller may wait on the identity provider.
    pub(crate) fn may_wait(&self) -> bool {
        matches!(self, Authenticator::OAuth(_))
    }

    /// The protected-resource metadata (RFC 9728) served unauthenticated,
    /// in OAuth mode; none in token mode.
    pub(crate) fn metadata(&self) -> Option<&str> {
        match self {
            Authenticator::OAuth(server) => Some(server.metadata()),
            Authenticator::Tokens { .. } => None,
        }
    }
}
