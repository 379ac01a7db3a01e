//! The one integration-test binary: every test runs real processes (the
//! bundled hc simulator, the adapter binary) over real sockets.

mod support;

mod core_client;
mod inspect_core;
mod stdio_tools;
