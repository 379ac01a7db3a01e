//! Fault modes (`--fault KIND[:METHOD]`, control `set_faults`): which faults
//! are on, which apply to a call, and how a reply is delivered under them.
//! A call is always carried out first (a `terminal.send` writes and logs its
//! input), then its reply is rewritten and delivered, or not, as the faults
//! say. The reply itself is built elsewhere (`methods`). By noun:
//! - `kind`: the fault kinds and a configured fault, as named and explained
//!   on the command line.
//! - `plan`: the faults in force, and what they do to one call's reply.
//! - `delivery`: writing a reply the way the plan says.

mod delivery;
mod kind;
mod plan;

pub use delivery::{Delivery, Flow, deliver};
pub use kind::{Fault, FaultKind, long_help};
pub use plan::{FaultSet, Plan};

/// Size of the result string of an `oversized-reply`: far past any sane cap.
const OVERSIZED_REPLY_BYTES: usize = 100 * 1024 * 1024;
/// Bytes per write while streaming an oversized or endless reply.
const STREAM_CHUNK_BYTES: usize = 64 * 1024;
/// Added to a numeric id by `id-mismatch`.
const ID_MISMATCH_OFFSET: i64 = 1000;
/// What the `wrong-*` faults claim instead of the truth.
const WRONG_VERSION: &str = "0.1.14";
const WRONG_GENERATION: u64 = 2;
const WRONG_FRAMING: &str = "json-seq";
