//! Who an HTTP request comes from. Only the HTTP transport authenticates:
//! stdio's caller is the host that launched the process.
//!
//! - [`tokens`]: `HERDR_MCP_TOKEN` and `HERDR_MCP_READ_TOKEN`, kept as
//!   digests and compared in constant time (`http.auth` `token`, the
//!   default);
//! - [`oauth`]: access tokens of the operator's identity provider, checked
//!   as a resource server (`http.auth` `oauth`).

pub(crate) mod oauth;
pub(crate) mod tokens;

use std::sync::Arc;

use tokens::BearerToken;

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
