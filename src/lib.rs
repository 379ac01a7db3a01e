//! herdr-core-mcp: lets MCP hosts see and prompt the existing terminals of a
//! local herdr-core (hc), and nothing more.
//!
//! Two wings over one ground floor; every arrow points down, and the server
//! never imports the toolkit (which uses the server's own token and OAuth
//! checks, so that `doctor` judges as `serve` would):
//! - ground floor: `hc`, the core client (wire types, framing, one
//!   connection, the pool, typed calls); `config`, the operator's JSON
//!   config, validated into a [`Config`]; `escape`, how untrusted text is
//!   printed; `files`, reading a file an operator names without trusting
//!   it; `lock`, the one way a lock is taken; `pace`, the server's clock; `logging`, stderr logging; `json_keys`, repeated JSON keys;
//!   `caller`, who calls and whether they may send; `app`, what every call
//!   shares (client, config in force); `audit`, the content-free send
//!   record.
//! - the server: `mcp`, the MCP surface (the server and its handler, the
//!   tools, prompts and resources, and who may call what); `transport`,
//!   stdio and HTTP (its authentication and admission included); `serve`,
//!   the server's life.
//! - the operator's toolkit: `ops`, `inspect-core`, `allow`/`revoke`,
//!   `doctor`, `reload`, `init`, `status`, each returning its text and its
//!   own error.
//! - `cli`: the subcommands, their wiring, and exit codes.
//!
//! Every module is private. The list below is the crate's one public face:
//! what the binary, the tests, the examples and the fuzz targets use. The
//! workspace's lints (`unreachable_pub`, `missing_docs`) keep everything
//! else the crate's own.

mod app;
mod audit;
mod caller;
mod cli;
mod config;
mod escape;
mod files;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod hc;
mod json_keys;
mod lock;
mod logging;
mod mcp;
mod ops;
mod pace;
mod serve;
mod transport;

// The binary.
pub use cli::{Cli, command as cli_definition, run as run_command, usage_error};
pub use logging::{flush as flush_logs, init as init_logging};

// The core client, and the contract as types (the contract tests read every
// one of them, so the module is public whole).
pub use hc::conn::hello_params;
pub use hc::wire;
pub use hc::{
    Acceptance, AcceptedVersion, CoreError, CoreId, HcClient, Listing, SendError, SendRequest,
    document_sha256,
};

// The config, the app every call shares, and the audit record.
pub use app::App;
pub use audit::Audit;
pub use config::{Approval, Config, HttpAuth, RawConfig, RawHcVersion, Transport};

// How untrusted text is shown.
pub use escape::{is_hazard, printable};

// `serve` on an injected endpoint, as the binary and the in-process tests
// run it.
pub use pace::{Pace, TEST_PACE_ENV};
pub use serve::run as run_server;
pub use transport::Endpoint;
pub use transport::http::auth::Authenticator;
pub use transport::http::auth::oauth::{PER_PEER_PER_SECOND, ResourceServer};
pub use transport::http::auth::tokens::BearerToken;
pub use transport::http::{HttpEndpoint, listen};
pub use transport::stdio::Pipes;

// What the bench measures directly.
pub use mcp::tools::wait_for_output::{LineMatcher, POLL_BUDGET, compile as compile_pattern};

// `inspect-core`'s two renderings, pinned by the tests.
pub use ops::inspect::{render_json as inspect_json, render_table as inspect_table};
