//! The six tools, one module each, and what only they use: the
//! `list_sessions` cursors and the engine the two waits share. Each takes
//! the parts of the surface it uses, never the whole.

pub(crate) mod cursor;
pub(crate) mod list_machines;
pub(crate) mod list_sessions;
pub(crate) mod read_output;
pub(crate) mod send_prompt;
pub(crate) mod wait;
pub(crate) mod wait_for_output;
pub(crate) mod wait_for_status;
