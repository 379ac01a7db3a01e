//! The core client: everything that knows hc's protocol. `wire` is the
//! contract as types, `framing` one line-framed stream with its byte cap,
//! `conn` a handshaken connection, `pool` the bounded set of connections,
//! `client` the typed calls the rest of the adapter uses. Ground floor: it
//! imports nothing of the adapter above it.

pub(crate) mod acceptance;
pub(crate) mod client;
pub(crate) mod conn;
mod core_id;
mod deadline;
pub(crate) mod error;
pub(crate) mod framing;
pub(crate) mod machine_share;
pub(crate) mod pool;
pub(crate) mod share;
pub mod wire;

pub use acceptance::{Acceptance, AcceptedVersion, document_sha256};
pub(crate) use client::MachineListing;
pub use client::{HcClient, Listing, SendError, SendRequest};
pub use core_id::CoreId;
pub use error::CoreError;
