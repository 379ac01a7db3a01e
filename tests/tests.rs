//! The one integration-test binary. Tests that need a core run the bundled
//! hc simulator as a real process on temp sockets. Most run the adapter (or
//! its core client) in-process beside it, through the entry point the
//! binary uses (`support/in_process.rs`: `serve::run` with an injected
//! endpoint); the rest spawn the adapter binary for what only a process
//! shows (subcommands, signals, exit codes, stdout, logs, memory).

// The crate's fence lints are for the library's API; a test or example
// binary has none.
#![allow(
    unreachable_pub,
    missing_docs,
    reason = "a test binary has no API to fence"
)]

mod support;

mod core;
mod http;
mod mcp;
mod oauth;
mod ops;
mod process;
