//! herdr-core-mcp: lets MCP hosts see and prompt the existing terminals of a
//! local herdr-core (hc) 0.1.15, and nothing more.
//!
//! Two wings over one ground floor; every arrow points down, and the server
//! never imports the toolkit (which uses the server's own token and OAuth
//! checks, so that `doctor` judges as `serve` would):
//! - ground floor: [`hc`], the core client (wire types, framing, one
//!   connection, the pool, typed calls); [`config`], the operator's JSON
//!   config, validated into a [`config::Config`]; [`escape`], how untrusted
//!   text is printed; `files`, reading a file an operator names without
//!   trusting it; [`logging`], stderr logging; `json_keys`, repeated
//!   JSON keys; `caller`, who calls and whether they may send; [`app`], what
//!   every call shares (client, config in force); [`audit`], the
//!   content-free send record.
//! - the server: [`tools`], the MCP tools and their own state;
//!   [`transport`], stdio and HTTP (its authentication and admission
//!   included); [`serve`], the server's life.
//! - the operator's toolkit: [`ops`], `inspect-core`, `allow`/`revoke`,
//!   `doctor`, `reload`, `init`, `status`, each returning its text and its
//!   own error.
//! - [`cli`]: the subcommands, their wiring, and exit codes.
//!
//! Only what the binary, the tests and the fuzz targets use is public; the
//! `[lints]` table of `Cargo.toml` keeps it so.

pub mod app;
pub mod audit;
pub(crate) mod caller;
pub mod cli;
pub mod config;
pub mod escape;
pub(crate) mod files;
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
