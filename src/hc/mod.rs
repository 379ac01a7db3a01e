//! The core client: everything that knows hc's protocol. `wire` is the
//! contract as types, `conn` one framed connection, `pool` the bounded set of
//! connections, `client` the typed calls the rest of the adapter uses.

pub mod client;
pub mod conn;
pub mod error;
pub mod pool;
pub mod wire;

pub use client::{Answer, HcClient, SendError, SendRequest};
pub use error::CoreError;
