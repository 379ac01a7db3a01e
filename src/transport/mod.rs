//! The transports: the same [`crate::tools::HerdrServer`] served over stdio
//! or over bearer-authenticated Streamable HTTP. A transport never sees hc.

pub mod auth;
pub mod http;
pub mod stdio;
