//! The one integration-test binary. Tests that need a core run the bundled
//! hc simulator as a real process on temp sockets. Most run the adapter (or
//! its core client) in-process beside it, through the entry point the
//! binary uses (`support/in_process.rs`: `serve::run` with an injected
//! endpoint); the rest spawn the adapter binary for what only a process
//! shows (subcommands, signals, exit codes, stdout, logs, memory).

// The crate's fence lints are for the library's API; a test or example
// binary has none.
#![allow(unreachable_pub, missing_docs)]

mod support;

mod approve;
mod argument_errors;
mod check_contract;
mod config_safety;
mod contract_document;
mod core_client;
mod fault_matrix;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod generated_files;
mod hardening;
mod http_flood;
mod http_transport;
mod inspect_core;
mod lifecycle;
mod oauth_mode;
mod operator;
mod operator_hardening;
mod operator_pass;
mod output_waits;
mod pattern_costs;
mod real_hc;
mod restarts;
mod send_record;
mod stdio_tools;
pub mod wait_tools;
mod what_users_read;
