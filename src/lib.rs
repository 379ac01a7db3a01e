//! herdr-core-mcp: lets MCP hosts see and prompt the existing terminals of a
//! local herdr-core (hc) 0.1.15, and nothing more.
//!
//! Module map, ground floor first; every arrow points down:
//! - [`hc`]: the core client (wire types, framing, one connection, the
//!   pool, typed calls); [`config`]: the operator's JSON config, validated
//!   into a [`config::Config`]; [`escape`]: how untrusted text is printed;
//!   [`logging`]: stderr logging; [`json_keys`]: repeated JSON keys; [`caller`]: who calls, and whether they
//!   may send.
//! - [`app`]: what every call shares below the tools (client, config in
//!   force); [`audit`]: the content-free send record.
//! - [`tools`]: the MCP tools and their own state; [`inspect`]: the
//!   read-only `inspect-core` probe; [`approve`]: `allow` / `revoke`.
//! - [`transport`]: stdio and HTTP; [`serve`]: the server's life.
//! - [`cli`]: the subcommands, their wiring, and exit codes.

pub mod app;
pub mod audit;
pub(crate) mod caller;
pub mod cli;
pub mod config;
pub mod escape;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
pub mod hc;
pub(crate) mod json_keys;
pub mod logging;
pub mod ops;
pub mod serve;
pub mod tools;
pub mod transport;
