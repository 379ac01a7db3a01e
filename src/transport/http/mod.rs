//! MCP Streamable HTTP on 127.0.0.1, stateless, at exactly `/mcp`.
//!
//! The steps a request crosses, in one service (`Front`), outermost first:
//! `Cache-Control: no-store` on every response, `refusals` (each response
//! finished: `Connection: close` on refusals, a JSON-RPC body on 413; and
//! refusals logged), the `gate` (Host/Origin 403, well-known 404, bearer
//! 401, rate 429), the body read under its 64 KiB cap (413, also when
//! chunked) and within its deadline (`body`: 408, 413, 400), the
//! concurrency limit, then rmcp's service at `/mcp` and 404
//! for everything else. The accept loop (`server`) keeps unauthenticated
//! connections to their share of slots (`slots`, sized from the open-file
//! limit, which it raises; one descriptor per connection, shared through
//! `socket`) and caps the header read time and size.

mod admission;
pub(crate) mod auth;
mod body;
mod challenges;
mod endpoint;
mod front;
mod gate;
mod refusals;
mod server;

pub(crate) use endpoint::InheritError;
pub(crate) use endpoint::inherited;
pub use endpoint::{HttpEndpoint, listen};
pub(crate) use server::serve;
