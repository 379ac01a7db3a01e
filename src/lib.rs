//! herdr-core-mcp: lets MCP hosts see and prompt the existing terminals of a
//! local herdr-core (hc) 0.1.15, and nothing more.
//!
//! Module map, from the socket outwards:
//! - [`hc`]: the core client (wire types, one connection, the pool, typed calls);
//! - [`config`]: the operator's JSON config, validated into a [`config::Config`];
//! - [`app`]: what every tool call shares (client, config in force, locks);
//! - [`tools`]: the MCP tools; [`transport`]: stdio and HTTP; [`serve`]: the server's life;
//! - [`audit`]: the content-free send record;
//! - [`inspect`]: the read-only `inspect-core` probe; [`approve`]: `allow` / `revoke`;
//! - [`cli`], [`logging`]: the command line and stderr logging.

pub mod app;
pub mod approve;
pub mod audit;
pub mod cli;
pub mod config;
#[doc(hidden)]
pub mod fuzzing;
pub mod hc;
pub mod inspect;
pub mod logging;
pub mod serve;
pub mod tools;
pub mod transport;
