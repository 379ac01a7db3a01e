//! The MCP surface: the server and its handler, the tools, the prompts
//! and the terminal resources, and who may call what. Everything here
//! reaches hc through the typed client of [`App`](crate::app::App); nothing
//! here sees JSON-RPC to hc, and nothing below imports from here.
//!
//! - `server` routes the tools (each tool's description, schema and
//!   annotations) and `handler` answers the rest of MCP (the tool list a
//!   caller may see, prompts, completion, resources, subscriptions);
//! - `access`: the one tool that writes, the scope rule, and the audit line
//!   of a call refused before the tool runs;
//! - `schema`, `arguments` and `error`: the tools' JSON Schemas, their
//!   arguments at the edge, and the one error type a model reads;
//! - `tools/`: the five tools; `prompts/`: the prompts and completion;
//!   `resources/`: the terminal resources and the watcher behind their
//!   subscriptions; `fleet/`: the `since` token, what changed after one,
//!   and the one shared look at hc per tick that fleet waits and
//!   subscriptions follow; `seal`: the key that seals what a client hands
//!   back (cursors, `since`); `shared`: the state they share; `text`: the
//!   text rules tools and fuzz targets share.

pub(crate) mod access;
mod arguments;
mod error;
pub(crate) mod fleet;
mod handler;
mod prompts;
mod resources;
mod schema;
pub(crate) mod seal;
mod server;
mod shared;
pub(crate) mod text;
pub(crate) mod tools;

pub use resources::watcher::WatchPace;
pub(crate) use server::{HerdrServer, PROTOCOL_VERSIONS};
pub(crate) use shared::Tools;
