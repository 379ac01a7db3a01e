//! The transports: the same [`crate::tools::HerdrServer`] served over stdio
//! or over bearer-authenticated Streamable HTTP. A transport never sees hc.
//!
//! An [`Endpoint`] is what `serve` is handed, already set up: the byte
//! pipes for stdio, or a bound listener with its token for HTTP. So the
//! server can be run in-process on a duplex or on port 0.

pub mod auth;
mod guard;
pub mod http;
pub mod oauth;
pub mod stdio;

use crate::config::HttpConfig;
use auth::BearerToken;
use stdio::Pipes;

/// Where `serve` speaks MCP.
pub enum Endpoint {
    /// One session over a pair of byte streams (the process's stdin and
    /// stdout, or any duplex).
    Stdio(Pipes),
    /// Streamable HTTP on a bound loopback listener.
    Http(HttpEndpoint),
}

/// Everything the HTTP transport needs; only this transport authenticates.
pub struct HttpEndpoint {
    pub listener: tokio::net::TcpListener,
    pub config: HttpConfig,
    pub auth: Authenticator,
}

/// How the HTTP transport tells callers apart (`http.auth`).
#[derive(Clone)]
pub enum Authenticator {
    /// `HERDR_MCP_TOKEN` for every tool; `HERDR_MCP_READ_TOKEN`, if set,
    /// for the read tools only.
    Tokens {
        full: BearerToken,
        read: Option<BearerToken>,
    },
    /// Access tokens from the operator's identity provider.
    OAuth(std::sync::Arc<oauth::ResourceServer>),
}
