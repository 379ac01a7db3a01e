//! Tracking what changed: the `since` token (what an answer saw of each
//! terminal it covered), what changed after one, and the one shared look
//! at hc per tick that fleet waits and resource subscriptions follow.

pub(crate) mod changes;
mod leb128;
pub(crate) mod machines;
pub(crate) mod since;
pub(crate) mod ticker;
