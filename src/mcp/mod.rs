//! The MCP surface: the server and its handler, the tools, the prompts
//! and the terminal resources, and who may call what. Everything here
//! reaches hc through the typed client of [`App`](crate::app::App); nothing
//! here sees JSON-RPC to hc, and nothing below imports from here.
//!
//! From the top floor down (each imports only what stands below it):
//! - `server` routes the tools (each tool's description, schema and
//!   annotations, and the parts of the surface each takes) and `handler`
//!   answers the rest of MCP (the tool list a caller may see, prompts,
//!   completion, resources, subscriptions); `prompts/`: the prompts and
//!   completion;
//! - `surface`: what the server's calls share, held by the server, the
//!   handler and the prompts only;
//! - `tools/`: the six tools, each taking the parts it uses;
//!   `resources/`: the terminal resources and the watcher behind their
//!   subscriptions;
//! - `error`: the one error type a model reads; `tracking/`: the `since`
//!   token, what changed after one, and the one shared look at hc per tick
//!   that fleet waits and subscriptions follow;
//! - leaves: `access` (the one tool that writes, the scope rule, the audit
//!   line of a call refused before the tool ran), `schema` and `arguments`
//!   (the tools' JSON Schemas and their arguments at the edge), `seal` (the
//!   key that seals what a client hands back), `session` (a terminal as
//!   the tools show it), `state` (what the surface keeps across calls, as
//!   types), `text` (the words and limits of what the tools show).

pub(crate) mod access;
mod arguments;
mod error;
mod handler;
mod prompts;
mod resources;
mod schema;
pub(crate) mod seal;
mod server;
mod session;
mod state;
mod surface;
pub(crate) mod text;
pub(crate) mod tools;
pub(crate) mod tracking;

pub(crate) use server::{HerdrServer, PROTOCOL_VERSIONS};
