//! What the MCP surface keeps across calls, as types and nothing else: a
//! leaf below both the surface that holds one of each and the tools that
//! use them, so no tool reaches up to the holder for its state.
//!
//! - `matchers`: the matching threads every output wait shares;
//! - `send_locks`: one lock per terminal being sent to;
//! - `confirmations`: the key that seals confirmation questions, and the
//!   questions handed out and not yet answered.

mod confirmations;
mod matchers;
mod send_locks;

pub(crate) use confirmations::{Confirmations, Full, MAX_OUTSTANDING, MAX_OUTSTANDING_PER_CALLER};
pub(crate) use matchers::Matchers;
pub(crate) use send_locks::SendLocks;
