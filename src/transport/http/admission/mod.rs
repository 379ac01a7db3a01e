//! Which accepted connections the server keeps: the slots of unproven
//! (not yet authenticated) and proven connections (`slots`), and the one
//! shared descriptor of each connection (`socket`).

pub(crate) mod slots;
pub(crate) mod socket;
