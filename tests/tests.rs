//! The one integration-test binary: every test runs real processes (the
//! bundled hc simulator, the adapter binary) over real sockets.

mod support;

mod approve;
mod core_client;
mod http_transport;
mod inspect_core;
mod lifecycle;
mod stdio_tools;
mod wait_tools;
