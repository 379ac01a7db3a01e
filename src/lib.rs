//! herdr-core-mcp: lets MCP hosts see and prompt the existing terminals of a
//! local herdr-core (hc) 0.1.15, and nothing more.
//!
//! Module map, from the socket outwards:
//! - [`hc`]: the core client (wire types, one connection, the pool, typed calls);
//! - [`config`]: the operator's JSON config, validated into a [`config::Config`];
//! - [`inspect`]: the read-only `inspect-core` probe;
//! - [`cli`]: the command line.

pub mod app;
pub mod audit;
pub mod cli;
pub mod config;
pub mod hc;
pub mod inspect;
pub mod logging;
pub mod serve;
pub mod tools;
pub mod transport;
