//! The transports: the same [`crate::mcp::HerdrServer`] served over stdio
//! or over bearer-authenticated Streamable HTTP. A transport never sees hc.
//!
//! An [`Endpoint`] is what `serve` is handed, already set up: the byte
//! pipes for stdio, or a bound listener with its token for HTTP. So the
//! server can be run in-process on a duplex or on port 0.

mod guard;
pub(crate) mod http;
pub(crate) mod stdio;

use http::HttpEndpoint;
use stdio::Pipes;

/// Largest incoming MCP message, over either transport (an HTTP request's
/// body, a stdio line): a prompt is at most 16,000 characters (64 KiB of
/// UTF-8 at worst, JSON escapes aside); anything bigger is not a tool
/// call.
pub(crate) const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// Where `serve` speaks MCP.
pub enum Endpoint {
    /// One session over a pair of byte streams (the process's stdin and
    /// stdout, or any duplex).
    Stdio(Pipes),
    /// Streamable HTTP on a bound loopback listener.
    Http(HttpEndpoint),
}
