//! The `http` block: the port (127.0.0.1 only, there is no host setting)
//! and the exact `Host` and `Origin` values the HTTP transport accepts.

use super::auth::{self, HttpAuth};
use super::error::{Invalid, invalid};
use super::raw::RawHttp;

const DEFAULT_HTTP_PORT: u16 = 8765;

/// A validated `http` block; built only by `validate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    port: u16,
    allowed_hosts: Vec<String>,
    allowed_origins: Vec<String>,
    auth: HttpAuth,
}

impl HttpConfig {
    /// The loopback port to listen on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The exact `Host` values accepted.
    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// The exact `Origin` values accepted.
    pub fn allowed_origins(&self) -> &[String] {
        &self.allowed_origins
    }

    /// How callers authenticate: static tokens or the operator's IdP.
    pub fn auth(&self) -> &HttpAuth {
        &self.auth
    }
}

pub(super) fn validate(raw: RawHttp) -> Result<HttpConfig, Invalid> {
    let port = match raw.port {
        None => DEFAULT_HTTP_PORT,
        Some(p) => {
            super::numbers::in_range(&super::numbers::HTTP_PORT, p)?;
            u16::try_from(p).expect("in range")
        }
    };
    let allowed_hosts = raw
        .allowed_hosts
        .unwrap_or_else(|| vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")]);
    if allowed_hosts.is_empty() {
        return Err(invalid(
            "http.allowedHosts",
            "is empty, so every request would be refused: list the Host values clients send, e.g. \"127.0.0.1:8765\"",
        ));
    }
    for (i, host) in allowed_hosts.iter().enumerate() {
        if host.is_empty()
            || host
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '/')
        {
            return Err(invalid(
                format!("http.allowedHosts[{i}]"),
                "must be an exact Host value such as \"127.0.0.1:8765\"",
            ));
        }
    }
    let allowed_origins = raw.allowed_origins.unwrap_or_default();
    for (i, origin) in allowed_origins.iter().enumerate() {
        // An Origin header is only scheme://host[:port]; anything else here
        // could never match and would refuse the client it meant to allow.
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"));
        let shaped = authority.is_some_and(|a| {
            !a.is_empty()
                && !a.contains(['/', '?', '#'])
                && !a.chars().any(|c| c.is_whitespace() || c.is_control())
        });
        if !shaped {
            return Err(invalid(
                format!("http.allowedOrigins[{i}]"),
                "must be an exact origin such as \"https://mcp.example.net\" (scheme, host, optional port; no path)",
            ));
        }
    }
    let auth = auth::validate(raw.auth)?;
    Ok(HttpConfig {
        port,
        allowed_hosts,
        allowed_origins,
        auth,
    })
}
